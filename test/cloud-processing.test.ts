// Processing in the cloud service: start_processing bodies, the tag rules (Processing tags 1-2,
// Limit 3), states and their display texts, the error codes a client's data can cause (10601,
// 10611-10615), default output coordinate systems (Coordinate systems 1-4) and the automatic
// mobile-capture pipeline.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { epsgByCode } from '../src/cloud/coordinate-systems/index.ts';

const wkt = (code: number) => epsgByCode(code)!.wkt!;
const UTM_EGM96 = `COMPD_CS["WGS 84 / UTM zone 32N + EGM96 height",${wkt(32632)},${wkt(5773)}]`;
const P = '/project/api/v3/projects';

async function geotagged(seed: number, options: { latitude?: number; longitude?: number; make?: string; model?: string } = {}): Promise<Buffer> {
  return generateGeotaggedJpeg({ latitude: options.latitude ?? 46.5183, longitude: options.longitude ?? 6.5619, altitude: 420, seed, width: 160, height: 120, make: options.make, model: options.model });
}

/** Creates a project, puts the files under its prefix and registers them. */
async function projectWith(api: CloudTestClient, body: Record<string, unknown>, files: [string, Buffer][]): Promise<any> {
  const project = await api.call('POST', `${P}/`, { name: 'Processing test', ...body }, { expect: 201 });
  const keys = [];
  for (const [name, data] of files) keys.push(await api.put(project, name, data));
  if (keys.length) await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
  return project;
}

async function processed(api: CloudTestClient, body: Record<string, unknown>, files: [string, Buffer][], tags?: string[]): Promise<any> {
  const project = await projectWith(api, body, files);
  await api.call('POST', `${P}/${project.id}/start_processing/`, tags ? { tags } : undefined, { expect: 202 });
  return api.waitFor(project.id, settled);
}

