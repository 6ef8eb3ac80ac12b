// Upload anchor: a bare node:http server that streams every request body to a file in SINK_DIR
// and answers 200 with an ETag. Two modes:
//   - bare (default): no signature, no payload hash, no checksum, a fixed ETag: the ceiling of
//     receiving the same PutObject requests from the same SDK client onto the same disk;
//   - SINK_VERIFY=1: while streaming to disk it also computes the SHA-256 of the payload (checked
//     against the client's x-amz-content-sha256: a mismatch, or no hex hash to check, is a 400)
//     and the MD5 that S3 answers as the ETag: the ceiling of a store that verifies what it
//     stores, the two hashes every PutObject of the project must compute over every byte. Both
//     hashes run in the stream on this one thread, the way a plain server would do them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.env.SINK_DIR!;
const verify = process.env.SINK_VERIFY === '1';
fs.mkdirSync(dir, { recursive: true });
let n = 0;

function answer(res: http.ServerResponse, status: number, etag?: string): void {
  res.writeHead(status, { ...(etag ? { ETag: etag } : {}), 'Content-Length': 0 });
  res.end();
}

const server = http.createServer((req, res) => {
  const name = (req.url ?? '/').split('?')[0].replace(/[^A-Za-z0-9._-]/g, '_');
  const file = path.join(dir, `${name}.${++n}`);
  if (!verify) {
    pipeline(req, fs.createWriteStream(file)).then(
      () => answer(res, 200, '"00000000000000000000000000000000"'),
      () => answer(res, 500),
    );
    return;
  }
  const expected = req.headers['x-amz-content-sha256'];
  const sha256 = crypto.createHash('sha256');
  const md5 = crypto.createHash('md5');
  pipeline(
    req,
    async function* hash(source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        sha256.update(chunk);
        md5.update(chunk);
        yield chunk;
      }
    },
    fs.createWriteStream(file),
  ).then(
    () => {
      const ok = typeof expected === 'string' && /^[0-9a-f]{64}$/.test(expected) && sha256.digest('hex') === expected;
      answer(res, ok ? 200 : 400, `"${md5.digest('hex')}"`);
    },
    () => answer(res, 500),
  );
});
server.requestTimeout = 0;
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as import('node:net').AddressInfo;
  console.log(`Listening: http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
