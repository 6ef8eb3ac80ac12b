// Server-side keys kept in the data folder (created on first use, readable by the owner only), so
// that every process sharing the folder (server, workers) signs and verifies with the same keys.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

function secretsDir(dataDir: string): string {
  const dir = path.join(dataDir, 'secrets');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Reads the file, or creates it with `create()` atomically (a concurrent creator's file wins). */
export function readOrCreateSecretFile(dataDir: string, name: string, create: () => string): string {
  const file = path.join(secretsDir(dataDir), name);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, create(), { mode: 0o600 });
  try {
    fs.linkSync(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(temp, { force: true });
  }
  return fs.readFileSync(file, 'utf8');
}

/** 32 random bytes, hex-encoded in the file. */
export function readOrCreateKey(dataDir: string, name: string): Buffer {
  return Buffer.from(readOrCreateSecretFile(dataDir, name, () => crypto.randomBytes(32).toString('hex')).trim(), 'hex');
}

/** An RSA key pair (PEM) for RS256 tokens. */
export function readOrCreateRsaKey(dataDir: string, name: string): crypto.KeyObject {
  const pem = readOrCreateSecretFile(dataDir, name, () =>
    crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
  return crypto.createPrivateKey(pem);
}
