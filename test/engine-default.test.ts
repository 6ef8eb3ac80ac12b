// The default engine (issue 12): `colmap` where its executable resolves, `exif` elsewhere; the start
// banner names the engine and warns, with the install command, when none reconstructs. Tests build
// their configuration without a PATH and stay on `exif`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { defaultEngineName, engineBanner } from '../src/cloud/processing/engine-default.ts';
import { tempDir, testConfig } from './helpers/test-system.ts';

function fakeColmapIn(dir: string): string {
  const file = path.join(dir, 'colmap');
  fs.writeFileSync(file, '#!/bin/sh\necho "COLMAP 3.8 -- stand-in"\n', { mode: 0o755 });
  return file;
}

describe('default engine (ENGINE unset)', () => {
  it('is colmap when a colmap executable is on the PATH, exif when it is not', () => {
    const withColmap = tempDir('oi-colmap-');
    const without = tempDir('oi-nocolmap-');
    try {
      fakeColmapIn(withColmap);
      fs.writeFileSync(path.join(without, 'colmap'), 'not executable', { mode: 0o644 }); // present but not executable: not found
      assert.equal(loadConfig({ PATH: [without, withColmap].join(path.delimiter) }).engine, 'colmap');
      assert.equal(loadConfig({ PATH: without }).engine, 'exif');
      assert.equal(loadConfig({}).engine, 'exif'); // no PATH at all
      // COLMAP_BINARY as a path is checked as it is; ENGINE still wins over detection.
      assert.equal(loadConfig({ COLMAP_BINARY: path.join(withColmap, 'colmap') }).engine, 'colmap');
      assert.equal(loadConfig({ COLMAP_BINARY: path.join(without, 'colmap'), PATH: withColmap }).engine, 'exif');
      assert.equal(loadConfig({ PATH: withColmap, ENGINE: 'exif' }).engine, 'exif');
    } finally {
      fs.rmSync(withColmap, { recursive: true, force: true });
      fs.rmSync(without, { recursive: true, force: true });
    }
  });

  it('the detection is injectable', () => {
    const seen: [string, string | undefined][] = [];
    const config = loadConfig({ PATH: '/nowhere', COLMAP_BINARY: 'my-colmap' }, (binary, pathVariable) => (seen.push([binary, pathVariable]), true));
    assert.equal(config.engine, 'colmap');
    assert.deepEqual(seen, [['my-colmap', '/nowhere']]);
    assert.equal(defaultEngineName('colmap', '/x', () => false), 'exif');
  });

  it('test systems stay on exif whatever the machine has', () => {
    assert.equal(testConfig('/tmp/x').engine, 'exif');
  });
});

describe('start banner', () => {
  it('names the engine; warns with the install command when none reconstructs', () => {
    const colmap = engineBanner('colmap', []);
    assert.match(colmap.line, /colmap engine/);
    assert.equal(colmap.warning, undefined);
    const exif = engineBanner('exif', []);
    assert.match(exif.line, /exif engine/);
    assert.match(exif.warning ?? '', /apt-get install colmap/);
    assert.equal(engineBanner('exif', ['nodeodm']).warning, undefined);
    assert.match(engineBanner('exif', ['nodeodm']).line, /also offered: nodeodm/);
  });
});
