// Issue 27, finding 12: `worker` serves no cloud API of its own, so without CLOUD_URL its
// inspection jobs called nothing and were retried forever (an inspection stayed in status 3). It
// now refuses to start, naming the variable, as `serve` does for a bad one.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { freshDatabaseUrl, tempDir } from './helpers/test-system.ts';
import { startServerProcess } from './helpers/server-process.ts';

describe('worker configuration', () => {
  const dataDir = tempDir();
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('a worker without CLOUD_URL refuses to start and says why', async () => {
    const database = await freshDatabaseUrl();
    try {
      const refusal = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', CLOUD_URL: '' }, 'worker').then(
        (worker) => {
          worker.child.kill('SIGKILL');
          return assert.fail('the worker started without CLOUD_URL');
        },
        (err: Error) => err.message,
      );
      assert.match(refusal, /exited with 1 before it was ready/);
      assert.match(refusal, /CLOUD_URL must be set for `worker`/);
      assert.doesNotMatch(refusal, /at .*\.ts:\d+/, 'a message, not a stack trace');
    } finally {
      await database?.drop();
    }
  });
});
