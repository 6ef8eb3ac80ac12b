// Real photogrammetry end to end on a real dataset: lund (29 street photos, 1024x768, phone GPS;
// test/fixtures/lund, BSD licence) processed through the inspection service's public API, which
// drives the cloud service's (ENGINE=colmap), to status 7 and a DONE cloud project:
// - the cloud's outputs: cameras registered, refined quaternions, a georeferenced point cloud (LAS
//   read back) around the photos' GPS centroid, the quality report and the processing log;
//   the sparse model's points: COLMAP_DENSE off, as in the other lund runs (the dense stages run
//   once, on brighton in engine-colmap-dense; at the tests' 320 px depth maps lund's dense cloud
//   held about as many points as its sparse one, for 200 s of CPU, the most of any test);
// - the inspection: calibrated cameras imported (quaternions, refined positions), extras in the
//   cloud's output system, the point cloud clipped around the asset (status 5) as its point_cloud
//   output;
// - coords_3d: annotations drawn around a point visible in two photos get 3D positions from both
//   photos within 0.5 m of each other.
// Needs /usr/bin/colmap (skips with the reason otherwise, fails under CI=true). Takes minutes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import exifr from 'exifr';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { requireTool } from './helpers/system-tools.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { projectorFrom } from '../src/shared/geo/projection.ts';
import { readLas, cameraFromCalibrated, pickAlongRay, pixelRay, projectPoint, insideImage, boundsOf, type LasFile, type PhotoCamera, type Vec3 } from '../src/shared/pointcloud/index.ts';

const LUND = path.join(import.meta.dirname, 'fixtures', 'lund', 'images');
const UTM33 = projectorFrom({ proj4: '+proj=utm +zone=33 +datum=WGS84 +units=m +no_defs', axis_order: ['east', 'north'] })!;
/**
 * Around the asset (the photos' GPS centroid, in the open street): the facades the walk looks at
 * stand 10-60 m from it. At 40 m one CI run kept 9 points (the model placed a few metres further
 * off); the cloud reaches 150-200 m along the walk, so 60 m still leaves points outside.
 */
const CLIPPING_RADIUS = 60;

async function download(url: string): Promise<Buffer> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  return Buffer.from(await response.arrayBuffer());
}

