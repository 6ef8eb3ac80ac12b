// Upload anchor: s3rver (npm, a popular S3 emulator on Koa) in its own process, one bucket, files in
// S3RVER_DIR. It checks that the access key exists but does not verify SigV4 signatures or the
// payload hash (s3rver 3.7.1: "V4 signatures have incomplete support"); it computes an MD5 ETag.
import S3rver from 's3rver';

const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: process.env.S3RVER_DIR!,
  configureBuckets: [{ name: process.env.S3RVER_BUCKET ?? 'bench' }],
});
const { address, port } = await server.run();
console.log(`Listening: http://${address}:${port}`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
