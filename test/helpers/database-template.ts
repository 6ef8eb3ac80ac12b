// A migrated, empty database that test systems copy instead of building their own (issue 41).
// Creating an embedded database (PGlite's initdb, in WebAssembly) and applying both services'
// migrations and pg-boss's schema took ~5 s of CPU per test system on CI's machine kind, for the
// ~100 systems a pass starts; copying a folder (PGlite) or `create database … template` (PostgreSQL)
// takes a fraction of a second. The template is built once per set of migrations, shared by every
// test process of a run and by later runs, and named by a hash of what shapes it (the migration
// files and the DDL they import, and the lock file, which pins PGlite and pg-boss): a changed
// migration gets a new template. A copy still runs the migrations at start (Kysely applies only
// those it has not recorded), and the migration tests build their databases from scratch
// (openTestDatabase), so the migrations themselves stay tested from an empty database.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { openDatabase, type Database } from '../../src/infra/database/database.ts';
import { CloudModule } from '../../src/cloud/cloud.module.ts';
import { InspectionModule } from '../../src/inspection/inspection.module.ts';
import { JobQueue } from '../../src/infra/jobs/job-queue.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The files whose content decides the template: migration files, what they import from src, the lock file. */
function templateSources(): string[] {
  const migrations = fs.readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.migrations.ts') || f.endsWith('migrate.ts'));
  const files = new Set<string>([path.join(ROOT, 'package-lock.json')]);
  for (const relative of migrations) {
    const file = path.join(ROOT, 'src', relative);
    files.add(file);
    for (const [, imported] of fs.readFileSync(file, 'utf8').matchAll(/from '(\.[^']+\.ts)'/g)) files.add(path.resolve(path.dirname(file), imported));
  }
  return [...files].sort();
}

let cachedKey: string | undefined;
function templateKey(): string {
  if (cachedKey) return cachedKey;
  const hash = crypto.createHash('sha256');
  for (const file of templateSources()) hash.update(file).update(fs.readFileSync(file));
  return (cachedKey = hash.digest('hex').slice(0, 16));
}

/** Applies what a server applies at start before it serves: both services' migrations and pg-boss's schema. */
async function migrate(database: Database): Promise<void> {
  await CloudModule.migrate(database.db);
  await InspectionModule.migrate(database.db);
  const jobs = new JobQueue(database, { heartbeatSeconds: 30, logger: pino({ level: 'silent' }) });
  await jobs.start(false);
  await jobs.stop();
}

/** The embedded database's folder to copy (built here the first time); its copy goes to DATA_DIR/pglite. */
export async function pgliteTemplate(): Promise<string> {
  const folder = path.join(os.tmpdir(), `oi-pglite-template-${templateKey()}`);
  if (fs.existsSync(path.join(folder, 'pglite', 'PG_VERSION'))) return path.join(folder, 'pglite');
  forgetOldPgliteTemplates(folder);
  // Built aside and renamed into place: a process that loses the race drops its own copy.
  const building = fs.mkdtempSync(`${folder}.building-`);
  const database = await openDatabase({ dataDir: building });
  try {
    await migrate(database);
  } finally {
    await database.close();
  }
  fs.rmSync(path.join(building, 'data.lock'), { force: true });
  try {
    fs.renameSync(building, folder);
  } catch {
    fs.rmSync(building, { recursive: true, force: true });
  }
  return path.join(folder, 'pglite');
}

/**
 * Removes the templates of other migration sets (~40 MB each) once a day old: every change to a
 * migration makes a new one, and the temporary folder would fill up over a working week. A day, so
 * that a run still using an older checkout's template is not robbed of it.
 */
function forgetOldPgliteTemplates(current: string): void {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of fs.readdirSync(os.tmpdir())) {
    const folder = path.join(os.tmpdir(), name);
    if (!name.startsWith('oi-pglite-template-') || folder === current) continue;
    try {
      if (fs.statSync(folder).mtimeMs < dayAgo) fs.rmSync(folder, { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

/** The name of a PostgreSQL database on `baseUrl`'s server to create test databases from (built here the first time). */
export async function postgresTemplate(baseUrl: string): Promise<string> {
  const name = `oi_template_${templateKey()}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    // One builder per server; the others wait for it and find the template made.
    await admin.query('select pg_advisory_lock(4141041)');
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount) return name;
    const building = `${name}_building`;
    await admin.query(`drop database if exists ${building} with (force)`);
    await admin.query(`create database ${building}`);
    const url = new URL(baseUrl);
    url.pathname = `/${building}`;
    const database = await openDatabase({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'oi-template-')), databaseUrl: url.toString() });
    try {
      await migrate(database);
    } finally {
      await database.close();
    }
    // The pool's connections may still be closing: a rename waits for them (55006: in use).
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`alter database ${building} rename to ${name}`);
        return name;
      } catch (err) {
        if ((err as { code?: string }).code !== '55006' || attempt >= 40) throw err;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } finally {
    await admin.query('select pg_advisory_unlock(4141041)').catch(() => undefined);
    await admin.end();
  }
}
