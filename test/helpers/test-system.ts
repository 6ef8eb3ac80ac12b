// Builds a whole system for a test: its own data folder, ephemeral ports, and, when
// DATABASE_URL is set (CI's second pass), a fresh PostgreSQL database of its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config.ts';
import { startSystem, type System } from '../../src/system.ts';
import { InspectionClient } from '../../src/sdk/inspection-client.ts';
import { openDatabase, type Database } from '../../src/infra/database/database.ts';
import { PGLITE_FOLDER } from '../../src/infra/data-dir.ts';
import { pgliteTemplate, postgresTemplate } from './database-template.ts';

export interface TestSystem extends System {
  dataDir: string;
  /** A fresh organization with a member user and an API key, logged in. */
  newAccount(options?: { projects?: number; towerInventory?: number; organization?: boolean }): Promise<TestAccount>;
}

export interface TestAccount {
  client: InspectionClient;
  username: string;
  password: string;
  apiKey: string;
  organizationUuid: string | undefined;
  organizationId: number | undefined;
  userId: number;
}

/**
 * A fresh PostgreSQL database when DATABASE_URL is set; undefined on PGlite. `migrated`: a copy of
 * the migrated template (database-template.ts), as a test system starts from; else empty.
 */
export async function freshDatabaseUrl(options: { migrated?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const base = process.env.DATABASE_URL;
  if (!base) return undefined;
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const template = options.migrated ? await postgresTemplate(base) : undefined;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      // Connections of the stopped system (pg-boss's listener, pool clients) may still be closing:
      // wait for them rather than killing them, which would surface as errors in this process.
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        for (let attempt = 0; ; attempt++) {
          try {
            await c.query(`drop database if exists ${name}${attempt >= 40 ? ' with (force)' : ''}`);
            return;
          } catch (err) {
            if ((err as { code?: string }).code !== '55006' || attempt >= 40) throw err; // 55006: in use
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        }
      } finally {
        await c.end();
      }
    },
  };
}

/** This run's database alone (no system): PGlite in a fresh folder, or a fresh PostgreSQL database; close() drops it too. */
export async function openTestDatabase(prefix: string): Promise<Database> {
  const fresh = await freshDatabaseUrl();
  const database = await openDatabase({ dataDir: tempDir(prefix), databaseUrl: fresh?.url });
  return {
    ...database,
    async close() {
      await database.close();
      await fresh?.drop();
    },
  };
}

export function tempDir(prefix = 'oi-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function testConfig(dataDir: string, overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    // exif (no reconstruction, seconds) whatever the machine has; a test about reconstruction asks for colmap.
    engine: 'exif',
    dataDir,
    inspectionPort: 0,
    cloudPort: 0,
    storagePort: 0,
    bootstrapDemo: false,
    // The colmap engine's depth maps at 320 px: the dense stages run in the tests (brighton at 800 px,
    // engine-colmap-dense) in minutes instead of the default size's many more (bench/ measures the default).
    denseMaxImageSize: 320,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'warn',
    ...overrides,
  };
}

/** `logger`: where the system logs (tests that read the logs); default pino to stdout at TEST_LOG_LEVEL. */
export async function startTestSystem(overrides: Partial<Config> = {}, logger?: pino.Logger): Promise<TestSystem> {
  const dataDir = tempDir();
  const database = await freshDatabaseUrl({ migrated: true });
  // On PGlite the system opens DATA_DIR/pglite: a copy of the migrated template, not a new initdb.
  if (!database) fs.cpSync(await pgliteTemplate(), path.join(dataDir, PGLITE_FOLDER), { recursive: true });
  const config = testConfig(dataDir, { databaseUrl: database?.url, ...overrides });
  const system = await startSystem(config, 'serve', logger ?? pino({ level: config.logLevel }));
  let accounts = 0;
  return {
    ...system,
    dataDir,
    async stop() {
      await system.stop();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
    async newAccount(options = {}) {
      const admin = system.inspection.accounts;
      const n = ++accounts;
      const username = `user${n}-${crypto.randomBytes(3).toString('hex')}`;
      const password = crypto.randomBytes(12).toString('base64url');
      const user = await admin.createUser(username, password, `${username}@example.test`);
      const apiKey = await admin.createApiKey(`test key ${n}`);
      let organization: { id: number; uuid: string } | undefined;
      if (options.organization !== false) {
        organization = await admin.createOrganization(`Org ${n}`);
        await admin.addMember(user.id, organization.id);
      }
      const account = organization ? { organizationId: organization.id } : { userId: user.id };
      if (options.projects ?? 10) await system.inspection.allowance.grant(account, 'projects', options.projects ?? 10, 'test');
      if (options.towerInventory) await system.inspection.allowance.grant(account, 'tower_inventory', options.towerInventory, 'test');
      const client = new InspectionClient({ baseUrl: system.urls.inspection, apiKey: apiKey.key, organizationUuid: organization?.uuid });
      await client.login(username, password);
      return { client, username, password, apiKey: apiKey.key, organizationUuid: organization?.uuid, organizationId: organization?.id, userId: user.id };
    },
  };
}
