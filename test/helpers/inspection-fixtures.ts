// Shared fixtures of the inspection-service tests: processed inspections, the mail outbox,
// polling, the check that no request answered 5xx, and a minimal ZIP reader.
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { TestAccount, TestSystem } from './test-system.ts';
import { generateDemoImageSet } from '../../scripts/generate-demo-images.ts';

let imageCache: Promise<{ name: string; body: Buffer }[]> | undefined;

/** Three small geotagged JPEGs (generated once per test process). */
export function demoImages(): Promise<{ name: string; body: Buffer }[]> {
  imageCache ??= generateDemoImageSet(3, { latitude: 46.5183, longitude: 6.5619, altitude: 420 }, { width: 320, height: 240 }).then((images) =>
    images.map((i) => ({ name: i.filename, body: i.data })),
  );
  return imageCache;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** An asset and an inspection with the demo images uploaded and registered (status 2). */
export async function uploadedInspection(account: TestAccount, inspectionBody: Record<string, unknown> = {}, assetBody: Record<string, unknown> = {}) {
  const asset = await account.client.createAsset({ name: 'Tower', type: 1, latitude: '46.51830000', longitude: '6.56190000', ...assetBody } as never);
  const inspection = await account.client.createInspection({ asset: asset.id, name: 'Flight', ...inspectionBody });
  const credentials = await account.client.storageCredentials(inspection.id);
  const keys = await account.client.upload(credentials, await demoImages());
  await account.client.register(inspection.id, keys);
  return { asset, inspection, credentials, keys };
}

/** As uploadedInspection, then processed to status 7; with its cameras. */
export async function processedInspection(account: TestAccount, inspectionBody: Record<string, unknown> = {}, assetBody: Record<string, unknown> = {}) {
  const uploaded = await uploadedInspection(account, inspectionBody, assetBody);
  await account.client.process(uploaded.inspection.id);
  const done = await account.client.waitUntilSettled(uploaded.inspection.id, { timeoutMs: 90_000 });
  assert.equal(done.status, 7, `inspection ${uploaded.inspection.id} processed`);
  const cameras = await account.client.cameras(uploaded.inspection.id);
  return { ...uploaded, inspection: done, cameras };
}

export interface Mail {
  file: string;
  to: string;
  subject: string;
  body: string;
}

/** The e-mails written to the outbox (DATA_DIR/mail) so far, oldest first. */
export function outbox(system: TestSystem): Mail[] {
  const dir = path.join(system.dataDir, 'mail');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((file) => {
      const raw = fs.readFileSync(path.join(dir, file), 'utf8');
      const split = raw.indexOf('\n\n');
      const headers = raw.slice(0, split).replace(/\n[ \t]+/g, ' ');
      const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(headers)?.[1]?.trim() ?? '';
      const body = raw.slice(split + 2).replace(/=\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
      return { file, to: header('To'), subject: decodeWords(header('Subject')), body };
    });
}

/** RFC 2047 encoded words (=?UTF-8?Q?...?= and =?UTF-8?B?...?=), as nodemailer writes long or special subjects. */
function decodeWords(text: string): string {
  return text
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, charset: string, encoding: string, data: string) => {
      const bytes =
        encoding.toUpperCase() === 'B'
          ? Buffer.from(data, 'base64')
          : Buffer.from(data.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
      return bytes.toString(charset.toLowerCase() === 'utf-8' ? 'utf8' : 'latin1');
    });
}

/** Backdates an inspection (tests of the 15-day retry rule). */
export async function setCreatedAt(system: TestSystem, inspectionId: number, createdAt: Date): Promise<void> {
  await sql`update inspection.inspections set created_at = ${createdAt.toISOString()} where id = ${inspectionId}`.execute(system.inspection.db);
}

/** Asserts that no request of the test file made the inspection service answer 5xx. */
export function assertNoServerErrors(system: TestSystem): void {
  assert.deepEqual(system.inspection.serverErrors, [], 'no request answered 5xx');
}

/** Entries of a ZIP archive (central directory), with the data of stored (uncompressed) entries. */
export function readZip(zip: Buffer): { name: string; size: number; data: Buffer | undefined }[] {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65535); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  assert.ok(eocd >= 0, 'end of central directory found');
  const count = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  const entries = [];
  for (let n = 0; n < count; n++) {
    assert.equal(zip.readUInt32LE(offset), 0x02014b50, 'central directory header');
    const method = zip.readUInt16LE(offset + 10);
    const compressedSize = zip.readUInt32LE(offset + 20);
    const size = zip.readUInt32LE(offset + 24);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    const localOffset = zip.readUInt32LE(offset + 42);
    const name = zip.subarray(offset + 46, offset + 46 + nameLength).toString('utf8');
    let data: Buffer | undefined;
    if (method === 0) {
      const localNameLength = zip.readUInt16LE(localOffset + 26);
      const localExtraLength = zip.readUInt16LE(localOffset + 28);
      const start = localOffset + 30 + localNameLength + localExtraLength;
      data = zip.subarray(start, start + compressedSize);
    }
    entries.push({ name, size, data });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
