// The worker-thread hashes of the disk store (src/infra/storage/off-thread-hash.ts): the same
// digests as node:crypto over many chunks and interleaved sessions, chunks larger than all the
// slots together (updates wait for slots to come back), chunks left intact for the caller, dropped
// sessions that do not disturb others, and a process that exits with no digest pending (the
// workers do not keep it alive).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { OffThreadHash, SLOT_BYTES, SLOTS_PER_WORKER } from '../src/infra/storage/off-thread-hash.ts';

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

  it('do not keep a process alive once no digest is pending', async () => {
    const script = `
      const { OffThreadHash } = await import(${JSON.stringify(new URL('../src/infra/storage/off-thread-hash.ts', import.meta.url).href)});
      const h = new OffThreadHash('md5'); await h.update(Buffer.from('abc'));
      console.log((await h.digest()).toString('hex'));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 30_000 });
    assert.equal(stdout.trim(), crypto.createHash('md5').update('abc').digest('hex'));
  });
});
