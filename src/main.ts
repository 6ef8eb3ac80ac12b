// Command line entry point.
//   serve                 both services, the embedded S3 endpoint and the job workers
//   worker                job workers only (needs DATABASE_URL: PGlite is single-process)
//   storage               the embedded S3 endpoint alone, with STS AssumeRole (storage-process.ts)
//   admin <command> ...   administration; see `admin help`
import { checkWorkerConfig, loadConfig } from './config.ts';
import { createLogger, startSystem } from './system.ts';
import { runAdmin } from './admin/admin-cli.ts';
import { engineBanner } from './cloud/processing/engine-default.ts';
import { startStorageProcess } from './infra/storage/storage-process.ts';
import { storageConnectionCaps } from './infra/http/connection-limits.ts';
import { trimMemoryWhenIdle } from './infra/runtime/idle-memory.ts';


// Everything this process creates (data folder, objects, keys, mail) is private to its user.
process.umask(0o077);

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    case 'serve':
    case 'worker': {
      if (command === 'worker') checkWorkerConfig(config);
      const system = await startSystem(config, command);
      let stopping = false;
      const shutdown = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        system.logger.info({ signal }, 'shutting down');
        await system.stop();
        process.exit(0);
      };
      process.on('SIGINT', () => void shutdown('SIGINT'));
      process.on('SIGTERM', () => void shutdown('SIGTERM'));
      if (command === 'serve') {
        console.log(`Inspection service: ${system.urls.inspection}/v1/  (docs: ${system.urls.inspection}/docs)`);
        console.log(`Cloud service:      ${system.urls.cloud}/project/api/v3/  (docs: ${system.urls.cloud}/docs)`);
        console.log(`S3 endpoint:        ${system.urls.storage}`);
      } else {
        console.log('Workers running.');
      }
      // Which engine processes projects; a warning when none reconstructs (engine-default.ts).
      const engines = engineBanner(config.engine, config.engines);
      console.log(engines.line);
      if (engines.warning) system.logger.warn({ engine: config.engine }, engines.warning);
      trimMemoryWhenIdle({ onTrim: (details) => system.logger.debug(details, 'idle: memory-reducing collection') });
      return;
    }
    case 'storage': {
      const logger = createLogger(config).child({ service: 'storage' });
      const storage = await startStorageProcess(
        {
          dataDir: config.dataDir,
          host: config.host,
          port: config.storagePort,
          publicUrl: config.storagePublicUrl,
          bucket: config.storageBucket,
          region: config.storageRegion,
          root: config.storageRoot,
          stsMinDurationSeconds: config.storageStsMinDurationSeconds,
          corsOrigins: config.consoleOrigins,
          multipartExpirySeconds: config.storageMultipartExpirySeconds,
          prefixMaxMultipartUploads: config.storagePrefixMaxMultipartUploads,
          connections: storageConnectionCaps(config),
          headersTimeoutSeconds: config.storageHeadersTimeoutSeconds,
        },
        logger,
      );
      const shutdown = () => void storage.close().then(() => process.exit(0));
      process.on('SIGINT', shutdown);
      process.on('SIGTERM', shutdown);
      console.log(`S3 endpoint (with STS AssumeRole): ${storage.url}  bucket ${config.storageBucket}, region ${config.storageRegion}`);
      console.log(storage.rootFile ? `Root credential: ${storage.rootFile}` : 'Root credential: STORAGE_ROOT_ACCESS_KEY / STORAGE_ROOT_SECRET_KEY');
      trimMemoryWhenIdle({ onTrim: (details) => logger.debug(details, 'idle: memory-reducing collection') });
      return;
    }
    case 'admin':
      process.exitCode = await runAdmin(config, rest);
      return;
    default:
      console.error(`Unknown command "${command}". Commands: serve, worker, storage, admin.`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
