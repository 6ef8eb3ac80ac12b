// Automatic antenna detection (issue 36 §3): `detectAntennas` takes a dense cloud with z up, the
// asset's position and the grid convergence (detection-types.ts) and answers with the tower and
// its equipment, or why there is none. Pure computation: no I/O, no service imports, so the
// inspection service runs it in a worker thread. The stages, each its own module:
//   local-cloud.ts   the points within the search radius, in a local float32 frame; the spacing and
//                    the noise every threshold below derives from;
//   ground.ts        the terrain under a sloped site and compound, and the ground at the tower's foot;
//   tower-axis.ts    the tower (tower-sections.ts: monopole or lattice cross-sections), its centre
//                    line, verticality, foot and top;
//   equipment-segments.ts  what hangs on it, as segments;
//   items.ts / box-fit.ts  a box or a disc per item, named by its shape and size;
//   orientation.ts   azimuth from true north, downtilt, plumb, corners;
//   quality.ts       insufficient or borderline clouds, in words.
// It never throws on a cloud: a tiny, empty or odd one answers no-tower or insufficient.
import type { DetectedItem, DetectionInput, DetectionOutcome } from './detection-types.ts';
import { formatM } from './geometry.ts';
import { equipmentSegments, type Scales } from './equipment-segments.ts';
import { terrainGrid } from './ground.ts';
import { fitItems, type FittedItem } from './items.ts';
import { cropAroundAsset, strideSample, surfaceNoise, surfaceSpacing, type LocalCloud } from './local-cloud.ts';
import { cornersOf, orientationOf } from './orientation.ts';
import { assessQuality, tooThin } from './quality.ts';
import { BinIndex } from './spatial-index.ts';
import { axisAt, describeTower, findTower, radiusAt, type TowerModel } from './tower-axis.ts';

/** Default horizontal search radius around the asset (m): a compound and the tower's footprint. */
export const DEFAULT_SEARCH_RADIUS = 25;
/** Fewer points than this within the search radius cannot show a tower and its equipment. */
const MIN_POINTS = 2000;
/** Patch (m) over which the noise is measured (local-cloud.ts). */
const NOISE_PATCH = 0.4;

export function detectAntennas(input: DetectionInput): DetectionOutcome {
  const radius = input.searchRadiusM && input.searchRadiusM > 0 ? input.searchRadiusM : DEFAULT_SEARCH_RADIUS;
  if (!Number.isFinite(input.assetXY?.[0]) || !Number.isFinite(input.assetXY?.[1])) return { kind: 'no-tower', reason: "the asset's position is not a pair of finite coordinates" };
  const cloud = cropAroundAsset(input, radius);
  if (cloud.count < MIN_POINTS) {
    return {
      kind: 'insufficient',
      tower: null,
      reason: `the cloud holds ${cloud.count} point${cloud.count === 1 ? '' : 's'} within ${formatM(radius)} of the asset: too few to find a tower and its antennas (a tower's reconstruction holds hundreds of thousands)`,
    };
  }
  const all = Uint32Array.from({ length: cloud.count }, (_, i) => i);
  const roughNoise = surfaceNoise(cloud, strideSample(all, 600000), NOISE_PATCH);
  const bins = new BinIndex(cloud, 0.5, 0.5);
  const terrain = terrainGrid(cloud);
  const search = findTower(cloud, bins, terrain, Number.isFinite(roughNoise) ? roughNoise : 0.01);
  if (!search.tower) return { kind: 'no-tower', reason: search.reason };
  const tower = search.tower;
  const detected = describeTower(tower, cloud.origin);

  const scales = measureScales(cloud, bins, tower, roughNoise);
  const thin = tooThin(scales.spacing);
  if (thin) return { kind: 'insufficient', tower: detected, reason: thin };
  const { segments } = equipmentSegments(cloud, bins, tower, scales);
  const fitted = fitItems(cloud, segments, tower, scales);
  const { quality, insufficient } = assessQuality(tower, fitted, scales);
  if (insufficient) return { kind: 'insufficient', tower: detected, reason: insufficient };
  const items = fitted.map((item) => describeItem(item, tower, cloud, input.gridConvergenceDeg)).sort((a, b) => b.heightAboveBaseM - a.heightAboveBaseM || a.azimuthDeg - b.azimuthDeg);
  return { kind: 'detected', tower: detected, items, quality };
}

/**
 * The spacing and noise around the tower's upper half, where the equipment is (the ground's
 * sparser points would misstate both).
 */
function measureScales(cloud: LocalCloud, bins: BinIndex, tower: TowerModel, fallbackNoise: number): Scales {
  const near: number[] = [];
  const from = tower.baseZ + 0.5 * (tower.topZ - tower.baseZ);
  for (let z = from; z < tower.topZ + 0.5; z += 0.5) {
    const [ax, ay] = axisAt(tower, z);
    bins.forEachInCylinder(ax, ay, radiusAt(tower, z) + 2.5, z, z + 0.5, (p) => near.push(p));
  }
  const points = Uint32Array.from(near);
  // Every point counts here: a sample would be sparser than the cloud.
  const spacing = surfaceSpacing(cloud, points);
  const noise = surfaceNoise(cloud, points, NOISE_PATCH);
  return { spacing, noise: Number.isFinite(noise) ? noise : Number.isFinite(fallbackNoise) ? fallbackNoise : 0.01 };
}

function describeItem(item: FittedItem, tower: TowerModel, cloud: LocalCloud, gridConvergenceDeg: number): DetectedItem {
  const { azimuthDeg, downtiltDeg, plumbDeg } = orientationOf(item, gridConvergenceDeg);
  const o = cloud.origin;
  return {
    type: item.type,
    centre: [item.centre[0] + o[0], item.centre[1] + o[1], item.centre[2] + o[2]],
    azimuthDeg,
    downtiltDeg,
    // A dish is round: no lean of a long axis to speak of.
    plumbDeg: item.type === 'microwave_antenna' ? 0 : plumbDeg,
    widthM: item.width,
    heightM: item.height,
    depthM: item.depth,
    heightAboveBaseM: item.centre[2] - tower.baseZ,
    corners: cornersOf(item, o),
    confidence: item.confidence,
    pointCount: item.points.length,
  };
}
