// A stand-in for detect-antennas.ts that answers where it was told the asset is: one panel antenna
// centred above the asset's position at the lowest point's height, 1 m across. The detection's own
// frame (metres from an origin near the asset: detection-worker.ts) is then checked from outside
// by test/inventory-detection-parts.test.ts: the outcome must come back at the asset's absolute
// position. It also reports what it was given, in the reason of an `insufficient` answer when the
// cloud holds fewer than 10 points.
import type { DetectionInput, DetectionOutcome, Vec3 } from '../../src/inspection/inventory/detection/detection-types.ts';

export function detectAntennas(input: DetectionInput): DetectionOutcome {
  let minZ = Infinity;
  for (let i = 0; i < input.count; i++) minZ = Math.min(minZ, input.positions[3 * i + 2]);
  const given = `${input.count} points, asset at ${input.assetXY.map((v) => v.toFixed(3)).join(' ')}, lowest ${minZ.toFixed(3)}, convergence ${input.gridConvergenceDeg}, colours ${input.colours ? 'yes' : 'no'}`;
  if (input.count < 10) return { kind: 'insufficient', tower: null, reason: given };
  const [x, y] = input.assetXY;
  const centre: Vec3 = [x, y, minZ];
  const corners: Vec3[] = [];
  for (const dx of [-0.5, 0.5]) for (const dy of [-0.1, 0.1]) for (const dz of [-1, 1]) corners.push([x + dx, y + dy, minZ + dz]);
  return {
    kind: 'detected',
    tower: { base: [x, y, minZ], top: [x, y, minZ + 30], heightM: 30, verticalityDeg: 0, type: 'monopole' },
    items: [{ type: 'panel_antenna', centre, azimuthDeg: 0, downtiltDeg: 0, plumbDeg: 0, widthM: 1, heightM: 2, depthM: 0.2, heightAboveBaseM: 0, corners, confidence: 1, pointCount: input.count }],
    quality: { level: 'good', reasons: [given] },
  };
}
