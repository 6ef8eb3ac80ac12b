// `npm start`, `worker` and `storage` run the server compiled to JavaScript (tsconfig.build.json,
// scripts/build.ts) on plain Node: no TypeScript loader at run time. Compiled here into a folder
// of its own, started, and called.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { freshDatabaseUrl, tempDir } from './helpers/test-system.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

describe('compiled runtime', () => {
  it('src compiles to dist with .js imports, and serve runs from it without tsx', async () => {
    const out = tempDir('oi-dist-');
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', path.join(out, 'dist'), '--tsBuildInfoFile', path.join(out, 'build.tsbuildinfo')], { cwd: ROOT });
    const main = fs.readFileSync(path.join(out, 'dist', 'main.js'), 'utf8');
    assert.match(main, /from ["']\.\/system\.js["']/, 'relative imports point at .js files');
    assert.doesNotMatch(main, /from ["']\.[^"']*\.ts["']/);

    const dataDir = tempDir();
    // With DATABASE_URL (the PostgreSQL pass runs this file with --split): a database of its own.
    const database = await freshDatabaseUrl();
    // The compiled files import their dependencies from the project's node_modules: link it beside them.
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(out, 'node_modules'));
    const child = spawn(process.execPath, [path.join(out, 'dist', 'main.js'), 'serve'], {
      env: { ...process.env, DATABASE_URL: database?.url ?? '', DATA_DIR: dataDir, INSPECTION_PORT: '0', CLOUD_PORT: '0', STORAGE_PORT: '0', ENGINE: 'exif', LOG_LEVEL: 'warn', NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not ready:\n${output}`)), 60_000);
        child.stdout.on('data', () => {
          const m = /Inspection service: (http:\/\/\S+?)\/v1\//.exec(output);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
        child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
      });
      const openapi = await fetch(`${url}/v1/openapi.json`);
      assert.equal(openapi.status, 200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
      fs.rmSync(out, { recursive: true, force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
    }
  });
});
