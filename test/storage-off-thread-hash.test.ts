// The worker-thread hashes of the disk store (src/infra/storage/off-thread-hash.ts): the same
// digests as node:crypto over many chunks and interleaved sessions, chunks larger than all the
// slots together (updates wait for slots to come back), chunks left intact for the caller, dropped
// sessions that do not disturb others, a process that exits with no digest pending (the
// workers do not keep it alive), and workers released when no session has been open for a while.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { hashWorkerPool, OffThreadHash, SLOT_BYTES, SLOTS_PER_WORKER } from '../src/infra/storage/off-thread-hash.ts';

describe('off-thread hashes', () => {
  it('match node:crypto for interleaved sessions of many chunks, and leave the chunks intact', async () => {
    const bodies = Array.from({ length: 6 }, (_, i) => crypto.randomBytes(1_000_000 + i * 77_777));
    const sessions = bodies.map((_, i) => new OffThreadHash(i % 2 ? 'sha256' : 'md5'));
    const dropped = new OffThreadHash('md5');
    // Chunks that are views into one larger buffer (as socket reads often are).
    for (let offset = 0; offset < 1_500_000; offset += 65_536) {
      for (const [i, body] of bodies.entries()) {
        if (offset >= body.length) continue;
        const chunk = body.subarray(offset, Math.min(body.length, offset + 65_536));
        const before = Buffer.from(chunk);
        await sessions[i].update(chunk);
        assert.ok(chunk.equals(before), 'the caller keeps its chunk');
      }
      await dropped.update(bodies[0].subarray(0, 10));
    }
    dropped.drop();
    // One update larger than every slot of a worker together, while other sessions update too.
    const large = crypto.randomBytes(3 * SLOTS_PER_WORKER * SLOT_BYTES + 12_345);
    const largeHashes = [new OffThreadHash('sha256'), new OffThreadHash('sha256')];
    await Promise.all(largeHashes.map((h) => h.update(large)));
    for (const h of largeHashes) assert.equal((await h.digest()).toString('hex'), crypto.createHash('sha256').update(large).digest('hex'), 'large update');
    const digests = await Promise.all(sessions.map((s) => s.digest()));
    for (const [i, body] of bodies.entries()) {
      assert.equal(digests[i].toString('hex'), crypto.createHash(i % 2 ? 'sha256' : 'md5').update(body).digest('hex'), `session ${i}`);
    }
    assert.equal((await new OffThreadHash('md5').digest()).toString('hex'), crypto.createHash('md5').digest('hex'), 'empty input');
  });

  it('release a worker once no session has been open for the idle period, and start one again on the next hash', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const md5 = (data: Buffer) => crypto.createHash('md5').update(data).digest('hex');
    hashWorkerPool.setIdleReleaseMs(300);
    try {
      const body = crypto.randomBytes(200_000);
      const first = new OffThreadHash('md5');
      await first.update(body);
      assert.equal((await first.digest()).toString('hex'), md5(body));
      assert.ok(hashWorkerPool.running >= 1);
      // A session left open across the idle period keeps its worker.
      const open = new OffThreadHash('md5');
      await sleep(900);
      await open.update(body);
      assert.equal((await open.digest()).toString('hex'), md5(body), 'a session open through the idle period');
      await sleep(900);
      assert.equal(hashWorkerPool.running, 0, 'every worker released');
      const startedBefore = hashWorkerPool.started;
      const again = new OffThreadHash('sha256');
      await again.update(body);
      assert.equal((await again.digest()).toString('hex'), crypto.createHash('sha256').update(body).digest('hex'), 'a hash after the release');
      assert.equal(hashWorkerPool.started, startedBefore + 1, 'a new worker');
    } finally {
      hashWorkerPool.setIdleReleaseMs(30_000);
    }
  });

  it('do not keep a process alive once no digest is pending', async () => {
    const script = `
      const { OffThreadHash } = await import(${JSON.stringify(new URL('../src/infra/storage/off-thread-hash.ts', import.meta.url).href)});
      const h = new OffThreadHash('md5'); await h.update(Buffer.from('abc'));
      console.log((await h.digest()).toString('hex'));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 30_000 });
    assert.equal(stdout.trim(), crypto.createHash('md5').update('abc').digest('hex'));
  });
});
