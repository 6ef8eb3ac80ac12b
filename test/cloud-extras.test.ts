// Extra files of a cloud project and processing templates (issue 30 §5): POST …/extras/ as the real
// API's demo script calls it ({"file_key"}), the key checks it shares with bulk_register, its
// limits and states; start_processing's custom_template_s3_key, read for each step's runStep and
// refusing, with the reason, whatever else a template sets.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';

const P = '/project/api/v3/projects';

const tmpl = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<pix4dtmpl>\n  <information><info>demo</info><version>3.3</version></information>\n${body}\n</pix4dtmpl>\n`;

describe('cloud extras and processing templates', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let other: CloudTestClient;
  let image: Buffer;
  before(async () => {
    system = await startTestSystem();
    api = await cloudClient(system);
    other = await cloudClient(system, 'Other');
    image = await generateGeotaggedJpeg({ latitude: 46.5183, longitude: 6.5619, altitude: 420, width: 160, height: 120 });
  });
  after(async () => {
    await system?.stop();
  });

  /** A project with one registered image. */
  async function project(): Promise<any> {
    const created = await api.call('POST', `${P}/`, { name: 'Extras' }, { expect: 201 });
    const key = await api.put(created, 'a.jpg', image);
    await api.call('POST', `${P}/${created.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
    return created;
  }

  /** A template put under the project's prefix and registered as an extra; its key. */
  async function registeredTemplate(p: any, text: string, name = 'custom.tmpl'): Promise<string> {
    const key = await api.put(p, name, Buffer.from(text));
    await api.call('POST', `${P}/${p.id}/extras/`, { file_key: key }, { expect: 201 });
    return key;
  }

  const start = (p: any, body: unknown, expect: number) => api.call('POST', `${P}/${p.id}/start_processing/`, body, { expect });

  describe('POST …/extras/', () => {
    it('registers a file uploaded with the project\'s credentials (the demo script\'s {"file_key"}); GET lists it; without the trailing slash too', async () => {
      const p = await project();
      const credentials = await api.call('GET', `${P}/${p.id}/s3_credentials/`, undefined, { expect: 200 });
      const s3 = new S3Client({
        region: credentials.region,
        endpoint: credentials.endpoint_override,
        forcePathStyle: true,
        credentials: { accessKeyId: credentials.access_key, secretAccessKey: credentials.secret_key, sessionToken: credentials.session_token },
      });
      const key = `${credentials.key}my_custom_template.tmpl`;
      const body = Buffer.from(tmpl('<dense><runStep>true</runStep></dense>'));
      await s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: key, Body: body }));
      s3.destroy();

      const registered = await api.call('POST', `${P}/${p.id}/extras/`, { file_key: key }, { expect: 201 });
      assert.deepEqual(registered.extras.map((e: any) => [e.file_key, e.size]), [[key, body.length]]);
      assert.ok(!Number.isNaN(Date.parse(registered.extras[0].created_at)));
      assert.deepEqual(await api.call('GET', `${P}/${p.id}/extras/`, undefined, { expect: 200 }), registered);

      const gcps = await api.put(p, 'gcps.csv', Buffer.from('name,x,y,z\n'));
      const both = await api.call('POST', `${P}/${p.id}/extras`, { file_keys: [gcps, key] }, { expect: 201 });
      assert.deepEqual(both.extras.map((e: any) => e.file_key).sort(), [gcps, key].sort());
      assert.equal((await api.call('GET', `${P}/${p.id}/extras`, undefined, { expect: 200 })).extras.length, 2);
    });

    it('400 for a key outside the project\'s prefix, another project\'s included, and for one not in storage; all or nothing', async () => {
      const p = await project();
      const q = await project();
      const mine = await api.put(p, 'template.tmpl', Buffer.from('x'));
      const theirs = await api.put(q, 'template.tmpl', Buffer.from('x'));
      const outside = await api.call('POST', `${P}/${p.id}/extras/`, { file_key: theirs }, { expect: 400 });
      assert.match(outside.file_key[0], /must begin with the project's prefix/);
      assert.match((await api.call('POST', `${P}/${p.id}/extras/`, { file_key: `${p.s3_base_path}/` }, { expect: 400 })).file_key[0], /prefix/);
      const missing = await api.call('POST', `${P}/${p.id}/extras/`, { file_keys: [mine, `${p.s3_base_path}/nowhere.tmpl`] }, { expect: 400 });
      assert.match(missing.file_keys[0], /Not found in storage: .*nowhere\.tmpl/);
      assert.deepEqual((await api.call('GET', `${P}/${p.id}/extras/`, undefined, { expect: 200 })).extras, []);
    });

    it('400 naming the key and the reason for "." and ".." segments, on extras and bulk_register alike (not the store\'s 500)', async () => {
      const p = await project();
      const base = p.s3_base_path;
      const forms = [`${base}/a/../b.jpg`, `${base}/./a.jpg`, `${base}/a/.`, `${base}/..`, `${base}/../other/a.jpg`];
      for (const key of forms) {
        const reason = key.split('/').includes('..') ? /"\.\." segment/ : /"\." segment/;
        const extras = await api.call('POST', `${P}/${p.id}/extras/`, { file_key: key }, { expect: 400 });
        assert.ok(extras.file_key[0].includes(JSON.stringify(key)), extras.file_key[0]);
        assert.match(extras.file_key[0], reason);
        const bulk = await api.call('POST', `${P}/${p.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 400 });
        assert.ok(bulk.input_file_keys[0].includes(JSON.stringify(key)), bulk.input_file_keys[0]);
        assert.match(bulk.input_file_keys[0], reason);
      }
      // A bare ".." is outside the prefix; percent-encoded dots are ordinary characters in a key (not found here).
      assert.match((await api.call('POST', `${P}/${p.id}/extras/`, { file_key: '..' }, { expect: 400 })).file_key[0], /prefix/);
      assert.match((await api.call('POST', `${P}/${p.id}/extras/`, { file_key: `${base}/%2E%2E/a.jpg` }, { expect: 400 })).file_key[0], /Not found in storage/);
      assert.match((await api.call('POST', `${P}/${p.id}/inputs/bulk_register/`, { input_file_keys: [`${base}/.../a.jpg`] }, { expect: 400 })).input_file_keys[0], /Not found in storage/);
    });

    it('400 for a body without a key, a key that is not a string, too many keys in one call', async () => {
      const p = await project();
      assert.match((await api.call('POST', `${P}/${p.id}/extras/`, {}, { expect: 400 })).file_key[0], /file_key/);
      await api.call('POST', `${P}/${p.id}/extras/`, { file_key: 5 }, { expect: 400 });
      await api.call('POST', `${P}/${p.id}/extras/`, { file_key: '' }, { expect: 400 });
      const many = Array.from({ length: 101 }, (_, i) => `${p.s3_base_path}/x${i}`);
      assert.ok('file_keys' in (await api.call('POST', `${P}/${p.id}/extras/`, { file_keys: many }, { expect: 400 })));
    });

    it('400 past 100 extras in a project; registering a key again does not count twice', async () => {
      const p = await project();
      const keys = await Promise.all(Array.from({ length: 101 }, (_, i) => api.put(p, `extra-${i}.txt`, Buffer.from(String(i)))));
      await api.call('POST', `${P}/${p.id}/extras/`, { file_keys: keys.slice(0, 60) }, { expect: 201 });
      const full = await api.call('POST', `${P}/${p.id}/extras/`, { file_keys: keys.slice(0, 100) }, { expect: 201 });
      assert.equal(full.extras.length, 100);
      const over = await api.call('POST', `${P}/${p.id}/extras/`, { file_key: keys[100] }, { expect: 400 });
      assert.match(over.file_key[0], /at most 100 extra files; 100 are registered/);
    });

    it("404 for another organization's project (register and list); 409 once processing has started", async () => {
      const p = await project();
      const key = await api.put(p, 'late.tmpl', Buffer.from('x'));
      await other.call('POST', `${P}/${p.id}/extras/`, { file_key: key }, { expect: 404 });
      await other.call('GET', `${P}/${p.id}/extras/`, undefined, { expect: 404 });
      await start(p, undefined, 202);
      const late = await api.call('POST', `${P}/${p.id}/extras/`, { file_key: key }, { expect: 409 });
      assert.equal(late.code, 'conflict');
    });
  });

  describe('start_processing with custom_template_s3_key', () => {
    it('the demo script\'s form (custom_template_s3_key and _bucket): dense runs, ortho skipped; the outputs say which were not requested', async () => {
      const p = await project();
      const key = await registeredTemplate(p, tmpl('<initial><runStep>true</runStep></initial>\n<dense><runStep>true</runStep></dense>\n<ortho><runStep>false</runStep></ortho>\n<index><runStep>false</runStep></index>'));
      const form = new URLSearchParams({ custom_template_s3_key: key, custom_template_s3_bucket: p.bucket_name });
      const started = await api.call('POST', `${P}/${p.id}/start_processing/`, undefined, { raw: form, expect: 202 });
      assert.equal(started.public_status, 'WAITING');
      const done = await api.waitFor(p.id, settled);
      assert.equal(done.public_status, 'DONE', done.error_reason);
      const { outputs } = await api.call('GET', `${P}/${p.id}/outputs/`, undefined, { expect: 200 });
      const note = (type: string) => outputs.find((o: any) => o.output_type === type)?.note as string;
      assert.equal(note('dsm'), 'Not requested (outputs.dsm: false).');
      assert.equal(note('ortho_rgb'), 'Not requested (outputs.ortho: false).');
      assert.match(note('point_cloud'), /^Requested \(outputs\.point_cloud\), but the exif engine cannot make it/);
    });

    it('400 naming every option the engines cannot apply (a template exported from PIX4Dmapper), nothing started', async () => {
      const p = await project();
      const key = await registeredTemplate(p, tmpl('<initial><runStep>true</runStep><keypointsImageScale>Custom</keypointsImageScale><imageScale>0.5</imageScale></initial>\n<ortho><runStep>true</runStep><dsm><resolution>5</resolution></dsm></ortho>\n<cameras/>'));
      const refused = await start(p, { custom_template_s3_key: key }, 400);
      const message: string = refused.custom_template_s3_key[0];
      for (const option of ['initial/keypointsImageScale', 'initial/imageScale', 'ortho/dsm', 'cameras']) assert.ok(message.includes(option), `${option} in ${message}`);
      assert.match(message, /Only each step's runStep/);
      assert.equal((await api.call('GET', `${P}/${p.id}/`, undefined, { expect: 200 })).public_status, 'UPLOADING');
    });

    it('400 with the reason for steps that cannot run as asked and for files that are not templates', async () => {
      const p = await project();
      const cases: [string, RegExp][] = [
        [tmpl('<initial><runStep>false</runStep></initial>'), /step 1 \(initial processing\) cannot be skipped/],
        [tmpl('<index><runStep>true</runStep></index>'), /index calculator/],
        [tmpl('<dense><runStep>maybe</runStep></dense>'), /dense\/runStep must be true or false/],
        [tmpl('<dense><runStep>true</runStep><runStep>false</runStep></dense>'), /dense\/runStep is given twice/],
        ['<?xml version="1.0"?><template><dense/></template>', /not <pix4dtmpl>/],
        ['<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]><pix4dtmpl>&e;</pix4dtmpl>', /DOCTYPE declarations and CDATA sections are not accepted/],
        ['<pix4dtmpl><dense><runStep>true</dense></pix4dtmpl>', /unexpected <\/dense>/],
        ['{"outputs": {"dsm": false}}', /text outside the root element|no root element/],
        ['<pix4dtmpl>', /<pix4dtmpl> is not closed/],
      ];
      for (const [i, [text, reason]] of cases.entries()) {
        const key = await registeredTemplate(p, text, `case-${i}.tmpl`);
        const refused = await start(p, { custom_template_s3_key: key }, 400);
        assert.match(refused.custom_template_s3_key[0], reason, text);
      }
    });

    it('400 for a template not registered as an extra, another bucket, one gone from storage, one too large, and with `outputs` too', async () => {
      const p = await project();
      const unregistered = await api.put(p, 'unregistered.tmpl', Buffer.from(tmpl('')));
      assert.match((await start(p, { custom_template_s3_key: unregistered }, 400)).custom_template_s3_key[0], /not a registered extra file/);
      const key = await registeredTemplate(p, tmpl('<dense><runStep>false</runStep></dense>'));
      assert.match((await start(p, { custom_template_s3_key: key, custom_template_s3_bucket: 'elsewhere' }, 400)).custom_template_s3_bucket[0], /not "elsewhere"/);
      assert.match((await start(p, { custom_template_s3_bucket: p.bucket_name }, 400)).custom_template_s3_key[0], /is required/);
      assert.match((await start(p, { custom_template_s3_key: key, outputs: { dsm: true } }, 400)).custom_template_s3_key[0], /either `outputs` or a processing template/);
      const large = await registeredTemplate(p, tmpl(`<!--${'x'.repeat(300 * 1024)}-->`), 'large.tmpl');
      assert.match((await start(p, { custom_template_s3_key: large }, 400)).custom_template_s3_key[0], /at most 262144 are read/);
      await system.store.deleteObject(p.bucket_name, key);
      assert.match((await start(p, { custom_template_s3_key: key }, 400)).custom_template_s3_key[0], /no longer in storage/);
      assert.equal((await api.call('GET', `${P}/${p.id}/`, undefined, { expect: 200 })).public_status, 'UPLOADING');
    });
  });
});
