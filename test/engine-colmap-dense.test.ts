// The colmap engine's dense stages end to end on a drone flight, through the cloud API: brighton_beach
// (18 DJI photos, ../shared/datasets/brighton_beach), scaled here to 800 pixels wide with their
// EXIF and XMP kept (GPS, focal length, gimbal angles) so that the run takes minutes, not the 20 of
// the full photos (bench/photogrammetry.ts measures those). Nothing asked in `outputs`: the engine's
// default, every product:
// - the dense cloud delivered as `point_cloud`, denser than the sparse model, around the flight;
// - `3d_mesh_obj_zip` (OBJ + MTL + offset file) and `3d_mesh_ply`;
// - `dsm` and `dtm` as Cloud-Optimized GeoTIFFs in the output system (gdalinfo: LAYOUT=COG,
//   overviews, nodata), the DTM at or below the DSM;
// - `ortho_rgb` (RGBA COG) and `ortho_thumb`, and the project's map layers and zooms from them;
// - the processing log's section per dense stage, the quality report's dense figures.
// Needs colmap and gdal (skips with the reason otherwise, fails under CI=true); skips with the reason
// when the dataset is absent (it lives outside the repository).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import yauzl from 'yauzl';
import { startTestSystem, tempDir, type TestSystem } from './helpers/test-system.ts';
import { requireTool } from './helpers/system-tools.ts';
import { readLas } from '../src/shared/pointcloud/index.ts';

const BRIGHTON = path.resolve(import.meta.dirname, '..', '..', 'shared', 'datasets', 'brighton_beach', 'images');
const WIDTH = 800;

