// Outputs as the real cloud API gives them (issue 12, part 2): `result_type` groups them as Pix4D's
// demo client expects (ortho, dsm, point_cloud, 3d_mesh_obj, ...); the project's own storage
// credentials read (never write) its results, through @aws-sdk/client-s3 and through boto3 doing
// what the demo client does; and the project record's `outputs` block carries the map layers read
// from the engine's GeoTIFFs (WGS 84 bounds, zooms from the ground resolution), the quality
// reports and the client's name. Engines: exif (no raster: layers stay empty) and nodeodm on a
// fake node whose orthophoto, DSM and DTM are real GeoTIFFs (helpers/fake-geotiff.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import proj4 from 'proj4';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startTestSystem, tempDir, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { startFakeNodeOdm, FAKE_ORIGIN, FAKE_RASTER_EXTENT, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { requireTool } from './helpers/system-tools.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { describeRaster } from '../src/cloud/processing/map-layers.ts';

const P = '/project/api/v3/projects';
const run = promisify(execFile);

async function s3ErrorOf(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
    return { name: 'no error', status: undefined };
  } catch (err) {
    return { name: (err as Error).name, status: (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode };
  }
}

async function bytesOf(system: TestSystem, bucket: string, key: string): Promise<Buffer> {
  const { body } = await system.store.getObject(bucket, key);
  return Buffer.concat(await body.toArray());
}

/** True with boto3 importable by /usr/bin/python3; else skips (fails under CI=true). */
async function requireBoto3(t: Parameters<typeof requireTool>[0]): Promise<boolean> {
  if (!requireTool(t, '/usr/bin/python3', 'python3')) return false;
  try {
    await run('/usr/bin/python3', ['-c', 'import boto3']);
    return true;
  } catch {
    const reason = 'boto3 is not importable by /usr/bin/python3 (Debian package python3-boto3)';
    if (process.env.CI === 'true') throw new Error(`${reason}; CI must install it`);
    t.skip(reason);
    console.log(`# skipped: ${reason}`);
    return false;
  }
}

