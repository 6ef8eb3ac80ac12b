// Server-side secrets (token signing keys, the inspection service's cloud client, the console's API
// key) kept in the service's own schema of the database, so that every process of a deployment —
// API processes behind a load balancer, workers on other machines — signs and verifies with the
// same keys while sharing nothing on disk. Each service has its table (`<schema>.server_secrets`,
// created by its migrations) and reaches it only through this repository.
//
// These are not user secrets (those are stored hashed): a signing key must be usable, so it is
// kept as it is; database access is what protects it, as it protects everything else.
//
// Installations from before kept them in DATA_DIR/secrets: a file found there is imported on first use.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';

export type SecretSchema = 'inspection' | 'cloud';

/** DDL of the table, for each service's migrations. */
export function serverSecretsTableDdl(schema: SecretSchema): string {
  return `create table ${schema}.server_secrets (
    name text primary key,
    value text not null,
    created_at timestamptz not null default now()
  )`;
}

export class ServerSecretRepository {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly schema: SecretSchema,
    /** DATA_DIR of installations that kept secrets in files (imported once); undefined: none. */
    private readonly legacyDataDir?: string,
  ) {}

  /** The secret, created by `create()` when absent; concurrent creators agree on the first one stored. */
  async readOrCreate(name: string, create: () => string | Promise<string>): Promise<string> {
    const found = await this.read(name);
    if (found !== undefined) return found;
    const initial = this.legacyFile(name) ?? (await create());
    await sql`insert into ${sql.table(`${this.schema}.server_secrets`)} (name, value) values (${name}, ${initial}) on conflict (name) do nothing`.execute(this.db);
    return (await this.read(name))!;
  }

  async read(name: string): Promise<string | undefined> {
    const result = await sql<{ value: string }>`select value from ${sql.table(`${this.schema}.server_secrets`)} where name = ${name}`.execute(this.db);
    return result.rows[0]?.value;
  }

  /** Replaces a secret (e.g. the console's API key after it was revoked). */
  async write(name: string, value: string): Promise<void> {
    await sql`insert into ${sql.table(`${this.schema}.server_secrets`)} (name, value) values (${name}, ${value}) on conflict (name) do update set value = excluded.value`.execute(this.db);
  }

  /** 32 random bytes (hex in the table). */
  async key(name: string): Promise<Buffer> {
    return Buffer.from((await this.readOrCreate(name, () => crypto.randomBytes(32).toString('hex'))).trim(), 'hex');
  }

  /** An RSA private key (PKCS#8 PEM in the table), for RS256 tokens. */
  async rsaKey(name: string): Promise<crypto.KeyObject> {
    const pem = await this.readOrCreate(name, () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    return crypto.createPrivateKey(pem);
  }

  private legacyFile(name: string): string | undefined {
    if (!this.legacyDataDir) return undefined;
    try {
      return fs.readFileSync(path.join(this.legacyDataDir, 'secrets', name), 'utf8');
    } catch {
      return undefined;
    }
  }
}