describe('cloud processing', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let image: Buffer;
  before(async () => {
    system = await startTestSystem();
    api = await cloudClient(system);
    image = await geotagged(1);
  });
  after(async () => {
    await system?.stop();
  });

  describe('start_processing bodies (CONTRACT: empty, JSON or form)', () => {
    const start = async (init: { body?: RequestInit["body"]; headers?: Record<string, string> }) => {
      const project = await projectWith(api, {}, [['a.jpg', image]]);
      const response = await fetch(`${system.urls.cloud}${P}/${project.id}/start_processing/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${api.token}`, ...init.headers },
        body: init.body,
      });
      const body = (await response.json()) as any;
      assert.equal(response.status, 202, JSON.stringify(body));
      assert.equal(body.public_status, 'WAITING');
      return body.tags as string[];
    };

    it('no body, an empty JSON body and {} mean the default pipeline, nadir', async () => {
      assert.deepEqual(await start({}), ['nadir']);
      assert.deepEqual(await start({ body: '', headers: { 'content-type': 'application/json' } }), ['nadir']);
      assert.deepEqual(await start({ body: '{}', headers: { 'content-type': 'application/json' } }), ['nadir']);
      assert.deepEqual(await start({ body: '{"tags":[]}', headers: { 'content-type': 'application/json' } }), ['nadir']);
    });

    it('JSON, urlencoded (comma-separated or repeated) and multipart tags', async () => {
      assert.deepEqual(await start({ body: JSON.stringify({ tags: ['oblique'] }), headers: { 'content-type': 'application/json' } }), ['oblique']);
      assert.deepEqual(await start({ body: new URLSearchParams('tags=3d-maps,flat') }), ['3d-maps', 'flat']);
      assert.deepEqual(await start({ body: new URLSearchParams('tags=nadir&tags=flat') }), ['nadir', 'flat']);
      const form = new FormData();
      form.append('tags', 'building');
      assert.deepEqual(await start({ body: form }), ['building']);
    });
  });

  describe('tag rules (Processing tags 1, Limit 3): 400 on `tags`, nothing changes', () => {
    for (const [tags, why] of [
      [['nadir', 'oblique'], 'pipelines are mutually exclusive'],
      [['oblique', 'building'], 'pipelines are mutually exclusive'],
      [['3d-maps', 'building'], 'pipelines are mutually exclusive'],
      [['flat'], 'flat only with nadir or 3d-maps'],
      [['flat', 'oblique'], 'flat only with nadir or 3d-maps'],
      [['flat', 'building'], 'flat only with nadir or 3d-maps'],
      [['sparse-only'], 'unknown tag'],
    ] as const) {
      it(`${JSON.stringify(tags)}: ${why}`, async () => {
        const project = await projectWith(api, {}, [['a.jpg', image]]);
        const body = await api.call('POST', `${P}/${project.id}/start_processing/`, { tags }, { expect: 400 });
        assert.ok(Array.isArray(body.tags) && body.tags.length === 1, JSON.stringify(body));
        assert.equal((await api.call('GET', `${P}/${project.id}/`)).public_status, 'UPLOADING');
      });
    }

    it('accepts the stated combinations: nadir or 3d-maps with flat, nadir with 3d-maps', async () => {
      for (const tags of [['nadir', 'flat'], ['3d-maps', 'flat'], ['nadir', '3d-maps'], ['NADIR']]) {
        const project = await projectWith(api, {}, [['a.jpg', image]]);
        await api.call('POST', `${P}/${project.id}/start_processing/`, { tags }, { expect: 202 });
      }
    });
  });

  describe('states and the error codes of the spec', () => {
    it('a project goes to DONE with its outputs, display texts along the way', async () => {
      const project = await projectWith(api, {}, [['a.jpg', image]]);
      assert.match((await api.call('GET', `${P}/${project.id}/`)).display_detailed_status, /1 input\(s\) registered/);
      const waiting = await api.call('POST', `${P}/${project.id}/start_processing/`, undefined, { expect: 202 });
      assert.equal(waiting.public_status, 'WAITING');
      assert.equal(waiting.display_detailed_status, 'Waiting for processing (0%)');
      const done = await api.waitFor(project.id, settled);
      assert.equal(done.public_status, 'DONE');
      assert.equal(done.progress, 100);
      assert.equal(done.display_detailed_status, 'Processing completed (100%)');
    });

    it('10601: no registered input is a readable image', async () => {
      const failed = await processed(api, {}, [
        ['notes.txt', Buffer.from('not an image')],
        ['broken.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 4, 1, 2])],
      ]);
      assert.equal(failed.public_status, 'ERROR');
      assert.equal(failed.error_code, 10601);
      assert.match(failed.error_reason, /Input data not valid/);
      assert.match(failed.display_detailed_status, /10601/);
      assert.ok(failed.last_datetime_processing_ended);
    });

    it('one readable image among other files is enough: the others are counted, not fatal', async () => {
      const done = await processed(api, {}, [
        ['a.jpg', image],
        ['notes.txt', Buffer.from('not an image')],
      ]);
      assert.equal(done.public_status, 'DONE');
      assert.equal(done.image_count, 2);
    });

    const cases: [number, string, Record<string, unknown>][] = [
      [10611, 'a geographic CRS (degrees) is not isometric', { coordinate_system: wkt(4326) }],
      [10611, 'feet horizontally, metres vertically is not isometric', { coordinate_system: `COMPD_CS["NY (ftUS) + NAVD88 (m)",${wkt(2263)},${wkt(5703)}]` }],
      [10612, 'a geocentric CRS is not projected or arbitrary', { coordinate_system: wkt(4978) }],
      [10613, 'a pure vertical CRS has no horizontal component', { coordinate_system: wkt(5773) }],
      [10614, 'a geoid height without a vertical component', { coordinate_system: wkt(32632), geoid_height: 47.3 }],
      [10614, 'a geoid model without a vertical component', { coordinate_system: wkt(32632), geoid_model: 'EGM2008' }],
      [10614, 'a geoid model without any coordinate_system', { geoid_model: 'EGM2008' }],
      [10615, 'a geoid height together with a geoid model', { coordinate_system: UTM_EGM96, geoid_model: 'EGM2008', geoid_height: 47.3 }],
    ];
    for (const [code, why, body] of cases) {
      it(`${code}: ${why}`, async () => {
        const created = await projectWith(api, body, [['a.jpg', image]]);
        assert.equal(created.coordinate_system, (body.coordinate_system as string | undefined) ?? '', 'accepted at creation');
        await api.call('POST', `${P}/${created.id}/start_processing/`, undefined, { expect: 202 });
        const failed = await api.waitFor(created.id, settled);
        assert.equal(failed.public_status, 'ERROR');
        assert.equal(failed.error_code, code);
        assert.ok(failed.error_reason.length > 10);
        assert.equal(failed.output_coordinate_system, null);
      });
    }

    it('the same systems, made valid, process: requested output recorded with EGM96 as its vertical', async () => {
      const done = await processed(api, { coordinate_system: wkt(32632) }, [['a.jpg', image]]);
      assert.equal(done.public_status, 'DONE', done.error_reason);
      assert.equal(done.output_coordinate_system.source, 'requested');
      assert.equal(done.output_coordinate_system.horizontal_epsg, 32632);
      assert.equal(done.output_coordinate_system.vertical_epsg, 5773);
      assert.match(done.coordinate_system, /^COMPD_CS\[.*VERT_CS\["EGM96 height"/);
      const withHeight = await processed(api, { coordinate_system: UTM_EGM96, geoid_height: 47.3 }, [['a.jpg', image]]);
      assert.equal(withHeight.public_status, 'DONE', withHeight.error_reason);
      assert.equal(withHeight.output_coordinate_system.geoid_height, 47.3);
      assert.equal(withHeight.geoid_height, 47.3);
      const feet = await processed(api, { coordinate_system: wkt(2263) }, [['a.jpg', await geotagged(2, { latitude: 40.7, longitude: -73.9 })]]);
      assert.equal(feet.public_status, 'DONE', feet.error_reason);
      assert.equal(feet.output_coordinate_system.unit, 'US survey foot');
      assert.equal(feet.output_coordinate_system.vertical_name, 'EGM96 height (US survey foot)');
    });
  });

  describe('default output coordinate systems (Coordinate systems 1, 2, 4)', () => {
    it('images with positions: WGS 84 / UTM, zone from the positions, EGM96 heights', async () => {
      const north = await processed(api, {}, [['a.jpg', image]]);
      assert.equal(north.is_geolocalized, true);
      assert.equal(north.output_coordinate_system.source, 'default');
      assert.equal(north.output_coordinate_system.horizontal_epsg, 32632);
      assert.equal(north.output_coordinate_system.vertical_name, 'EGM96 height');
      assert.match(north.proj_pipeline, /\+proj=utm \+zone=32 /);
      const { sw, ne } = north.outputs.map.bounds;
      assert.ok(Math.abs(sw[0] - 46.5183) < 1e-6 && Math.abs(ne[1] - 6.5619) < 1e-6, JSON.stringify(north.outputs.map.bounds));
      const south = await processed(api, {}, [['cape-town.jpg', await geotagged(3, { latitude: -33.92, longitude: 18.42 })]]);
      assert.equal(south.output_coordinate_system.horizontal_epsg, 32734);
      assert.match(south.coordinate_system, /UTM zone 34S/);
    });

    it('images without positions: arbitrary output', async () => {
      const plain = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#808080' } }).jpeg().toBuffer();
      const done = await processed(api, {}, [['plain.jpg', plain]]);
      assert.equal(done.public_status, 'DONE', done.error_reason);
      assert.equal(done.is_geolocalized, false);
      assert.equal(done.output_coordinate_system.type, 'arbitrary');
      assert.equal(done.output_coordinate_system.source, 'arbitrary');
      assert.match(done.coordinate_system, /^LOCAL_CS\[/);
      assert.equal(done.outputs.map.bounds, null);
      assert.equal(done.proj_pipeline, '');
    });
  });

  describe('pipelines (Processing tags 2): mobile captures are detected from the images', () => {
    it('phone photos get the mobile pipeline whatever the tags; drone photos keep the tagged one', async () => {
      const iphone = (seed: number) => geotagged(seed, { make: 'Apple', model: 'iPhone 15 Pro' });
      const mobile = await processed(api, {}, [['IMG_0001.jpg', await iphone(4)], ['IMG_0002.jpg', await iphone(5)], ['depth.txt', Buffer.from('depth')]], ['oblique']);
      assert.equal(mobile.public_status, 'DONE', mobile.error_reason);
      assert.equal(mobile.pipeline, 'mobile');
      assert.deepEqual(mobile.tags, ['oblique'], 'the tags are kept as given');
      const drone = await processed(api, {}, [['DJI_0001.jpg', await geotagged(6, { make: 'DJI', model: 'FC6310' })]], ['oblique']);
      assert.equal(drone.pipeline, 'oblique');
      const mixed = await processed(api, {}, [['IMG_0001.jpg', await iphone(7)], ['DJI_0001.jpg', await geotagged(8, { make: 'DJI', model: 'FC6310' })]], ['building']);
      assert.equal(mixed.pipeline, 'building');
      const nadir = await processed(api, {}, [['a.jpg', image]]);
      assert.equal(nadir.pipeline, 'nadir');
    });
  });
});

describe('cloud processing preconditions (the engine takes 5 s: projects stay WAITING or PROCESSING meanwhile)', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let image: Buffer;
  before(async () => {
    system = await startTestSystem({ engineSimulatedSeconds: 5 });
    api = await cloudClient(system);
    image = await geotagged(1);
  });
  after(async () => {
    await system?.stop();
  });

  it('409: start without registered inputs, twice, or change inputs after the start', async () => {
    const empty = await api.call('POST', `${P}/`, { name: 'empty' }, { expect: 201 });
    const noInputs = await api.call('POST', `${P}/${empty.id}/start_processing/`, {}, { expect: 409 });
    assert.equal(noInputs.code, 'conflict');
    assert.equal(typeof noInputs.detail, 'string');

    const project = await projectWith(api, {}, [['a.jpg', image]]);
    await api.call('POST', `${P}/${project.id}/start_processing/`, {}, { expect: 202 });
    assert.equal((await api.call('POST', `${P}/${project.id}/start_processing/`, {}, { expect: 409 })).code, 'conflict');
    const key = await api.put(project, 'b.jpg', image);
    await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 409 });
    const running = await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 200 });
    assert.ok(['WAITING', 'PROCESSING'].includes(running.public_status), running.public_status);
    assert.equal(running.image_count, 1);
    assert.match(running.display_detailed_status, /\(\d{1,3}%\)$/);
    const done = await api.waitFor(project.id, settled);
    assert.equal(done.public_status, 'DONE');
    assert.equal(done.image_count, 1, 'the refused registration added nothing');
    // Deleted, it is gone (deleting it while processing cancels the run: cloud-engines.test.ts).
    await api.call('DELETE', `${P}/${project.id}/`, undefined, { expect: 204 });
    await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 404 });
  });
});
