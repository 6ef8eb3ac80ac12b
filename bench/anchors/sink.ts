// Upload anchor: a bare node:http server that streams every request body to a file in SINK_DIR
// and answers 200 with an ETag. No signature, no payload hash, no checksum: the ceiling of
// receiving the same PutObject requests from the same SDK client onto the same disk.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.env.SINK_DIR!;
fs.mkdirSync(dir, { recursive: true });
let n = 0;
const server = http.createServer((req, res) => {
  const name = (req.url ?? '/').split('?')[0].replace(/[^A-Za-z0-9._-]/g, '_');
  const file = path.join(dir, `${name}.${++n}`);
  pipeline(req, fs.createWriteStream(file)).then(
    () => {
      res.writeHead(200, { ETag: '"00000000000000000000000000000000"', 'Content-Length': 0 });
      res.end();
    },
    () => {
      res.writeHead(500).end();
    },
  );
});
server.requestTimeout = 0;
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as import('node:net').AddressInfo;
  console.log(`Listening: http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