describe('colmap engine on lund, through the inspection API', () => {
  let system: TestSystem | undefined;
  let account: TestAccount;
  let result: { inspection: any; calibrated: any; las: LasFile; cameras: any[] } | undefined;

  before(async () => {
    if (!fs.existsSync('/usr/bin/colmap')) return;
    system = await startTestSystem({ engine: 'colmap', colmapDense: false });
    account = await system.newAccount({ projects: 2 });
  });
  after(async () => {
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it('processes lund to status 7: calibrated cameras, georeferenced point cloud, clipped around the asset, report, log', async (t) => {
    if (!requireTool(t, '/usr/bin/colmap', 'colmap')) return;
    const client = account.client;
    const started = Date.now();
    const files = fs.readdirSync(LUND).filter((f) => f.endsWith('.jpg')).sort();
    const gps = await Promise.all(files.map(async (f) => (await exifr.gps(path.join(LUND, f)))!));
    const centre = { latitude: gps.reduce((s, g) => s + g.latitude, 0) / gps.length, longitude: gps.reduce((s, g) => s + g.longitude, 0) / gps.length };
    // The asset: the building in the middle of the walk (the photos' GPS centroid).
    const asset = await client.createAsset({ name: 'Lund building', type: 1, latitude: centre.latitude.toFixed(8), longitude: centre.longitude.toFixed(8) });
    const inspection = await client.createInspection({
      asset: asset.id,
      name: 'lund',
      processing_parameters: { generate_point_cloud: true, clip_point_cloud: true, clipping_radius: CLIPPING_RADIUS },
    });
    const credentials = await client.storageCredentials(inspection.id);
    const keys = await client.upload(credentials, files.map((name) => ({ name, body: fs.readFileSync(path.join(LUND, name)) })));
    assert.equal((await client.register(inspection.id, keys)).nb_images_registered, 29);
    await client.process(inspection.id);
    const statuses: number[] = [];
    const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 40 * 60_000, onStatus: (s) => statuses.push(s) });
    assert.equal(done.status, 7, `status ${done.status}: ${JSON.stringify(done)}`);
    assert.ok(statuses.includes(4), `statuses seen: ${statuses.join(' ')}`);

    // The cloud project, through the cloud API (the inspection service's own cloud client): DONE,
    // with what the colmap engine makes and what it does not.
    const cloud = await system!.inspection.cloudFor(inspection.id);
    assert.equal((await cloud.getProject(inspection.project_id)).public_status, 'DONE');
    const cloudOutputs = new Map((await cloud.outputs(inspection.project_id)).map((o) => [o.output_type, o]));
    for (const type of ['point_cloud', 'point_cloud_ply', 'calibrated_camera_parameters_json', 'quality_report', 'processing_log', 'project_thumb']) {
      assert.equal(cloudOutputs.get(type)?.availability, 'done', `${type}: ${JSON.stringify(cloudOutputs.get(type))}`);
    }
    for (const type of ['3d_mesh_obj_zip', 'dsm', 'ortho_rgb']) assert.equal(cloudOutputs.get(type)?.availability, 'not available', type);
    const fullCloud = cloudOutputs.get('point_cloud')!;
    const { body } = await system!.store.getObject(fullCloud.s3_bucket!, fullCloud.s3_key!);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const las = readLas(Buffer.concat(chunks));

    // The inspection's outputs, downloaded from their presigned URLs.
    const outputs = new Map<string, string>((await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`)).map((o: any) => [o.output_type, o.url]));
    const calibrated = JSON.parse((await download(outputs.get('calibrated_camera_parameters_json')!)).toString('utf8'));
    const report = JSON.parse((await download(outputs.get('quality_report')!)).toString('utf8'));
    const log = (await download(outputs.get('processing_log')!)).toString('utf8');
    // Not made, each with the reason in words: the dense stages are off here (which stages a request
    // runs is engine-colmap-stages' dense plan test; the words of 'not requested', engine-requested-outputs').
    assert.deepEqual(report.not_available.map((n: any) => n.output_type).sort(), ['3d_mesh_obj_zip', '3d_mesh_ply', 'dsm', 'dtm', 'ortho_rgb']);
    for (const n of report.not_available) assert.match(n.reason, /dense stages of the colmap engine are switched off/, JSON.stringify(n));
    const clipped = readLas(await download(outputs.get('point_cloud')!));
    if (process.env.ENGINE_TEST_OUTPUT_DIR) {
      // Keep the outputs to look at (e.g. in CloudCompare) after the test system is gone.
      fs.mkdirSync(process.env.ENGINE_TEST_OUTPUT_DIR, { recursive: true });
      for (const [type, url] of outputs) fs.writeFileSync(path.join(process.env.ENGINE_TEST_OUTPUT_DIR, `${type}${path.extname(new URL(url).pathname)}`), await download(url));
      fs.writeFileSync(path.join(process.env.ENGINE_TEST_OUTPUT_DIR, 'point_cloud_full.las'), Buffer.concat(chunks));
    }

    // Calibrated cameras: at least 27 of 29 registered, refined orientations (not identity).
    assert.equal(calibrated.reconstructed, true);
    // On failure, the processing log's mapping, georegistration and leveling lines say what happened.
    const diagnosis = log.split('\n').filter((line) => !line.startsWith('$ ') && /mapper|models:|fallback|georegistration|level|rolled|upside|collinear|misoriented/i.test(line)).join(' | ');
    assert.ok(calibrated.cameras.length >= 27, `registered ${calibrated.cameras.length} of 29; log: ${diagnosis}`);
    assert.equal(report.images.registered, calibrated.cameras.length);
    assert.ok(report.mean_reprojection_error_px > 0 && report.mean_reprojection_error_px < 2, String(report.mean_reprojection_error_px));
    // Upright street photos: each camera's image-down axis (camera y), turned to East-North-Up by
    // its quaternion, points down (the model is not rolled about the walk).
    const downUps = calibrated.cameras.map((c: any) => {
      const [w, x, y, z] = c.quaternion;
      return 2 * (y * z + w * x); // up component of the camera's y axis
    });
    assert.ok(downUps.filter((d: number) => d < -0.5).length >= calibrated.cameras.length - 2, `camera y axes' up components: ${calibrated.cameras.map((c: any, i: number) => `${c.image_name} ${downUps[i].toFixed(2)}`).join(' ')}; log: ${diagnosis}`);

    // The inspection's camera records: the calibrated quaternions and positions, imported.
    const cameras = await client.cameras(inspection.id);
    assert.equal(cameras.length, 29);
    const byKey = new Map(calibrated.cameras.map((c: any) => [path.posix.basename(c.key), c]));
    let imported = 0;
    for (const camera of cameras) {
      const c: any = byKey.get(camera.filename);
      if (!c) continue;
      imported++;
      assert.equal(camera.quaternions.length, 4);
      assert.ok(Math.abs(camera.quaternions[0]) < 0.999, `identity quaternion for ${camera.filename}`);
      for (let k = 0; k < 4; k++) assert.ok(Math.abs(camera.quaternions[k] - c.quaternion[k]) < 1e-9, camera.filename);
      assert.ok(Math.abs(camera.location.latitude - c.position_wgs84.latitude) < 1e-9 && Math.abs(camera.location.longitude - c.position_wgs84.longitude) < 1e-9, camera.filename);
    }
    assert.ok(imported >= 27, `${imported} camera records calibrated`);

    // The point cloud: LAS 1.2, format 2, in WGS 84 / UTM 33N, around the photos' GPS centroid.
    assert.equal(las.header.versionMajor, 1);
    assert.equal(las.header.versionMinor, 2);
    assert.equal(las.header.pointFormat, 2);
    assert.equal(las.header.horizontalEpsg, 32633);
    // The delivered cloud is the sparse model's points (the report's `points`), no dense stage ran.
    assert.equal(las.count, report.points);
    assert.equal(report.dense ?? null, null, JSON.stringify(report.dense));
    assert.ok(!/== (undistortion|depth-maps|fusion|meshing|elevation|orthophoto) ==/.test(log), 'no dense stage runs with COLMAP_DENSE off');
    assert.ok(las.count > 500, `points: ${las.count}`);
    const centroid = UTM33(centre.latitude, centre.longitude)!;
    const bounds = boundsOf(las);
    // The photos stand in the street and look at the facades: the cloud (facades, not the
    // street's far side) need not contain the cameras' centroid (CI: 16 m north of it), but a
    // georeferencing gone wrong puts it kilometres away. Horizontal distance from the box: ≤ 50 m.
    const outside = Math.hypot(Math.max(bounds.min[0] - centroid.x, 0, centroid.x - bounds.max[0]), Math.max(bounds.min[1] - centroid.y, 0, centroid.y - bounds.max[1]));
    assert.ok(outside <= 50, `centroid ${JSON.stringify(centroid)} ${outside.toFixed(1)} m from ${JSON.stringify(bounds)}`);
    assert.deepEqual(las.header.offset, calibrated.offset_3d_xyz);
    assert.match(log, /feature_extractor/);
    assert.match(log, /mapper/);

    // Extras: the cloud's output system (WKT) and offset.
    const extras = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/extras/`);
    // One format whatever the engine: OGC WKT, the same compound system as exif names (inspection-results.test.ts).
    assert.match(extras.coordinate_system, /^COMPD_CS\["WGS 84 \/ UTM zone 33N \+ EGM96 height",PROJCS\[.*VERT_CS\[/);
    assert.deepEqual(extras.offset_3d_xyz, calibrated.offset_3d_xyz);

    // ground_reference_altitude: the ground at the asset from the point cloud (ground-altitude.ts),
    // below the street-level cameras near the asset (hand-held: about 1.5 m above it) and not far
    // below them. Only the cameras within 25 m of the asset count: the phone's GPS heights vary by
    // 8 m along the walk and the model follows them, so a camera at the far end may sit 20 m lower
    // (one CI run) without the ground at the asset being wrong.
    const groundAltitude = Number(done.ground_reference_altitude);
    const nearAsset = calibrated.cameras
      .map((c: any) => c.position_output_crs)
      .filter((p: { x: number; y: number }) => Math.hypot(p.x - centroid.x, p.y - centroid.y) < 25)
      .map((p: { z: number }) => p.z)
      .sort((a: number, b: number) => a - b);
    assert.ok(nearAsset.length >= 3, `cameras within 25 m of the asset: ${nearAsset.length}`);
    const cameraHeight = nearAsset[Math.floor(nearAsset.length / 2)];
    assert.notEqual(done.ground_reference_altitude, '0.000');
    assert.ok(groundAltitude < cameraHeight + 1 && groundAltitude > cameraHeight - 10, `ground ${groundAltitude} m, median height of the cameras near the asset ${cameraHeight.toFixed(2)} m (${nearAsset.map((z: number) => z.toFixed(1)).join(' ')})`);

    // Clipping: the inspection's point cloud holds the points within CLIPPING_RADIUS of the asset, horizontally, and only those.
    const asset33 = centroid; // the asset stands at the centroid
    const horizontal = (cloud: LasFile, i: number) => Math.hypot(cloud.positions[3 * i] - asset33.x, cloud.positions[3 * i + 1] - asset33.y);
    let inside = 0;
    for (let i = 0; i < las.count; i++) if (horizontal(las, i) <= CLIPPING_RADIUS - 0.01) inside++;
    for (let i = 0; i < clipped.count; i++) assert.ok(horizontal(clipped, i) <= CLIPPING_RADIUS + 0.01, `point ${i} at ${horizontal(clipped, i).toFixed(2)} m`);
    assert.ok(clipped.count >= inside && clipped.count < las.count, `clipped ${clipped.count} of ${las.count} (${inside} inside)`);
    assert.ok(clipped.count > 50, `clipped: ${clipped.count} points`);
    assert.equal(clipped.header.horizontalEpsg, 32633);

    result = { inspection, calibrated, las, cameras };
    const reprojection = report.mean_reprojection_error_px.toFixed(3);
    const residuals = report.georeferencing.residuals_m;
    console.log(
      `# lund: ${calibrated.cameras.length}/29 images registered, mean reprojection error ${reprojection} px, ${las.count} points, GSD ${report.gsd_cm?.toFixed(2)} cm/px, ` +
        `cameras vs GPS median ${residuals?.median_total.toFixed(2)} m; bbox x ${bounds.min[0].toFixed(1)}..${bounds.max[0].toFixed(1)} y ${bounds.min[1].toFixed(1)}..${bounds.max[1].toFixed(1)} ` +
        `contains the GPS centroid (${centroid.x.toFixed(1)}, ${centroid.y.toFixed(1)}); ${imported} camera records with calibrated quaternions; ` +
        `clipped to ${CLIPPING_RADIUS} m: ${clipped.count} of ${las.count} points; statuses ${statuses.join(' -> ')}; ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    // Each stage's seconds, from the log's `== stage: n s ==` lines: where this file's time goes.
    console.log(`# lund stages: ${[...log.matchAll(/^== ([\w-]+): ([\d.]+) s ==$/gm)].map((m) => `${m[1]} ${m[2]} s`).join(', ')}`);
  });

  it('coords_3d: annotations around a point visible in two photos get 3D positions within 0.5 m of each other', async (t) => {
    if (!requireTool(t, '/usr/bin/colmap', 'colmap')) return;
    assert.ok(result, 'the lund reconstruction (previous test) is needed');
    const { inspection, calibrated, las, cameras } = result;
    const photoIds = new Map(cameras.map((c) => [c.filename, c.photo_id]));
    const photos: { name: string; camera: PhotoCamera }[] = calibrated.cameras.map((c: any) => ({ name: path.posix.basename(c.key), camera: cameraFromCalibrated(c)! }));
    // A point is cleanly visible in a photo when it projects inside the image, 1-40 m in front, and
    // every reconstructed point that projects within 10 px of it and is not behind it lies within
    // 0.2 m of it (computed here with projectPoint, the forward projection; the service casts the
    // ray back with pixelRay and searches the cloud). Its annotation: a 12 x 12 px rectangle
    // centred on its pixel.
    const HALF = 6;
    const cleanViews = (index: number) => {
      const p: Vec3 = [las.positions[3 * index], las.positions[3 * index + 1], las.positions[3 * index + 2]];
      return photos
        .map(({ name, camera }) => ({ name, camera, ...projectPoint(camera, p) }))
        .filter(({ camera, u, v, depth }) => depth > 1 && depth < 40 && u > HALF && v > HALF && u < camera.width - HALF && v < camera.height - HALF && insideImage(camera, u, v))
        .filter(({ camera, u, v, depth }) => {
          for (let j = 0; j < las.count; j++) {
            const q: Vec3 = [las.positions[3 * j], las.positions[3 * j + 1], las.positions[3 * j + 2]];
            const pq = projectPoint(camera, q);
            if (pq.depth <= 0 || pq.depth > depth + 0.01 || Math.hypot(pq.u - u, pq.v - v) > 10) continue;
            if (Math.hypot(q[0] - p[0], q[1] - p[1], q[2] - p[2]) > 0.2) return false;
          }
          return true;
        });
    };
    const annotate = async (view: { name: string; camera: PhotoCamera; u: number; v: number }) => {
      const [w, h] = [view.camera.width, view.camera.height];
      const [x0, x1, y0, y1] = [(view.u - HALF) / w, (view.u + HALF) / w, (view.v - HALF) / h, (view.v + HALF) / h];
      const created = await account.client.expect(201, 'POST', '/v1/annotations/?coords_3d=true', {
        type: 'Crack',
        inspection: inspection.id,
        photo_id: photoIds.get(view.name),
        data: { coords_2d: [[x0, y0], [x1, y0], [x1, y1], [x0, y1]] },
      });
      return created.coords_3d as { x: number; y: number; z: number } | null;
    };

    const checked: string[] = [];
    const misses: string[] = [];
    const unlocated: string[] = [];
    for (let i = 0; i < las.count && checked.length < 5; i += 7) {
      const views = cleanViews(i);
      if (views.length < 2) continue;
      // The first photo and the furthest one along the walk that finds it. The service casts its
      // ray with the calibration's distortion (pixelRay) where this test projects forward
      // (projectPoint), so near an image's edge the two can disagree by more than the pick's
      // cone: a miss from the furthest photo (seen once in CI on PostgreSQL, point 42) falls back
      // to the next furthest, at most twice, and is reported.
      const a = views[0];
      const fromA = await annotate(a);
      let b = views[views.length - 1];
      let fromB = await annotate(b);
      for (let k = views.length - 2; !fromB && k >= Math.max(1, views.length - 3); k--) {
        misses.push(`point ${i} from ${b.name} (${b.u.toFixed(0)}, ${b.v.toFixed(0)})`);
        b = views[k];
        fromB = await annotate(b);
      }
      if (!fromA || !fromB) {
        // No point in the pick's cone from one side (CI once: point 14, from three photos in a
        // row): the forward projection and the service's ray disagree there. Counted, bounded below.
        unlocated.push(`point ${i}: ${JSON.stringify(fromA)} ${JSON.stringify(fromB)}`);
        continue;
      }
      // The cloud's LAS scale is 1 mm: coordinates come back as millimetres, without float noise (3.1390000000000002).
      for (const v of [fromA.x, fromA.y, fromA.z, fromB.x, fromB.y, fromB.z]) assert.equal(v, Number(v.toFixed(3)), `coords_3d ${JSON.stringify(fromA)} ${JSON.stringify(fromB)}`);
      const apart = Math.hypot(fromA.x - fromB.x, fromA.y - fromB.y, fromA.z - fromB.z);
      const p: Vec3 = [las.positions[3 * i], las.positions[3 * i + 1], las.positions[3 * i + 2]];
      assert.ok(apart <= 0.5, `point ${i}: ${a.name} -> ${JSON.stringify(fromA)}, ${b.name} -> ${JSON.stringify(fromB)}: ${apart.toFixed(3)} m apart`);
      assert.ok(Math.hypot(fromA.x - p[0], fromA.y - p[1], fromA.z - p[2]) <= 0.5, `point ${i} (${p.join(', ')}) vs ${JSON.stringify(fromA)}`);
      checked.push(`point ${i} from ${a.name} (${a.u.toFixed(0)}, ${a.v.toFixed(0)}) and ${b.name} (${b.u.toFixed(0)}, ${b.v.toFixed(0)}): ${apart.toFixed(3)} m apart`);
    }
    assert.ok(checked.length >= 3, `only ${checked.length} points cleanly visible in two photos (without coords_3d: ${unlocated.join('; ') || 'none'})`);
    assert.ok(2 * unlocated.length <= checked.length, `points without coords_3d from one side: ${unlocated.join('; ')} (against ${checked.length} located from both)`);
    console.log(`# coords_3d on lund: ${checked.join('; ')}; missed from the furthest photo: ${misses.join('; ') || 'none'}; without coords_3d: ${unlocated.join('; ') || 'none'}`);
  });

  it('pickAlongRay on the lund reconstruction: points seen in two photos are found from both within 0.5 m', async (t) => {
    if (!requireTool(t, '/usr/bin/colmap', 'colmap')) return;
    assert.ok(result, 'the lund reconstruction (first test) is needed');
    const { calibrated, las } = result;
    const photos: PhotoCamera[] = calibrated.cameras.map((c: any) => cameraFromCalibrated(c)!);
    // Visibility without tie-point observations: a point is visible in a photo when it is the first
    // reconstructed point along the ray through its pixel (0.15 m tolerance); then a click one
    // pixel off in each of two such photos is cast back: both picks within 0.5 m of each other.
    // "Visible" must cover the click's offset too: a point up to 0.15 m from the offset ray lies
    // up to 0.15 m + t/fx from the exact one (t its distance along the ray), so visibility is
    // checked in that cone (1.5 pixels, for the distortion). With the bare 0.15 m tube, a nearer
    // point 0.14-0.15 m from the exact ray was caught by the offset click in 6-11 % of the
    // points (CI once saw 89 of 100, under the 90 % asserted): an occluder the click reaches,
    // not a wrong pick.
    const tolerance = 0.15;
    const clickOffsetPx = 1.5;
    let tried = 0;
    let agreed = 0;
    const disagreed: string[] = [];
    for (let i = 0; i < las.count && tried < 100; i += 5) {
      const point: Vec3 = [las.positions[3 * i], las.positions[3 * i + 1], las.positions[3 * i + 2]];
      const views = photos
        .map((camera) => ({ camera, ...projectPoint(camera, point) }))
        .filter(({ camera, u, v, depth }) => depth > 1 && depth < 40 && insideImage(camera, u, v))
        .filter(({ camera, u, v }) => {
          const ray = pixelRay(camera, u, v);
          return pickAlongRay(las, ray.origin, ray.direction, tolerance, clickOffsetPx / camera.fx)?.index === i;
        });
      if (views.length < 2) continue;
      tried++;
      const [a, b] = [views[0], views[views.length - 1]];
      const hits = [pixelRay(a.camera, a.u + 1, a.v), pixelRay(b.camera, b.u, b.v - 1)].map((ray) => pickAlongRay(las, ray.origin, ray.direction, tolerance));
      const picked = hits.map((h) => h?.point);
      const apart = picked[0] && picked[1] ? Math.hypot(picked[0][0] - picked[1][0], picked[0][1] - picked[1][1], picked[0][2] - picked[1][2]) : Infinity;
      if (apart <= 0.5) agreed++;
      else disagreed.push(`point ${i}: picked ${hits.map((h) => (h ? `${h.index} at ${h.distanceAlongRay.toFixed(2)} m, ${h.distanceFromRay.toFixed(3)} m off the ray` : 'nothing')).join(' and ')}, ${apart.toFixed(2)} m apart`);
    }
    console.log(`# pickAlongRay on lund: ${agreed} of ${tried} within 0.5 m${disagreed.length ? `; ${disagreed.join('; ')}` : ''}`);
    assert.ok(tried >= 20, `only ${tried} points seen unobstructed from two photos`);
    assert.ok(agreed >= 0.9 * tried, `${agreed} of ${tried} within 0.5 m`);
  });
});
