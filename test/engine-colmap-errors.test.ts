// The colmap engine's failures mapped to the cloud spec's error codes, with a stand-in `colmap`
// executable (a shell script per case) so that no real reconstruction runs: a non-zero exit
// (10410), the out-of-memory killer (SIGKILL, 10003), bad_alloc (10003), a crash (10001), too few
// images registered (10201), too few images (10601), the time limit (10002), a cancel (the child
// is killed), a missing executable (10001). Also: progress parsed from the output, never backwards.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestSystem, tempDir, type TestSystem } from './helpers/test-system.ts';
import { engineInput } from './helpers/engine-input.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { ColmapEngine } from '../src/cloud/processing/colmap/colmap-engine.ts';
import { EngineError, type EngineInput } from '../src/cloud/processing/engine.ts';

describe('colmap engine failures (stand-in colmap executable)', () => {
  let system: TestSystem;
  let scripts: string;
  let images: Buffer[];

  before(async () => {
    system = await startTestSystem();
    scripts = tempDir('oi-fake-colmap-');
    images = await Promise.all([1, 2, 3, 4].map((seed) => generateGeotaggedJpeg({ latitude: 46.5183 + seed * 1e-4, longitude: 6.5619, altitude: 420, seed, width: 160, height: 120 })));
  });
  after(async () => {
    await system?.stop();
    fs.rmSync(scripts, { recursive: true, force: true });
  });

  /** A stand-in colmap: `body` is bash run with the COLMAP command in $1. */
  function fakeColmap(name: string, body: string): string {
    const file = path.join(scripts, name);
    fs.writeFileSync(file, `#!/bin/bash\nif [ "$1" = -h ]; then echo "COLMAP 3.8 -- stand-in"; exit 0; fi\n${body}\n`, { mode: 0o755 });
    return file;
  }

  async function input(count = 4, signal = new AbortController().signal): Promise<EngineInput & { progress: number[] }> {
    const prefix = `colmap-errors/${crypto.randomUUID()}/`;
    const list = [];
    for (let i = 0; i < count; i++) {
      const key = `${prefix}inputs/img${i}.jpg`;
      await system.store.putObject('inspection-data', key, images[i]);
      list.push({ key, size: images[i].length, ok: true as const, width: 160, height: 120, latitude: 46.5183 + (i + 1) * 1e-4, longitude: 6.5619, altitude: 420, make: 'Test', model: 'Cam', focal_length_35mm: 24, captured_at: null, quaternion: null, format: 'jpeg' });
    }
    return engineInput(system.store, prefix, list, signal);
  }

  const engine = (binary: string, timeLimitSeconds = 0) => new ColmapEngine({ binary, workDir: path.join(system.dataDir, 'work'), timeLimitSeconds });
  const rejectsWith = (promise: Promise<unknown>, code: number, pattern: RegExp) =>
    assert.rejects(promise, (err) => {
      assert.ok(err instanceof EngineError, String(err));
      assert.equal(err.errorCode, code, err.reason);
      assert.match(err.reason, pattern);
      return true;
    });

  it('a COLMAP command exiting with an error: 10410 with its last error line; the log is kept', async () => {
    const bin = fakeColmap('exit1', 'if [ "$1" = exhaustive_matcher ]; then echo "ERROR: the database is locked" >&2; exit 1; fi\nif [ "$1" = feature_extractor ]; then echo "Processed file [1/4]"; echo "Processed file [4/4]"; fi\nexit 0');
    const run = await input();
    await rejectsWith(engine(bin).run(run), 10410, /during matching.*code 1.*database is locked/);
    const { body } = await system.store.getObject('inspection-data', `${run.outputPrefix}processing_log.txt`);
    let log = '';
    for await (const chunk of body) log += chunk.toString();
    assert.match(log, /\$ .*exit1 feature_extractor .*--ImageReader.camera_params 106\.667,80,60,0/);
    assert.match(log, /database is locked/);
    assert.ok(run.progress.includes(25), `feature extraction progress parsed from "Processed file [4/4]": ${run.progress}`);
    assert.ok(run.progress.every((p, i) => i === 0 || p >= run.progress[i - 1]));
  });

  it('killed by SIGKILL (the out-of-memory killer), or bad_alloc: 10003', async () => {
    await rejectsWith(engine(fakeColmap('oom', 'kill -9 $$')).run(await input()), 10003, /memory during feature extraction/);
    await rejectsWith(engine(fakeColmap('badalloc', 'echo "terminate called after throwing an instance of \'std::bad_alloc\'" >&2; kill -6 $$')).run(await input()), 10003, /memory/);
  });

  it('a mapper that builds no model (exit 1, no initial pair) is tried again with other seeds, then 10201', async () => {
    const bin = fakeColmap('nopair', 'if [ "$1" = mapper ]; then echo "$@" >> "$(dirname "$0")/nopair.calls"; echo "ERROR: failed to create sparse model" >&2; exit 1; fi\nexit 0');
    const run = await input();
    await rejectsWith(engine(bin).run(run), 10201, /0 of 4 images.*at least 3/);
    const calls = fs.readFileSync(path.join(path.dirname(bin), 'nopair.calls'), 'utf8').trim().split('\n');
    assert.equal(calls.length, 6, 'every mapper attempt runs, and three more because none built a model');
    assert.deepEqual(calls.map((c) => /--random_seed (\d+)/.exec(c)?.[1] ?? 'default'), ['default', '1', '2', '3', '4', '5']);
    assert.deepEqual(calls.map((c) => c.includes('--Mapper.init_min_tri_angle 8')), [false, true, true, true, true, true], 'attempts after the first relax the initial pair');
    const { body } = await system.store.getObject('inspection-data', `${run.outputPrefix}processing_log.txt`);
    let log = '';
    for await (const chunk of body) log += chunk.toString();
    assert.match(log, /mapper attempt 1: COLMAP built no model \(exit code 1\)/);
  });

  it('a crash (another signal): 10001', async () => {
    await rejectsWith(engine(fakeColmap('segv', 'kill -11 $$')).run(await input()), 10001, /crashed during feature extraction \(signal SIGSEGV\)/);
  });

  it('too few images registered: 10201; too few images: 10601', async () => {
    await rejectsWith(engine(fakeColmap('nomodel', 'exit 0')).run(await input()), 10201, /0 of 4 images.*at least 3/);
    await rejectsWith(engine(fakeColmap('never', 'exit 0')).run(await input(2)), 10601, /at least 3 images/);
  });

  it('the time limit kills COLMAP: 10002', async () => {
    const started = Date.now();
    await rejectsWith(engine(fakeColmap('slow', 'sleep 30'), 1).run(await input()), 10002, /allotted time of 1 s .*feature extraction/);
    assert.ok(Date.now() - started < 20_000, 'the child was killed, not waited for');
  });

  it('a cancel kills COLMAP and rejects with the reason; the work folder is removed', async () => {
    const controller = new AbortController();
    const marker = path.join(scripts, 'started');
    const run = engine(fakeColmap('hang', `touch ${marker}; sleep 30`)).run(await input(4, controller.signal));
    for (let i = 0; i < 500 && !fs.existsSync(marker); i++) await new Promise((r) => setTimeout(r, 20));
    controller.abort(new Error('canceled by the user'));
    await assert.rejects(run, /canceled by the user/);
    assert.deepEqual(fs.readdirSync(path.join(system.dataDir, 'work')).filter((d) => d.startsWith('colmap-')), []);
  });

  it('COLMAP not installed: 10001 naming the package', async () => {
    await rejectsWith(engine(path.join(scripts, 'does-not-exist')).run(await input()), 10001, /not installed.*colmap/);
  });
});
