// Fuzz test (issue 10): every operation of both OpenAPI documents, as the running servers publish
// them, gets seeded bad input (test/helpers/fuzz-inputs.ts) with valid and missing credentials,
// path ids of real records, of another organization's and of none. No answer may be a 5xx, and the
// typical flow must still work afterwards. FUZZ_SEED replays a run; FUZZ_REQUESTS sizes it
// (default 3000: 15-90 s of requests on PGlite); FUZZ_CONCURRENCY (4), FUZZ_SKIP (a regular
// expression on "METHOD /path") and FUZZ_VERBOSE help to look into a failure. The file is past
// 350 lines because the setup of real records, the case plan and the sender belong together.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, type CloudTestClient } from './helpers/cloud-api.ts';
import { processedInspection, uploadedInspection } from './helpers/inspection-fixtures.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import {
  Rng, fuzzSeed, sample, targets, badValues, badIds, badQueryValues, rawBodies, setAt, clone, toJson,
  type Schema,
} from './helpers/fuzz-inputs.ts';

const TOTAL = Number(process.env.FUZZ_REQUESTS) || 3000;
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY) || 4;
const RECT = [[0, 0], [0.5, 0], [0.5, 0.5], [0, 0.5]];
const P = '/project/api/v3/projects';
// Operations whose valid calls start slow work (processing, reports, bundles): their bad bodies
// mostly go to a missing record, so that a few valid ones do not queue a run each.
const EXPENSIVE = /\/(process|report|start_processing|retry|zip)\/?$/;
// At most this many cases of a kind per operation (the big ones).
const KIND_CAP: Record<string, number> = { 'huge-string': 1, 'too-large': 1, 'deep-nesting': 2 };

type Service = 'inspection' | 'cloud';
interface Operation {
  service: Service;
  method: string;
  template: string;
  doc: any;
  params: { name: string; in: string; schema: Schema }[];
  body: Schema | undefined;
  /** A method the document does not list for the path (expected: 405). */
  wrong?: boolean;
}
interface Case {
  op: Operation;
  kind: string;
  ids: Record<string, string>;
  query: string;
  auth: Record<string, string> | 'valid';
  contentType?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}
interface Result {
  c: Case;
  status: number | 'timeout' | 'reset';
  text: string;
  url: string;
}

