// The worker thread of the antenna detection (detection-runner.ts): reads the cloud project's point
// cloud (LAS or LAZ: shared/pointcloud readPointCloudFile), moves it to a frame near the asset
// (origin: the asset's position rounded to metres, and the lowest point's height), in metres, so
// that Float32 coordinates keep a tenth of a millimetre, and runs the detector on it
// (detection/detect-antennas.ts). Reading millions of points and fitting take seconds of CPU; here
// they do not stall the service's other requests. One cloud per worker; the worker ends with it.
import { parentPort, workerData } from 'node:worker_threads';
import { LasFormatError, readPointCloudFile } from '../../shared/pointcloud/index.ts';
import type { DetectionInput, DetectionOutcome, Vec3 } from './detection/detection-types.ts';
import type { DetectionWorkerData, DetectionWorkerReply } from './detection-runner.ts';

const input = workerData as DetectionWorkerData;

/** The cloud in the detector's frame: metres from `origin` (the asset rounded to metres, the lowest point's height floored). */
async function readCloud(): Promise<{ positions: Float32Array; colours: Uint8Array | undefined; count: number; origin: Vec3 } | { error: string }> {
  let cloud;
  try {
    cloud = await readPointCloudFile(Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength));
  } catch (err) {
    if (err instanceof LasFormatError) return { error: `the point cloud cannot be read (${err.message})` };
    throw err;
  }
  const { count, positions: source } = cloud;
  let minZ = Infinity;
  for (let i = 0; i < count; i++) if (source[3 * i + 2] < minZ) minZ = source[3 * i + 2];
  const origin: Vec3 = [Math.round(input.assetXY[0]), Math.round(input.assetXY[1]), count > 0 ? Math.floor(minZ) : 0];
  const k = input.unitFactor;
  const positions = new Float32Array(count * 3);
  for (let i = 0; i < count * 3; i += 3) {
    positions[i] = (source[i] - origin[0]) * k;
    positions[i + 1] = (source[i + 1] - origin[1]) * k;
    positions[i + 2] = (source[i + 2] - origin[2]) * k;
  }
  return { positions, colours: cloud.colors ?? undefined, count, origin };
}

async function main(): Promise<DetectionWorkerReply> {
  const started = performance.now();
  const cloud = await readCloud(); // the absolute coordinates are dropped with readCloud's scope
  if ('error' in cloud) return { error: cloud.error, stage: 'read' };
  const readSeconds = (performance.now() - started) / 1000;
  const k = input.unitFactor;
  const detection: DetectionInput = {
    positions: cloud.positions,
    count: cloud.count,
    colours: cloud.colours,
    assetXY: [(input.assetXY[0] - cloud.origin[0]) * k, (input.assetXY[1] - cloud.origin[1]) * k],
    gridConvergenceDeg: input.gridConvergenceDeg,
  };
  const detector = (await import(input.detectorModule)) as { detectAntennas: (input: DetectionInput) => DetectionOutcome };
  let outcome: DetectionOutcome;
  try {
    outcome = detector.detectAntennas(detection);
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err), stage: 'detect' };
  }
  return { outcome, origin: cloud.origin, points: cloud.count, readSeconds, detectSeconds: (performance.now() - started) / 1000 - readSeconds };
}

main().then(
  (reply) => parentPort!.postMessage(reply),
  (err: unknown) => parentPort!.postMessage({ error: `the detection worker failed: ${err instanceof Error ? err.message : String(err)}`, stage: 'worker' } satisfies DetectionWorkerReply),
);
