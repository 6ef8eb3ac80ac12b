// Command line entry point.
//   serve                 both services, the embedded S3 endpoint and the job workers
//   worker                job workers only (needs DATABASE_URL: PGlite is single-process)
//   admin <command> ...   administration; see `admin help`
import { loadConfig } from './config.ts';
import { startSystem } from './system.ts';
import { runAdmin } from './admin/admin-cli.ts';

// Everything this process creates (data folder, objects, keys, mail) is private to its user.
process.umask(0o077);

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    case 'serve':
    case 'worker': {
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
      return;
    }
    case 'admin':
      process.exitCode = await runAdmin(config, rest);
      return;
    default:
      console.error(`Unknown command "${command}". Commands: serve, worker, admin.`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
