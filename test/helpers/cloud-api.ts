// A small HTTP client of the cloud project-processing service for tests: token, JSON calls with
// an expected status, uploads (straight into the object store, or with @aws-sdk/client-s3 in the
// flow test), polling, and a ZIP reader to check the inputs bundle.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import type { TestSystem } from './test-system.ts';

export const CLOUD_UA = 'cloud-tests/1.0 (open-inspection test suite)';

export interface CloudTestClient {
  orgUuid: string;
  orgId: number;
  clientId: string;
  clientSecret: string;
  token: string;
  /** Calls the API; asserts the status when `expect` is given; returns the parsed body (or text). */
  call(method: string, path: string, body?: unknown, options?: { expect?: number; headers?: Record<string, string>; raw?: RequestInit["body"] }): Promise<any>;
  /** Uploads `data` under the project's prefix, straight into the object store; returns the key. */
  put(project: { s3_base_path: string; bucket_name: string }, name: string, data: Buffer): Promise<string>;
  /** Polls the project until `done(project)`; fails after `timeoutMs`. */
  waitFor(id: number, done: (project: any) => boolean, timeoutMs?: number): Promise<any>;
}

/** Credentials of a new client of organization `orgUuid` (a new one by default), as `admin create-cloud-client --org` makes them. */
export async function cloudClient(system: TestSystem, name = 'Org', orgUuid: string = crypto.randomUUID()): Promise<CloudTestClient> {
  const org = await system.cloud.ensureOrganization(name, orgUuid);
  const credentials = await system.cloud.oauth.createClient(org.id, `${name} client`);
  const tokenResponse = await fetch(`${system.urls.cloud}/oauth2/token/`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.clientSecret }),
  });
  assert.equal(tokenResponse.status, 200);
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };

  const call: CloudTestClient['call'] = async (method, path, body, options = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'user-agent': CLOUD_UA, ...options.headers };
    let payload: RequestInit["body"] | undefined = options.raw;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const response = await fetch(path.startsWith('http') ? path : `${system.urls.cloud}${path}`, { method, headers, body: payload });
    const text = await response.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    if (options.expect !== undefined) assert.equal(response.status, options.expect, `${method} ${path}: ${text.slice(0, 2000)}`);
    if (parsed && typeof parsed === 'object') Object.defineProperty(parsed, '$response', { value: response, enumerable: false });
    return parsed;
  };

  return {
    orgUuid,
    orgId: org.id,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    token,
    call,
    async put(project, name, data) {
      const key = `${project.s3_base_path}/${name}`;
      await system.store.putObject(project.bucket_name, key, data);
      return key;
    },
    async waitFor(id, done, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const project = await call('GET', `/project/api/v3/projects/${id}/`, undefined, { expect: 200 });
        if (done(project)) return project;
        if (Date.now() > deadline) assert.fail(`project ${id} did not reach the expected state: ${JSON.stringify(project).slice(0, 1500)}`);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    },
  };
}

export const settled = (p: { public_status: string }) => p.public_status === 'DONE' || p.public_status === 'ERROR';

/** Entries of a ZIP file (central directory), with their decompressed data. */
export function readZip(zip: Buffer): { name: string; data: Buffer }[] {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65535); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  assert.ok(eocd >= 0, 'ZIP end of central directory');
  let count = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || offset === 0xffffffff) {
    const locator = eocd - 20;
    assert.equal(zip.readUInt32LE(locator), 0x07064b50, 'ZIP64 locator');
    const record = Number(zip.readBigUInt64LE(locator + 8));
    count = Number(zip.readBigUInt64LE(record + 32));
    offset = Number(zip.readBigUInt64LE(record + 48));
  }
  const entries: { name: string; data: Buffer }[] = [];
  for (let i = 0; i < count; i++) {
    assert.equal(zip.readUInt32LE(offset), 0x02014b50, 'central directory header');
    const method = zip.readUInt16LE(offset + 10);
    let compressedSize = zip.readUInt32LE(offset + 20);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    let local = zip.readUInt32LE(offset + 42);
    const name = zip.subarray(offset + 46, offset + 46 + nameLength).toString('utf8');
    // ZIP64 extra field (0x0001) carries the sizes/offset that do not fit.
    const extra = zip.subarray(offset + 46 + nameLength, offset + 46 + nameLength + extraLength);
    for (let e = 0; e + 4 <= extra.length; ) {
      const id = extra.readUInt16LE(e);
      const size = extra.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let p = e + 4;
        const uncompressed = zip.readUInt32LE(offset + 24);
        if (uncompressed === 0xffffffff) p += 8;
        if (compressedSize === 0xffffffff) {
          compressedSize = Number(extra.readBigUInt64LE(p));
          p += 8;
        }
        if (local === 0xffffffff) local = Number(extra.readBigUInt64LE(p));
      }
      e += 4 + size;
    }
    const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(dataStart, dataStart + compressedSize);
    entries.push({ name, data: method === 0 ? Buffer.from(raw) : zlib.inflateRawSync(raw) });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
