// The renderer's Node side: bundles page.ts (three.js and the materials) with esbuild, opens it in
// Debian's headless Chromium through playwright-core (WebGL on SwiftShader: CPU only, no GPU
// needed), sends the scene's triangles once, then asks for one photo per camera pose. The page
// returns a JPEG at high quality; photo-writer.ts re-encodes it with the drone's EXIF and XMP.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import sharp from 'sharp';
import { cameraToEnuQuaternion, multiplyQuaternions } from '../../../src/shared/geo/rotation.ts';
import type { CameraModel, CameraPose, MeshPart, SceneLayout } from '../scene-types.ts';
import type { PageScene, PageShot } from './page.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface ShotStyle {
  /** Exposure multiplier (1 = the metered exposure). */
  exposure: number;
  /** Exposure time in seconds, for the motion blur. */
  exposureTimeS: number;
  noiseSeed: number;
  /** Noise standard deviation as a fraction of full scale (0.01 ≈ 2.5 grey levels). */
  noise: number;
}

export interface TowerRenderer {
  triangles: number;
  render(pose: CameraPose, style: ShotStyle): Promise<Buffer>;
  close(): Promise<void>;
}

/** The camera's focal length in pixels and its vertical field of view. */
export function cameraGeometry(camera: CameraModel): { focalPx: number; verticalFovDeg: number } {
  const focalPx = (camera.focalLengthMm / camera.sensorWidthMm) * camera.widthPx;
  return { focalPx, verticalFovDeg: (2 * Math.atan(camera.heightPx / 2 / focalPx) * 180) / Math.PI };
}

/**
 * three.js looks down its camera's -z with +y up; the photogrammetry camera (rotation.ts) looks down
 * +z with +y down the image. The same rotation turned half a turn about the camera's x axis.
 */
export function threeQuaternion(pose: CameraPose): [number, number, number, number] {
  const [w, x, y, z] = multiplyQuaternions(cameraToEnuQuaternion({ yaw: pose.yawDeg, pitch: pose.pitchDeg, roll: pose.rollDeg }), [0, 1, 0, 0]);
  return [x, y, z, w];
}

/** The blur a photo gets from the drone's motion during the exposure, in pixels along the image's x and y. */
function motionBlurPx(pose: CameraPose, camera: CameraModel, exposureTimeS: number, distanceM: number): [number, number] {
  const q = cameraToEnuQuaternion({ yaw: pose.yawDeg, pitch: pose.pitchDeg, roll: pose.rollDeg });
  // Camera x and y axes in ENU (columns of the rotation), then the velocity's components along them.
  const [w, x, y, z] = q;
  const xAxis = [1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)];
  const yAxis = [2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)];
  const { focalPx } = cameraGeometry(camera);
  const along = (axis: number[]) => ((pose.velocity[0] * axis[0] + pose.velocity[1] * axis[1] + pose.velocity[2] * axis[2]) * exposureTimeS * focalPx) / Math.max(distanceM, 1);
  return [along(xAxis), along(yAxis)];
}

/**
 * Smears the photo along the blur vector when it is at least half a pixel (a hovering drone's
 * photos mostly are sharp: 0.3 m/s for 1/800 s at 15 m is 0.07 px); a line kernel over the
 * vector's length, rounded to whole pixels along its main axis.
 */
async function applyMotionBlur(jpeg: Buffer, [bx, by]: [number, number]): Promise<Buffer> {
  const length = Math.hypot(bx, by);
  if (length < 0.5) return jpeg;
  const size = 2 * Math.ceil(length / 2) + 1;
  const kernel = new Array<number>(size * size).fill(0);
  const steps = 4 * size;
  for (let k = 0; k <= steps; k++) {
    const t = k / steps - 0.5;
    const x = Math.round((size - 1) / 2 + t * bx), y = Math.round((size - 1) / 2 + t * by);
    kernel[y * size + x] += 1;
  }
  return sharp(jpeg).convolve({ width: size, height: size, kernel, scale: steps + 1 }).jpeg({ quality: 96 }).toBuffer();
}

async function bundlePage(): Promise<string> {
  const result = await build({ entryPoints: [path.join(import.meta.dirname, 'page.ts')], bundle: true, write: false, format: 'iife', target: 'es2022', logLevel: 'silent' });
  return result.outputFiles[0].text;
}

function encodeFloats(positions: Float32Array): string {
  return Buffer.from(positions.buffer, positions.byteOffset, positions.byteLength).toString('base64');
}

export async function openRenderer(layout: SceneLayout, parts: MeshPart[], camera: CameraModel): Promise<TowerRenderer> {
  if (!fs.existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} not found: the renderer needs Chromium (Debian package chromium, or CHROMIUM_PATH)`);
  const script = await bundlePage();
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist', '--disable-gpu-watchdog', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page: Page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.setContent('<!doctype html><html><body style="margin:0"></body></html>');
    await page.addScriptTag({ content: script });
    const scene: PageScene = {
      parts: parts.map((p) => ({ material: p.material, positions: encodeFloats(p.positions), tint: p.tint })),
      seed: layout.seed,
      sun: layout.site.sun,
      shadowExtentM: Math.max(layout.compound.halfSideM + 6, layout.tower.heightM * 0.9),
      towerHeightM: layout.tower.heightM,
      width: camera.widthPx,
      height: camera.heightPx,
      verticalFovDeg: cameraGeometry(camera).verticalFovDeg,
    };
    const { triangles } = await page.evaluate((s) => window.towerScene!(s), scene);
    if (problems.length) throw new Error(`the renderer's page failed: ${problems.join('; ')}`);
    return {
      triangles,
      async render(pose, style) {
        const shot: PageShot = { position: pose.position, quaternion: threeQuaternion(pose), exposure: style.exposure, noiseSeed: style.noiseSeed, noise: style.noise, jpegQuality: 0.96 };
        const base64 = await page.evaluate((s) => window.towerShot!(s), shot);
        if (problems.length) throw new Error(`the renderer's page failed: ${problems.join('; ')}`);
        const jpeg = Buffer.from(base64, 'base64');
        // The distance to what the photo looks at: the tower's centre line (the flight aims there).
        const blur = motionBlurPx(pose, camera, style.exposureTimeS, Math.hypot(pose.position[0], pose.position[1]));
        return applyMotionBlur(jpeg, blur);
      },
      close: () => browser.close(),
    };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
