// The EngineInput of an engine run alone in a test (no project, no job): the images already stored
// under `${prefix}inputs/`, the output system the cloud service would resolve for their positions,
// and the progress the engine reports, recorded. Also the drone strip the colmap stand-in tests fly.
import assert from 'node:assert/strict';
import { generateGeotaggedJpeg } from '../../scripts/generate-demo-images.ts';
import { resolveOutputCrs } from '../../src/cloud/coordinate-systems/crs.ts';
import type { EngineInput } from '../../src/cloud/processing/engine.ts';
import type { ReadableImage } from '../../src/cloud/processing/input-analysis.ts';
import type { ObjectStore } from '../../src/infra/storage/object-store.ts';
import { cameraToEnuQuaternion } from '../../src/shared/geo/rotation.ts';

export const ENGINE_TEST_BUCKET = 'inspection-data';
/** The drone strip's gimbal: looking straight down, the image top to the north. */
export const DRONE_STRIP_GIMBAL = { yaw: 0, pitch: -90, roll: 0 };

export function engineInput(store: ObjectStore, prefix: string, images: EngineInput['images'], signal = new AbortController().signal): EngineInput & { progress: number[] } {
  // As project-processing.ts does: the output system from the images that carry a position.
  const positions = images.filter((i) => i.latitude !== null && i.longitude !== null) as (ReadableImage & { latitude: number; longitude: number })[];
  const crs = resolveOutputCrs({ requested: null, positions });
  assert.ok(crs.ok);
  const progress: number[] = [];
  return {
    projectId: 1,
    projectUuid: crypto.randomUUID(),
    bucket: ENGINE_TEST_BUCKET,
    inputs: images.map(({ key, size }) => ({ key, size })),
    images,
    outputPrefix: `${prefix}outputs/`,
    outputCrs: crs.crs,
    pipeline: 'nadir',
    tags: ['nadir'],
    controlPoints: { gcps: [], mtps: [], marks: [] },
    store,
    signal,
    progress,
    async reportProgress(percent) {
      progress.push(percent);
    },
  };
}

/** `count` DJI photos of a strip northwards, 40 m up, 10 m apart, looking down (XMP gimbal and RelativeAltitude), stored under `${prefixRoot}/<uuid>/inputs/`. */
export async function droneStripInput(store: ObjectStore, prefixRoot: string, count: number): Promise<EngineInput & { progress: number[] }> {
  const prefix = `${prefixRoot}/${crypto.randomUUID()}/`;
  const images: EngineInput['images'] = [];
  for (let i = 0; i < count; i++) {
    const latitude = 46.5183 + i * 9e-5;
    const body = await generateGeotaggedJpeg({ latitude, longitude: 6.5619, altitude: 460, relativeAltitude: 40, gimbal: DRONE_STRIP_GIMBAL, seed: i + 1, width: 160, height: 120, make: 'DJI', model: 'FC300S', focalLength35mm: 20 });
    const key = `${prefix}inputs/img${String(i).padStart(2, '0')}.jpg`;
    await store.putObject(ENGINE_TEST_BUCKET, key, body);
    images.push({ key, size: body.length, ok: true, width: 160, height: 120, latitude, longitude: 6.5619, altitude: 460, make: 'DJI', model: 'FC300S', focal_length_35mm: 20, captured_at: null, quaternion: cameraToEnuQuaternion(DRONE_STRIP_GIMBAL), format: 'jpeg' });
  }
  return engineInput(store, prefix, images);
}