async function bytes(system: TestSystem, bucket: string, key: string): Promise<Buffer> {
  const { body } = await system.store.getObject(bucket, key);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function zipEntries(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const names: string[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        zip.readEntry();
      });
      zip.on('end', () => resolve(names));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('colmap engine, dense stages on a drone flight (brighton, scaled), through the cloud API', () => {
  let system: TestSystem | undefined;

  before(async () => {
    if (!fs.existsSync('/usr/bin/colmap') || !fs.existsSync(BRIGHTON)) return;
    system = await startTestSystem({ engine: 'colmap' });
  });
  after(async () => {
    await system?.stop();
  });

  it('makes the dense cloud, the mesh, the DSM and DTM and the orthomosaic, each delivered and described', async (t) => {
    if (!requireTool(t, '/usr/bin/colmap', 'colmap') || !requireTool(t, '/usr/bin/gdalinfo', 'gdal-bin')) return;
    if (!fs.existsSync(BRIGHTON)) {
      console.log(`# skipped: ${BRIGHTON} is not present (the dataset lives outside the repository)`);
      return t.skip(`${BRIGHTON} is not present`);
    }
    const org = await system!.cloud.ensureOrganization('dense', crypto.randomUUID());
    const oauth = await system!.cloud.oauth.createClient(org.id, 'dense');
    const tokenResponse = await fetch(`${system!.urls.cloud}/oauth2/token/`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: oauth.clientId, client_secret: oauth.clientSecret }) });
    const token = ((await tokenResponse.json()) as { access_token: string }).access_token;
    const call = async (method: string, p: string, body?: unknown) => {
      const response = await fetch(`${system!.urls.cloud}/project/api/v3${p}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      assert.ok(response.status < 400, `${method} ${p}: ${response.status} ${await response.clone().text()}`);
      return response.json() as Promise<any>;
    };
    const project = await call('POST', '/projects/', { name: 'brighton dense' });
    const keys: string[] = [];
    for (const name of fs.readdirSync(BRIGHTON).filter((f) => /\.jpe?g$/i.test(f)).sort()) {
      const scaled = await sharp(path.join(BRIGHTON, name)).resize({ width: WIDTH }).keepMetadata().jpeg({ quality: 90 }).toBuffer();
      const key = `${project.s3_base_path}/${name}`;
      await system!.store.putObject(project.bucket_name, key, scaled);
      keys.push(key);
    }
    await call('POST', `/projects/${project.id}/inputs/bulk_register/`, { input_file_keys: keys });
    await call('POST', `/projects/${project.id}/start_processing/`);
    const texts = new Set<string>();
    let state: any;
    for (const deadline = Date.now() + 30 * 60_000; Date.now() < deadline; ) {
      state = await call('GET', `/projects/${project.id}/`);
      if (state.display_detailed_status) texts.add(String(state.display_detailed_status));
      if (state.public_status === 'DONE' || state.public_status === 'ERROR') break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    assert.equal(state.public_status, 'DONE', `${state.error_code} ${state.error_reason}`);
    assert.ok([...texts].some((text) => text.startsWith('Computing depth maps (')), [...texts].join(' | '));

    const { outputs } = await call('GET', `/projects/${project.id}/outputs/`);
    const byType = new Map<string, any>(outputs.map((o: any) => [o.output_type, o]));
    const made = ['point_cloud', 'point_cloud_ply', '3d_mesh_obj_zip', '3d_mesh_ply', '3d_mesh_web_ply', 'dsm', 'dtm', 'ortho_rgb', 'ortho_thumb', 'quality_report', 'processing_log'];
    for (const type of made) assert.equal(byType.get(type)?.availability, 'done', `${type}: ${JSON.stringify(byType.get(type))}`);
    assert.equal(byType.get('ortho_thumb').result_type, 'ortho');
    const file = async (type: string) => bytes(system!, byType.get(type).s3_bucket ?? project.bucket_name, byType.get(type).s3_key);
    const work = tempDir('oi-dense-');

    // The quality report and the log: the dense stages ran, none failed.
    const report = JSON.parse((await file('quality_report')).toString());
    const log = (await file('processing_log')).toString();
    assert.deepEqual(report.dense.failures, [], log.slice(-3000));
    assert.deepEqual(report.not_available, []);
    for (const stage of ['undistortion', 'depth-maps', 'fusion', 'meshing', 'elevation', 'orthophoto']) {
      assert.match(log, new RegExp(`\\n== ${stage}: \\d+\\.\\d s ==\\n`), stage);
      assert.ok(report.stage_timings_s[stage] > 0, stage);
    }

    // The dense cloud: the delivered point_cloud, denser than the sparse model, in UTM 15N.
    const las = readLas(await file('point_cloud'));
    assert.equal(las.count, report.dense.points);
    assert.ok(las.count > 3 * report.points, `dense ${las.count}, sparse ${report.points}`);
    assert.equal(las.header.horizontalEpsg, 32615);

    // The mesh: the zip's OBJ, MTL and offset file; the PLY.
    fs.writeFileSync(path.join(work, 'mesh.zip'), await file('3d_mesh_obj_zip'));
    const entries = await zipEntries(path.join(work, 'mesh.zip'));
    assert.ok(entries.some((e) => e.endsWith('.obj')) && entries.some((e) => e.endsWith('.mtl')) && entries.some((e) => e.endsWith('_offset.xyz')), entries.join(' '));
    const ply = await file('3d_mesh_ply');
    const faces = /element face (\d+)/.exec(ply.subarray(0, 2000).toString('latin1'));
    assert.ok(faces && Number(faces[1]) > 1000, `faces: ${faces?.[1]}`);

    // DSM and DTM: COGs in the output system with overviews and nodata; the DTM at or below the DSM.
    const info: Record<string, any> = {};
    for (const type of ['dsm', 'dtm', 'ortho_rgb']) {
      const tif = path.join(work, `${type}.tif`);
      fs.writeFileSync(tif, await file(type));
      info[type] = JSON.parse(execFileSync('gdalinfo', ['-json', '-stats', tif], { encoding: 'utf8' }));
      assert.equal(info[type].metadata?.IMAGE_STRUCTURE?.LAYOUT, 'COG', type);
      assert.match(JSON.stringify(info[type].coordinateSystem), /32615/, type);
      assert.ok(info[type].bands[0].overviews?.length >= 1 || Math.max(...info[type].size) <= 512, `${type} overviews`);
    }
    assert.equal(info.dsm.bands[0].noDataValue, -9999);
    assert.ok(info.dtm.bands[0].mean <= info.dsm.bands[0].mean + 1e-6, `DTM mean ${info.dtm.bands[0].mean}, DSM mean ${info.dsm.bands[0].mean}`);
    // The orthomosaic: RGBA with an alpha band, most of its cells coloured.
    assert.equal(info.ortho_rgb.bands.length, 4);
    assert.equal(info.ortho_rgb.bands[3].colorInterpretation, 'Alpha');
    // Opaque where the DSM has a height (the orthomosaic lies on its cells; outside its irregular
    // footprint both are empty): the alpha band's mean against the DSM's share of valid cells.
    const dsmValid = Number(info.dsm.bands[0].metadata?.['']?.STATISTICS_VALID_PERCENT) / 100;
    const opaque = info.ortho_rgb.bands[3].mean / 255;
    assert.ok(dsmValid > 0.3 && opaque >= 0.9 * dsmValid, `opaque ${opaque.toFixed(3)} of the cells, the DSM has ${dsmValid.toFixed(3)}`);
    const thumb = await sharp(await file('ortho_thumb')).metadata();
    assert.ok(thumb.format === 'png' && Math.max(thumb.width!, thumb.height!) <= 512, JSON.stringify(thumb));

    // The project's map: its layers described from the rasters' own headers, with their zooms.
    const details = await call('GET', `/projects/${project.id}/`);
    const layers = details.outputs.map.layers as any[];
    assert.deepEqual(layers.map((l) => l.name).sort(), ['dsm', 'dtm', 'ortho_rgb']);
    assert.ok(details.min_zoom > 10 && details.max_zoom >= details.min_zoom, `${details.min_zoom} ${details.max_zoom}`);
    fs.rmSync(work, { recursive: true, force: true });
    console.log(`# brighton (${WIDTH} px): ${report.points} sparse, ${las.count} dense points, mesh ${faces?.[1]} faces, DSM ${info.dsm.size.join('x')}, ortho ${info.ortho_rgb.size.join('x')}; stages ${JSON.stringify(report.stage_timings_s)}`);
  });
});
