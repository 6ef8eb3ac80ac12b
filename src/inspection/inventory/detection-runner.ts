// runAntennaDetection: the cloud project's point cloud (LAS/LAZ bytes, in the output coordinate
// system) -> the detector's outcome (detection/detection-types.ts) in that same system, computed
// on a worker thread (detection-worker.ts, through shared/worker-once.ts), as the mesh loader and the dense stages keep their
// CPU-heavy work off the event loop: reading a dense cloud of millions of points and fitting the
// tower and its equipment take seconds, which on the event loop would stall every other request.
// The bytes are transferred to the worker (not copied when they own their ArrayBuffer: the
// caller's Buffer is then detached); the outcome comes back as plain data and is moved back from
// the worker's frame (metres from an origin near the asset) to the output system.
// Whatever goes wrong in the worker (an unreadable cloud, the detector throwing, the worker dying,
// the time limit) rejects with DetectionFailure, whose message is in words for inventory_reason.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DetectionOutcome, Vec3 } from './detection/detection-types.ts';
import { runWorkerOnce, transferableBytes, type WorkerOnceError } from '../../shared/worker-once.ts';

/** The detection could not be done; `message` says why, for the person reviewing. */
export class DetectionFailure extends Error {}

export interface DetectionRunInput {
  /** The point cloud file (LAS or LAZ). */
  cloud: Buffer;
  /** The asset's position in the cloud's coordinate system (its units). */
  assetXY: [number, number];
  /** Metres per unit of the cloud's coordinates. */
  unitFactor: number;
  /** Degrees from true north to grid north at the asset (detection-types.ts). */
  gridConvergenceDeg: number;
}

export interface DetectionRun {
  /** In the cloud's coordinate system (lengths, heights and angles stay metres and degrees). */
  outcome: DetectionOutcome;
  points: number;
  readSeconds: number;
  detectSeconds: number;
}

export interface DetectionRunOptions {
  timeoutMs?: number;
  /** The module exporting `detectAntennas` (default detection/detect-antennas.ts); tests name another to make it fail. */
  detectorModule?: URL;
}

/** The worker's start data. */
export interface DetectionWorkerData {
  data: Uint8Array;
  assetXY: [number, number];
  unitFactor: number;
  gridConvergenceDeg: number;
  detectorModule: string;
}

/** The worker's one message. */
export type DetectionWorkerReply =
  | { outcome: DetectionOutcome; origin: Vec3; points: number; readSeconds: number; detectSeconds: number }
  | { error: string; stage: 'read' | 'detect' | 'worker' };

/** A dense cloud of tens of millions of points takes minutes; beyond this something is wrong. */
export const DEFAULT_DETECTION_TIMEOUT_MS = 20 * 60_000;

/** A DetectionRunner: runs the detection somewhere other than the event loop. */
export type DetectionRunner = (input: DetectionRunInput) => Promise<DetectionRun>;

// Under tsx the modules are .ts files (the worker inherits the --import tsx loader); built, .js.
const EXTENSION = path.extname(fileURLToPath(import.meta.url));
const WORKER = new URL(`./detection-worker${EXTENSION}`, import.meta.url);
export const DETECTOR_MODULE = new URL(`./detection/detect-antennas${EXTENSION}`, import.meta.url);

export async function runAntennaDetection(input: DetectionRunInput, options: DetectionRunOptions = {}): Promise<DetectionRun> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_DETECTION_TIMEOUT_MS;
  const bytes = transferableBytes(input.cloud);
  const workerData: DetectionWorkerData = {
    data: bytes,
    assetXY: input.assetXY,
    unitFactor: input.unitFactor,
    gridConvergenceDeg: input.gridConvergenceDeg,
    detectorModule: (options.detectorModule ?? DETECTOR_MODULE).href,
  };
  let reply: DetectionWorkerReply;
  try {
    reply = await runWorkerOnce<DetectionWorkerReply>(WORKER, workerData, [bytes.buffer], timeoutMs);
  } catch (err) {
    const e = err as WorkerOnceError;
    throw new DetectionFailure(
      e.kind === 'timeout' ? `the detection did not finish within ${Math.round(timeoutMs / 1000)} s` : e.kind === 'start' ? `the detection worker did not start (${e.message})` : e.kind === 'exit' ? `the detection worker ${e.message}` : `the detection worker failed: ${e.message}`,
    );
  }
  if ('error' in reply) throw new DetectionFailure(reply.stage === 'detect' ? `the detector failed: ${reply.error}` : reply.error);
  const [k, origin] = [input.unitFactor, reply.origin];
  const back = (p: Vec3): Vec3 => [p[0] / k + origin[0], p[1] / k + origin[1], p[2] / k + origin[2]];
  return { outcome: moveOutcome(reply.outcome, back), points: reply.points, readSeconds: reply.readSeconds, detectSeconds: reply.detectSeconds };
}

/** The outcome with every position mapped by `f` (sizes, heights above the base and angles unchanged). */
export function moveOutcome(outcome: DetectionOutcome, f: (p: Vec3) => Vec3): DetectionOutcome {
  const tower = <T extends { base: Vec3; top: Vec3 } | null>(t: T): T => (t ? { ...t, base: f(t.base), top: f(t.top) } : t);
  switch (outcome.kind) {
    case 'detected':
      return { ...outcome, tower: tower(outcome.tower), items: outcome.items.map((item) => ({ ...item, centre: f(item.centre), corners: item.corners.map(f) })) };
    case 'insufficient':
      return { ...outcome, tower: tower(outcome.tower) };
    default:
      return outcome;
  }
}