describe('fuzz: every OpenAPI operation with bad input', () => {
  let system: TestSystem;
  let account: TestAccount;
  let api: CloudTestClient;
  const real: Record<string, number | string> = {};
  const victim: Record<string, number | string> = {};
  const foreign: Record<string, number | string> = {};
  let hints: Record<Service, Record<string, unknown>>;

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount({ projects: 100 });
    const stranger = await system.newAccount();
    api = await cloudClient(system, 'Fuzz');
    const other = await cloudClient(system, 'Other');

    // Inspection service: a processed inspection with an annotation and a measurement, an
    // uploaded one (status 2), and victims that the DELETE cases may remove.
    const processed = await processedInspection(account);
    const uploaded = await uploadedInspection(account);
    const c = account.client;
    const annotation = await c.expect(201, 'POST', '/v1/annotations/', { type: 'Corrosion', inspection: processed.inspection.id, photo_id: processed.cameras[0].photo_id, data: { coords_2d: RECT } });
    const point = { type: 'Point', coordinates: [1, 2, 3] };
    const [measurement, victimMeasurement] = (await c.expect(201, 'POST', `/v1/inspections/${processed.inspection.id}/measurements/`, { annotations: [{ geometry: point }, { geometry: point }] })).annotations;
    const victimAsset = await c.createAsset({ name: 'Victim', type: 2 });
    const victimInspection = await c.createInspection({ asset: victimAsset.id, name: 'Victim' });
    const victimAnnotation = await c.expect(201, 'POST', '/v1/annotations/', { type: 'Crack', inspection: processed.inspection.id, photo_id: processed.cameras[0].photo_id, data: { coords_2d: RECT } });
    const strangerAsset = await stranger.client.createAsset({ name: 'Theirs', type: 1 });
    const strangerInspection = await stranger.client.createInspection({ asset: strangerAsset.id });
    Object.assign(real, { asset: processed.asset.id, inspection: processed.inspection.id, uploaded: uploaded.inspection.id, annotation: annotation.id, measurement: measurement.id });
    Object.assign(victim, { asset: victimAsset.id, inspection: victimInspection.id, annotation: victimAnnotation.id, measurement: victimMeasurement.id });
    Object.assign(foreign, { asset: strangerAsset.id, inspection: strangerInspection.id });

    // Cloud service: a project with a registered image and a GCP, a group, a folder, victims.
    const group = await api.call('POST', '/project/api/v3/project-groups/', { name: 'Fuzz site' }, { expect: 201 });
    const folder = await api.call('POST', '/common/api/v4/drive/folders/', { name: 'Fuzz folder' }, { expect: 201 });
    const project = await api.call('POST', `${P}/`, { name: 'Fuzz project', project_group_id: group.id }, { expect: 201 });
    const key = await api.put(project, 'IMG_0001.jpg', await generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.5, altitude: 400, width: 96, height: 64 }));
    await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
    await api.call('POST', `${P}/${project.id}/gcp/register`, { gcps: [{ name: 'G1', x: 1, y: 2, z: 3 }] }, { expect: 201 });
    const victimProject = await api.call('POST', `${P}/`, { name: 'Victim' }, { expect: 201 });
    const victimGroup = await api.call('POST', '/project/api/v3/project-groups/', { name: 'Victim' }, { expect: 201 });
    const otherProject = await other.call('POST', `${P}/`, { name: 'Theirs' }, { expect: 201 });
    const otherGroup = await other.call('POST', '/project/api/v3/project-groups/', { name: 'Theirs' }, { expect: 201 });
    Object.assign(real, { project: project.id, group: group.id });
    Object.assign(victim, { project: victimProject.id, group: victimGroup.id });
    Object.assign(foreign, { project: otherProject.id, group: otherGroup.id });

    // Values that name real records, by property name, so that bodies get past the look-ups.
    hints = {
      inspection: {
        inspection: processed.inspection.id, asset: processed.asset.id, photo_id: processed.cameras[0].photo_id,
        image_keys: uploaded.keys, coords_2d: RECT, geometry: point, username: 'fuzz-nobody', password: 'wrong',
      },
      cloud: {
        project_group_id: group.id, input_file_keys: [key], owner_uuid: api.orgUuid, target_type: 'project_group',
        target_uuid: group.uuid, source_nodes: [{ type: 'project', uuid: project.uuid }], parent_uuid: folder.uuid,
        grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret,
        gcps: [{ name: 'G2', x: 1, y: 2, z: 3 }], marks: [{ gcp: 'G1', photo: key, x: 1, y: 1 }], mtps: [{ name: 'T1' }],
      },
    };
  });
  after(async () => {
    await system?.stop();
  });

  /** The record a path parameter names: [real, victim, foreign] ids (victim only for DELETE). */
  function recordFor(op: Operation, name: string): { id: number | string; victim?: number | string; foreign?: number | string } {
    const t = op.template;
    const pick = (what: string, id = real[what]) => ({ id, victim: victim[what], foreign: foreign[what] });
    if (name === 'annotation_id') return pick('measurement');
    if (t.startsWith('/v1/assets/')) return pick('asset');
    if (t.startsWith('/v1/annotations/')) return pick('annotation');
    if (t.startsWith('/v1/inspections/')) return /s3_credentials|register_images|process/.test(t) ? pick('inspection', real.uploaded) : pick('inspection');
    if (t.includes('/project-groups/')) return pick('group');
    return pick('project');
  }

  function headersFor(op: Operation, auth: Case['auth']): Record<string, string> {
    if (auth !== 'valid') return auth;
    if (op.service === 'cloud') return { authorization: `Bearer ${api.token}`, 'user-agent': 'fuzz-tests/1.0' };
    return { 'x-api-key': account.apiKey, authorization: `Bearer ${account.client.token}`, 'vendor-organization-uuid': account.organizationUuid! };
  }

  function badAuth(service: Service): Record<string, string>[] {
    const forged = 'eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiIxIiwic2NvcGUiOiJjbG91ZDp3cml0ZSJ9.';
    if (service === 'cloud') {
      return [{}, { authorization: 'Bearer garbage' }, { authorization: `Bearer ${forged}` }, { authorization: `Bearer ${api.token}x` }, { authorization: 'Basic Zm9vOmJhcg==' }, { authorization: `Bearer ${'a'.repeat(8000)}` }];
    }
    const valid = { 'x-api-key': account.apiKey, authorization: `Bearer ${account.client.token}` };
    return [
      {},
      { 'x-api-key': account.apiKey },
      { authorization: valid.authorization },
      { ...valid, 'x-api-key': 'wrong' },
      { ...valid, authorization: `Bearer ${forged}` },
      { ...valid, authorization: 'Bearer' },
      { ...valid, 'vendor-organization-uuid': 'not-a-uuid' },
      { ...valid, 'vendor-organization-uuid': '6f1f4c1e-2b8d-4c3a-9d4e-0a1b2c3d4e5f' },
      { ...valid, 'vendor-organization-uuid': 'x'.repeat(5000) },
    ];
  }

  /** Every case of one operation, by kind. */
  function casesOf(op: Operation, rng: Rng): Map<string, Case[]> {
    const byKind = new Map<string, Case[]>();
    const pathParams = op.params.filter((p) => p.in === 'path');
    const queryParams = op.params.filter((p) => p.in === 'query');
    const records = Object.fromEntries(pathParams.map((p) => [p.name, recordFor(op, p.name)]));
    const missing = Object.fromEntries(pathParams.map((p) => [p.name, typeof records[p.name].id === 'string' ? '00000000-0000-4000-8000-000000000000' : '2147483647']));
    const destructive = op.method === 'DELETE';
    const safeIds = destructive ? missing : Object.fromEntries(pathParams.map((p) => [p.name, String(records[p.name].id)]));
    const h = hints[op.service];
    const validBody = op.body ? sample(op.body, op.doc, rng, h) : undefined;
    const add = (kind: string, c: Partial<Case>) => {
      const list = byKind.get(kind) ?? [];
      list.push({ op, kind, ids: safeIds, query: '', auth: 'valid', ...c });
      byKind.set(kind, list);
    };
    const json = (value: unknown) => ({ contentType: 'application/json', body: toJson(value) });
    const base = op.body ? json(validBody) : {};
    const bodyIds = () => (EXPENSIVE.test(op.template) && rng.next() > 0.15 ? missing : safeIds);
    if (op.wrong) {
      // Only a GET may name the real records: an undocumented write that exists after all must not hit them.
      const ids = op.method === 'GET' ? safeIds : missing;
      for (const auth of ['valid' as const, {}]) add('wrong-method', { ids, auth });
      add('wrong-method', { ids, ...json({}) });
      return byKind;
    }

    for (const auth of badAuth(op.service)) add('auth', { ...base, auth });
    for (const p of pathParams) {
      const r = records[p.name];
      // Non-canonical spellings of a DELETE's id name a victim: a lenient parser deletes it, not the fixtures.
      const spelled = destructive ? (r.victim ?? r.id) : r.id;
      for (const [kind, value] of badIds(spelled as number | string)) add(kind, { ...base, ids: { ...safeIds, [p.name]: value } });
      if (r.foreign !== undefined) add('foreign-id', { ...base, ids: { ...safeIds, [p.name]: String(r.foreign) } });
      add('missing-id', { ...base, ids: missing });
    }
    for (const p of queryParams) {
      for (const [kind, value] of badQueryValues(p.schema)) add(kind, { ...base, query: `${p.name}=${value}` });
      add('query', { ...base, query: `${p.name}=1&${p.name}=2&${p.name}[]=3` });
    }
    add('query', { ...base, query: 'unknown=%00&__proto__[x]=1' });
    if (op.body) {
      for (const target of targets(op.body, op.doc)) {
        for (const [kind, value] of badValues(target.schema)) add(kind, { ...json(setAt(clone(validBody), target.path, value)), ids: bodyIds() });
        add('missing-required', { ...json(setAt(clone(validBody), target.path, undefined, true)), ids: bodyIds() });
        if (target.schema.type === 'object' || target.schema.properties) {
          add('extra-field', { ...json(setAt(clone(validBody), [...target.path, 'zz_extra'], 1)), ids: bodyIds() });
        }
      }
      add('extra-field', { ...json({ ...(validBody as object), zz_extra: 'x' }), ids: bodyIds() });
      add('missing-required', { ...json({}), ids: bodyIds() });
    }
    for (const raw of rawBodies()) {
      if (!op.body && !['invalid-json', 'content-type', 'multipart'].includes(raw.kind)) continue;
      add(raw.kind, { contentType: raw.contentType, body: raw.body, headers: raw.extraHeaders, ids: op.body ? bodyIds() : safeIds });
    }
    return byKind;
  }

  /** Round-robin over the kinds (shuffled within each) until the operation's share is used. */
  function plan(ops: Operation[], rng: Rng): Case[] {
    const wrong = ops.filter((op) => op.wrong).length;
    const all: Case[] = [];
    for (const op of ops) {
      const share = op.wrong ? 3 : Math.max(10, Math.floor((TOTAL - 3 * wrong) / (ops.length - wrong)));
      const groups = [...casesOf(op, rng).entries()].map(([kind, list]) => rng.shuffle(list).slice(0, KIND_CAP[kind] ?? Infinity));
      const picked: Case[] = [];
      for (let round = 0; picked.length < share && groups.some((g) => g.length > round); round++) {
        for (const g of groups) if (g.length > round && picked.length < share) picked.push(g[round]);
      }
      all.push(...picked);
    }
    return rng.shuffle(all);
  }

  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  function send(c: Case): Promise<Result> {
    const base = c.op.service === 'cloud' ? system.urls.cloud : system.urls.inspection;
    const pathname = c.op.template.replace(/\{(\w+)\}/g, (_, name: string) => c.ids[name] ?? '1');
    const url = `${base}${pathname}${c.query ? `?${c.query}` : ''}`;
    const body = c.body === undefined ? undefined : Buffer.isBuffer(c.body) ? c.body : Buffer.from(c.body, 'utf8');
    const headers: Record<string, string> = { ...headersFor(c.op, c.auth), ...c.headers };
    if (c.contentType) headers['content-type'] = c.contentType;
    if (body) headers['content-length'] = String(body.length);
    return new Promise((resolve) => {
      const done = (status: Result['status'], text = '') => resolve({ c, status, text, url });
      const req = http.request(url, { method: c.op.method, headers, agent, timeout: 60_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (text.length < 2000) text += chunk;
        });
        res.on('end', () => done(res.statusCode ?? 0, text));
        res.on('error', () => done(res.statusCode ?? 'reset', text));
      });
      req.on('timeout', () => {
        req.destroy();
        done('timeout');
      });
      req.on('error', () => done('reset'));
      req.end(body);
    });
  }

  it('answers no 5xx to a few thousand seeded bad requests, then still serves the typical flow', { timeout: 15 * 60_000 }, async (t) => {
    const seed = fuzzSeed();
    const rng = new Rng(seed);
    const ops: Operation[] = [];
    for (const [service, base, doc] of [
      ['inspection', system.urls.inspection, '/v1/openapi.json'],
      ['cloud', system.urls.cloud, '/project/api/v3/openapi.json'],
    ] as const) {
      const document = (await (await fetch(`${base}${doc}`)).json()) as any;
      for (const [template, item] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(item)) {
          if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
          const params = [...(item.parameters ?? []), ...(operation.parameters ?? [])].filter((p: any) => p.in !== 'header');
          const content = operation.requestBody?.content;
          const body = content?.['application/json']?.schema ?? (content ? Object.values<any>(content)[0]?.schema : undefined);
          ops.push({ service, method: method.toUpperCase(), template, doc: document, params, body });
        }
        const listed = ops.filter((op) => op.service === service && op.template === template);
        for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
          if (listed.length && !listed.some((op) => op.method === method)) ops.push({ ...listed[0], method, body: undefined, wrong: true });
        }
      }
    }
    assert.ok(ops.filter((op) => !op.wrong).length > 50, `both documents list their operations (${ops.length})`);
    // FUZZ_SKIP (a regular expression on "METHOD /path") leaves operations out while one looks into another.
    const skip = process.env.FUZZ_SKIP ? new RegExp(process.env.FUZZ_SKIP) : undefined;
    if (skip) ops.splice(0, ops.length, ...ops.filter((op) => !skip.test(`${op.method} ${op.template}`)));

    const cases = plan(ops, rng);
    const started = Date.now();
    const results: Result[] = [];
    let next = 0;
    // FUZZ_VERBOSE=1 prints each 5xx and each slow request, and appends every request to
    // $TMPDIR/fuzz-requests.log before sending it: its last lines name the culprit of a hang.
    const verbose = Boolean(process.env.FUZZ_VERBOSE);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < cases.length) {
          const c = cases[next++];
          const t0 = Date.now();
          if (verbose) fs.appendFileSync(path.join(os.tmpdir(), 'fuzz-requests.log'), `${next} ${c.op.method} ${c.op.template} [${c.kind}] ${String(c.body ?? '').slice(0, 100)} ${c.query.slice(0, 100)}\n`);
          const result = await send(c);
          results.push(result);
          if (verbose && typeof result.status === 'number' && result.status >= 500) console.log(`fuzz: ${c.op.method} ${result.url.slice(0, 300)} [${c.kind}] -> ${result.status}`);
          if (verbose && Date.now() - t0 > 2000) console.log(`fuzz: ${Date.now() - t0} ms ${c.op.method} ${c.op.template} [${c.kind}] -> ${result.status}`);
          if (verbose && results.length % 100 === 0) console.log(`fuzz: ${results.length}/${cases.length} after ${Date.now() - started} ms`);
        }
      }),
    );
    // Read everything back: a bad value that was stored must not break the reads that follow.
    for (const op of ops.filter((o) => o.method === 'GET' && !o.wrong)) {
      const ids = Object.fromEntries(op.params.filter((p) => p.in === 'path').map((p) => [p.name, String(recordFor(op, p.name).id)]));
      results.push(await send({ op, kind: 'read-back', ids, query: '', auth: 'valid' }));
    }
    agent.destroy();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);

    const count = (list: Result[]) => {
      const counts: Record<string, number> = {};
      for (const r of list) counts[r.status] = (counts[r.status] ?? 0) + 1;
      return JSON.stringify(counts);
    };
    const summary = [
      `fuzz: seed ${seed}, ${ops.filter((op) => !op.wrong).length} operations (and ${ops.filter((op) => op.wrong).length} wrong methods), ${results.length} requests in ${seconds} s; status counts ${count(results)}`,
      `fuzz: inspection service ${count(results.filter((r) => r.c.op.service === 'inspection'))}; cloud service ${count(results.filter((r) => r.c.op.service === 'cloud'))}`,
    ];
    for (const line of summary) {
      t.diagnostic(line);
      console.log(line);
    }

    const failures = results.filter((r) => r.status === 'timeout' || (typeof r.status === 'number' && r.status >= 500));
    if (failures.length) {
      const groups = new Map<string, number>();
      for (const f of failures) {
        const key = `${f.c.op.method} ${f.c.op.template} [${f.c.kind}] -> ${f.status}`;
        groups.set(key, (groups.get(key) ?? 0) + 1);
      }
      console.log(`fuzz: 5xx by operation and input kind:\n${[...groups].map(([k, n]) => `  ${n} x ${k}`).join('\n')}`);
    }
    const lines = failures
      .slice(0, 30)
      .map((f) => `${f.c.op.method} ${new URL(f.url).pathname.slice(0, 120)}${f.url.includes('?') ? '?…' : ''} [${f.c.kind}] -> ${f.status} ${f.text.slice(0, 300)}`);
    const lenient = results.filter((r) => r.c.kind === 'non-canonical-id' && typeof r.status === 'number' && r.status < 300).length;
    t.diagnostic(`fuzz: non-canonical path ids answered 2xx: ${lenient}`);

    // The typical flow, with a fresh account: token, asset, inspection, credentials, three photos
    // of the fixtures, register, process, status 7. Run even after 5xx, to tell both apart.
    const flow = (async () => {
      const fresh = await system.newAccount({ projects: 2 });
      const asset = await fresh.client.createAsset({ name: 'After the fuzz', type: 1, latitude: '55.70000000', longitude: '13.19000000' });
      const inspection = await fresh.client.createInspection({ asset: asset.id, name: 'Still serving' });
      const credentials = await fresh.client.storageCredentials(inspection.id);
      const folder = path.join(import.meta.dirname, 'fixtures', 'lund', 'images');
      const files = ['01.jpg', '02.jpg', '03.jpg'].map((name) => ({ name, body: fs.readFileSync(path.join(folder, name)) }));
      const keys = await fresh.client.upload(credentials, files);
      assert.equal((await fresh.client.register(inspection.id, keys)).nb_images_registered, 3);
      await fresh.client.process(inspection.id);
      const done = await fresh.client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
      assert.equal(done.status, 7, `the typical flow after the fuzz: ${JSON.stringify(done).slice(0, 500)}`);
      assert.equal((await api.call('GET', `${P}/${real.project}/`)).id, real.project, 'the cloud service still answers');
    })().then(
      () => undefined,
      (err: unknown) => err,
    );
    const flowError = await flow;
    console.log(`fuzz: typical flow afterwards: ${flowError ? `FAILED ${String(flowError).slice(0, 300)}` : 'ok (status 7)'}`);
    assert.equal(failures.length, 0, `${failures.length} of ${results.length} requests answered 5xx or timed out (seed ${seed}):\n${lines.join('\n')}`);
    if (flowError) throw flowError;
  });
});