describe('cloud outputs: result_type, reading results with the project\'s credentials, the outputs block', () => {
  let node: FakeNodeOdm;
  let system: TestSystem;
  let api: CloudTestClient;
  let images: { name: string; body: Buffer }[];
  let exifProject: any;
  let odmProject: any;

  before(async () => {
    node = await startFakeNodeOdm({ pollsToFinish: 1 });
    // DSM asked for by the request; DTM by the deployment's ODM options (as NODEODM_OPTIONS would).
    system = await startTestSystem({ engine: 'exif', engines: ['nodeodm'], nodeodmUrl: node.url, nodeodmPollSeconds: 0, nodeodmOptions: '{"dtm": true}' });
    api = await cloudClient(system, 'Survey Co');
    images = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => ({
        name: `DJI_000${i}.JPG`,
        body: await generateGeotaggedJpeg({ latitude: FAKE_ORIGIN.latitude + i * 0.0001, longitude: FAKE_ORIGIN.longitude + i * 0.0001, altitude: FAKE_ORIGIN.altitude, seed: i + 1, width: 160, height: 120 }),
      })),
    );
    const processed = async (name: string, start: object) => {
      const project = await api.call('POST', `${P}/`, { name }, { expect: 201 });
      const keys = [];
      for (const image of images) keys.push(await api.put(project, image.name, image.body));
      await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
      await api.call('POST', `${P}/${project.id}/start_processing/`, start, { expect: 202 });
      const done = await api.waitFor(project.id, settled, 60_000);
      assert.equal(done.public_status, 'DONE', `${done.error_code}: ${done.error_reason}`);
      return done;
    };
    exifProject = await processed('exif outputs', { tags: ['nadir'] });
    odmProject = await processed('nodeodm outputs', { tags: ['nadir'], engine: 'nodeodm', outputs: { dsm: true } });
  });
  after(async () => {
    assertNoServerErrors(system);
    await system?.stop();
    await node?.close();
  });

  const outputsOf = async (id: number): Promise<any[]> => (await api.call('GET', `${P}/${id}/outputs/`, undefined, { expect: 200 })).outputs;
  const groups = (outputs: any[]) => {
    const byResult: Record<string, string[]> = {};
    for (const o of outputs) (byResult[o.result_type] ??= []).push(o.output_type);
    for (const list of Object.values(byResult)) list.sort();
    return byResult;
  };

  it('result_type groups the outputs as the real API does (exif engine; the inputs bundle too)', async () => {
    await api.call('POST', `${P}/${exifProject.id}/inputs/zip/`, undefined, { expect: 202 });
    await api.waitFor(exifProject.id, (p) => p.outputs.bundles.inputs.status === 'done');
    assert.deepEqual(groups(await outputsOf(exifProject.id)), {
      calibrated_camera_parameters: ['calibrated_camera_parameters_json'],
      project_thumb: ['project_thumb'],
      input_zip: ['input_zip'],
      // Not made by this engine, listed `not available` in their groups all the same.
      point_cloud: ['point_cloud'],
      '3d_mesh_obj': ['3d_mesh_obj_zip'],
      dsm: ['dsm'],
      ortho: ['ortho_rgb'],
    });
  });

  it('result_type of a nodeodm run: ortho, dsm, dtm, point_cloud, 3d_mesh_obj, quality_report, mapper_log, calibrated_camera_parameters', async () => {
    const outputs = await outputsOf(odmProject.id);
    assert.deepEqual(groups(outputs), {
      ortho: ['ortho_rgb'],
      dsm: ['dsm'],
      dtm: ['dtm'],
      // The node's LAZ and its PLY copy for the 3D view (nodeodm/point-cloud-ply.ts).
      point_cloud: ['point_cloud', 'point_cloud_ply'],
      '3d_mesh_obj': ['3d_mesh_obj_zip'],
      calibrated_camera_parameters: ['calibrated_camera_parameters_json'],
      quality_report: ['quality_report', 'quality_report_pdf'],
      mapper_log: ['processing_log'],
    });
    // This fake node's cloud is not a real LAZ: its PLY copy is listed not available, with why.
    const ply = outputs.find((o) => o.output_type === 'point_cloud_ply');
    assert.equal(ply?.availability, 'not available');
    assert.match((ply as { note?: string } | undefined)?.note ?? '', /could not be read to copy it as PLY/);
    const others = outputs.filter((o) => o.output_type !== 'point_cloud_ply');
    assert.ok(others.every((o) => o.availability === 'done'), JSON.stringify(others.filter((o) => o.availability !== 'done')));
    // The demo client's filter finds exactly the orthophoto.
    const ortho = outputs.filter((o) => o.result_type === 'ortho' && o.output_type === 'ortho_rgb');
    assert.equal(ortho.length, 1);
    assert.match(ortho[0].s3_key, new RegExp(`^results/${odmProject.uuid}/`));
  });

  it('the project\'s storage credentials read and list its results (AWS SDK), never write them; other projects\' stay closed', async () => {
    const credentials = await api.call('GET', `${P}/${odmProject.id}/s3_credentials/`, undefined, { expect: 200 });
    assert.equal(credentials.key, `${odmProject.s3_base_path}/`, '`key` stays the only writable prefix');
    const s3 = new S3Client({
      region: credentials.region,
      endpoint: credentials.endpoint_override,
      forcePathStyle: true,
      credentials: { accessKeyId: credentials.access_key, secretAccessKey: credentials.secret_key, sessionToken: credentials.session_token },
    });
    try {
      const outputs = await outputsOf(odmProject.id);
      for (const output of outputs.filter((o) => o.availability === 'done')) {
        const got = await s3.send(new GetObjectCommand({ Bucket: output.s3_bucket, Key: output.s3_key }));
        const body = Buffer.from(await got.Body!.transformToByteArray());
        assert.ok(body.equals(await bytesOf(system, output.s3_bucket, output.s3_key)), output.output_type);
      }
      const ortho = outputs.find((o) => o.output_type === 'ortho_rgb');
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: ortho.s3_bucket, Prefix: `results/${odmProject.uuid}/` }));
      assert.ok((listed.Contents ?? []).some((o) => o.Key === ortho.s3_key), 'listing the results');

      // Writing there is refused: overwrite, delete, a copy into the results, a new key.
      const before = await bytesOf(system, ortho.s3_bucket, ortho.s3_key);
      for (const [label, attempt] of [
        ['overwrite', () => s3.send(new PutObjectCommand({ Bucket: ortho.s3_bucket, Key: ortho.s3_key, Body: 'overwritten' }))],
        ['new key', () => s3.send(new PutObjectCommand({ Bucket: ortho.s3_bucket, Key: `results/${odmProject.uuid}/planted.txt`, Body: 'x' }))],
        ['delete', () => s3.send(new DeleteObjectCommand({ Bucket: ortho.s3_bucket, Key: ortho.s3_key }))],
        ['copy into', () => s3.send(new CopyObjectCommand({ Bucket: ortho.s3_bucket, Key: `results/${odmProject.uuid}/copy.tif`, CopySource: `${ortho.s3_bucket}/${ortho.s3_key}` }))],
      ] as const) {
        assert.deepEqual(await s3ErrorOf(attempt()), { name: 'AccessDenied', status: 403 }, label);
      }
      assert.ok((await bytesOf(system, ortho.s3_bucket, ortho.s3_key)).equals(before), 'the output is untouched');
      // A copy out of the results into the uploads prefix: refused too, since the uploads closed
      // when processing started (issue 40 §8; these credentials, asked for after, only read).
      assert.deepEqual(
        await s3ErrorOf(s3.send(new CopyObjectCommand({ Bucket: ortho.s3_bucket, Key: `${credentials.key}ortho-copy.tif`, CopySource: `${ortho.s3_bucket}/${ortho.s3_key}` }))),
        { name: 'AccessDenied', status: 403 },
      );

      // Another project's results (same organization) stay closed to these credentials.
      const other = (await outputsOf(exifProject.id)).find((o) => o.availability === 'done' && o.output_type === 'calibrated_camera_parameters_json');
      assert.deepEqual(await s3ErrorOf(s3.send(new GetObjectCommand({ Bucket: other.s3_bucket, Key: other.s3_key }))), { name: 'AccessDenied', status: 403 });
      assert.deepEqual(await s3ErrorOf(s3.send(new ListObjectsV2Command({ Bucket: other.s3_bucket, Prefix: 'results/' }))), { name: 'AccessDenied', status: 403 });
    } finally {
      s3.destroy();
    }
  });

  it('Pix4D\'s demo client pattern with boto3: outputs listed by result_type, the orthophoto downloaded with the project\'s credentials, a write refused (403)', async (t) => {
    if (!(await requireBoto3(t))) return;
    const work = tempDir('oi-boto3-');
    try {
      const script = path.join(import.meta.dirname, 'fixtures', 'pix4d_demo_client.py');
      const { stdout } = await run('/usr/bin/python3', [script, system.urls.cloud, api.clientId, api.clientSecret, String(odmProject.id), work], { timeout: 60_000 });
      const result = JSON.parse(stdout);
      console.log(`# boto3 demo pattern: result types ${Object.keys(result.by_result_type).sort().join(', ')}; downloaded ${result.downloaded.key} (${result.downloaded.size} bytes); write: ${JSON.stringify(result.refused_write)}`);
      assert.deepEqual(result.by_result_type.ortho, ['ortho_rgb']);
      assert.deepEqual(result.by_result_type.dsm, ['dsm']);
      assert.deepEqual(result.by_result_type.point_cloud, ['point_cloud', 'point_cloud_ply']);
      assert.deepEqual(result.by_result_type['3d_mesh_obj'], ['3d_mesh_obj_zip']);
      const expected = await bytesOf(system, odmProject.bucket_name, result.downloaded.key);
      assert.equal(result.downloaded.size, expected.length);
      assert.equal(result.downloaded.sha256, crypto.createHash('sha256').update(expected).digest('hex'));
      assert.deepEqual(result.listed, [result.downloaded.key]);
      assert.deepEqual(result.refused_write, { code: 'AccessDenied', status: 403 });
      assert.ok((await bytesOf(system, odmProject.bucket_name, result.downloaded.key)).equals(expected), 'the write did not happen');
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('nodeodm: map layers from the GeoTIFFs (WGS 84 bounds, resolution, zooms), map bounds and zooms of the project, reports, user_display_name', async () => {
    const project = await api.call('GET', `${P}/${odmProject.id}/`, undefined, { expect: 200 });
    assert.equal(project.user_display_name, 'Survey Co client', 'the name of the API client that created it');
    const layers: any[] = project.outputs.map.layers;
    assert.deepEqual(layers.map((l) => [l.name, l.layer_type]).sort(), [['dsm', 'dsm'], ['dtm', 'dtm'], ['ortho_rgb', 'ortho']]);

    // The extent of the rasters: their UTM 15N corners in WGS 84.
    const R = FAKE_RASTER_EXTENT;
    const toWgs84 = proj4(R.proj4, 'EPSG:4326');
    const corners = [[R.west, R.north], [R.east, R.north], [R.west, R.south], [R.east, R.south]].map((c) => toWgs84.forward(c));
    const expected = { sw: [Math.min(...corners.map((c) => c[1])), Math.min(...corners.map((c) => c[0]))], ne: [Math.max(...corners.map((c) => c[1])), Math.max(...corners.map((c) => c[0]))] };
    const outputs = await outputsOf(odmProject.id);
    for (const layer of layers) {
      const output = outputs.find((o) => o.output_type === layer.name);
      assert.equal(layer.output_id, output.output_id);
      assert.equal(layer.s3_key, output.s3_key);
      assert.equal(layer.epsg, 32615);
      for (const corner of ['sw', 'ne'] as const) {
        for (const i of [0, 1]) assert.ok(Math.abs(layer.bounds[corner][i] - expected[corner][i]) < 1e-7, `${layer.name} ${corner}[${i}] ${layer.bounds[corner][i]} vs ${expected[corner][i]}`);
      }
      const pixel = layer.name === 'ortho_rgb' ? R.orthoPixel : R.demPixel;
      assert.ok(Math.abs(layer.resolution_m - pixel) / pixel < 0.005, `${layer.name} resolution ${layer.resolution_m} m, ${pixel} m expected`);
      assert.deepEqual([layer.width, layer.height], [R.width / pixel, R.height / pixel]);
    }
    // Zooms (256-pixel Web Mercator tiles at 46.84° N: 107,100 m per pixel at zoom 0): the
    // orthophoto's 0.25 m pixels reach zoom 18 (0.41 m), not 19 (0.20 m); 200 m fit in one tile
    // at zoom 17 (209 m). The DSM's 2 m pixels: zoom 15 (3.3 m), and its extent caps min at 15.
    const zooms = Object.fromEntries(layers.map((l) => [l.name, [l.min_zoom, l.max_zoom]]));
    assert.deepEqual(zooms, { ortho_rgb: [17, 18], dsm: [15, 15], dtm: [15, 15] });
    assert.deepEqual([project.min_zoom, project.max_zoom], [15, 18]);
    assert.deepEqual(project.outputs.map.bounds, layers[0].bounds, 'the map bounds are the layers\' extent (all three share it)');

    // Reports: the JSON quality report and ODM's PDF.
    const reports = project.outputs.reports;
    assert.deepEqual(Object.keys(reports).sort(), ['quality_report', 'quality_report_pdf']);
    assert.equal(reports.quality_report.status, 'processed');
    assert.equal(reports.quality_report.format, 'json');
    assert.equal(reports.quality_report_pdf.format, 'pdf');
    assert.equal(reports.quality_report.s3_key, outputs.find((o) => o.output_type === 'quality_report').s3_key);
    assert.equal(reports.quality_report.s3_bucket, odmProject.bucket_name);
    // The same in the project list.
    const listed = (await api.call('GET', `${P}/`, undefined, { expect: 200 })).find((p: any) => p.id === odmProject.id);
    assert.deepEqual(listed.outputs.map, project.outputs.map);
    assert.equal(listed.user_display_name, 'Survey Co client');
  });

  it('the layers\' bounds agree with GDAL\'s reading of the same GeoTIFFs', async (t) => {
    if (!requireTool(t, '/usr/bin/gdalinfo', 'gdal-bin')) return;
    const project = await api.call('GET', `${P}/${odmProject.id}/`, undefined, { expect: 200 });
    const work = tempDir('oi-gdal-');
    try {
      for (const layer of project.outputs.map.layers) {
        const file = path.join(work, `${layer.name}.tif`);
        fs.writeFileSync(file, await bytesOf(system, layer.s3_bucket, layer.s3_key));
        const info = JSON.parse((await run('/usr/bin/gdalinfo', ['-json', file])).stdout);
        const ring: number[][] = info.wgs84Extent.coordinates[0];
        const lons = ring.map((c) => c[0]);
        const lats = ring.map((c) => c[1]);
        // gdalinfo prints 7 decimals.
        for (const [ours, theirs] of [
          [layer.bounds.sw[0], Math.min(...lats)],
          [layer.bounds.sw[1], Math.min(...lons)],
          [layer.bounds.ne[0], Math.max(...lats)],
          [layer.bounds.ne[1], Math.max(...lons)],
        ]) {
          assert.ok(Math.abs(ours - theirs) < 2e-7, `${layer.name}: ${ours} vs GDAL ${theirs}`);
        }
        assert.deepEqual(info.size, [layer.width, layer.height]);
      }
      // GeoTIFFs as GDAL writes them (as ODM's are): BigTIFF tiled, big-endian, cloud-optimized
      // with overviews, in geographic coordinates; the reader finds the same extent in each.
      const ortho = project.outputs.map.layers.find((l: any) => l.name === 'ortho_rgb');
      const source = path.join(work, 'ortho_rgb.tif');
      for (const [label, args] of [
        ['bigtiff', ['-co', 'BIGTIFF=YES', '-co', 'TILED=YES']],
        ['big-endian', ['-co', 'ENDIANNESS=BIG']],
        ['cog', ['-of', 'COG']],
        ['wgs84', []], // reprojected by gdalwarp
      ] as const) {
        const file = path.join(work, `${label}.tif`);
        if (label === 'wgs84') await run('/usr/bin/gdalwarp', ['-q', '-t_srs', 'EPSG:4326', source, file]);
        else await run('/usr/bin/gdal_translate', ['-q', ...args, source, file]);
        const key = `test-rasters/${crypto.randomUUID()}/${label}.tif`;
        await system.store.putObject(odmProject.bucket_name, key, fs.readFileSync(file));
        const info = await describeRaster(system.store, odmProject.bucket_name, key);
        assert.ok(info, label);
        const tolerance = label === 'wgs84' ? 1e-5 : 1e-9; // gdalwarp's output grid snaps to its own pixels
        for (const corner of ['sw', 'ne'] as const) for (const i of [0, 1]) assert.ok(Math.abs(info.bounds[corner][i] - ortho.bounds[corner][i]) < tolerance, `${label} ${corner}[${i}]: ${info.bounds[corner][i]} vs ${ortho.bounds[corner][i]}`);
        assert.equal(info.epsg, label === 'wgs84' ? 4326 : 32615, label);
      }
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('exif: no raster, so no layer: layers empty, zooms 0, reports empty; bounds stay the images\' extent', async () => {
    const project = await api.call('GET', `${P}/${exifProject.id}/`, undefined, { expect: 200 });
    assert.deepEqual(project.outputs.map.layers, []);
    assert.deepEqual([project.min_zoom, project.max_zoom], [0, 0]);
    assert.deepEqual(project.outputs.reports, {}, 'the exif engine writes no quality report');
    assert.equal(project.user_display_name, 'Survey Co client');
    const lats = images.map((_, i) => FAKE_ORIGIN.latitude + i * 0.0001);
    assert.ok(Math.abs(project.outputs.map.bounds.sw[0] - Math.min(...lats)) < 1e-6);
    assert.ok(Math.abs(project.outputs.map.bounds.ne[0] - Math.max(...lats)) < 1e-6);
  });

  it('a project not processed yet has no layer, zoom or report either', async () => {
    const fresh = await api.call('POST', `${P}/`, { name: 'fresh' }, { expect: 201 });
    assert.deepEqual(fresh.outputs.map, { layers: [], bounds: null });
    assert.deepEqual([fresh.min_zoom, fresh.max_zoom, fresh.outputs.reports], [0, 0, {}]);
    assert.equal(fresh.user_display_name, 'Survey Co client');
  });

  it('after deletion, the credentials read the results no more', async () => {
    const credentials = await api.call('GET', `${P}/${exifProject.id}/s3_credentials/`, undefined, { expect: 200 });
    const output = (await outputsOf(exifProject.id)).find((o) => o.output_type === 'calibrated_camera_parameters_json');
    const s3 = new S3Client({
      region: credentials.region,
      endpoint: credentials.endpoint_override,
      forcePathStyle: true,
      credentials: { accessKeyId: credentials.access_key, secretAccessKey: credentials.secret_key, sessionToken: credentials.session_token },
    });
    try {
      await s3.send(new GetObjectCommand({ Bucket: output.s3_bucket, Key: output.s3_key }));
      await api.call('DELETE', `${P}/${exifProject.id}/`, undefined, { expect: 204 });
      assert.deepEqual(await s3ErrorOf(s3.send(new GetObjectCommand({ Bucket: output.s3_bucket, Key: output.s3_key }))), { name: 'AccessDenied', status: 403 });
    } finally {
      s3.destroy();
    }
  });
});
