// What automatic antenna detection (issue 36 §3, `detect_antennas`) takes and gives: a dense point
// cloud in a metric frame with z up, the asset's position in it, and the angle between grid and
// true north there; it answers with the tower it found (or why none), and each piece of equipment
// as a fitted box with its type, azimuth from TRUE north, downtilt, plumb and size. The detector
// (detect-antennas.ts) is pure computation with no service dependency, so the inspection service
// runs it in a worker thread on whichever engine's cloud, and bench/tower-detection.ts measures it
// against the tower-flight generator's truth.

export type Vec3 = [number, number, number];

export type DetectedItemType = 'panel_antenna' | 'microwave_antenna' | 'ancillary_box';

export interface DetectionInput {
  /** xyz per point, metres, in a right-handed frame with z up (e.g. UTM easting/northing/height minus an offset). */
  positions: Float32Array | Float64Array;
  count: number;
  /** RGB per point (0..255), when the cloud has colours. */
  colours?: Uint8Array;
  /** Where the tower is expected (the asset's position), in the same frame; only x and y are used. */
  assetXY: [number, number];
  /** Horizontal radius around assetXY searched for the tower (default 25 m). */
  searchRadiusM?: number;
  /**
   * Meridian convergence at the site: the angle from true north to grid north, degrees, positive
   * when grid north lies east of true north (UTM east of its central meridian, northern
   * hemisphere). A direction with grid azimuth a has the true azimuth a + gridConvergenceDeg.
   */
  gridConvergenceDeg: number;
}

export interface DetectedTower {
  /** The centre line's point on the ground and at the top, in the input frame. */
  base: Vec3;
  top: Vec3;
  heightM: number;
  /** Angle of the centre line from the vertical, degrees. */
  verticalityDeg: number;
  type: 'monopole' | 'lattice' | 'unknown';
}

export interface DetectedItem {
  type: DetectedItemType;
  /** Centre of the fitted box, in the input frame. */
  centre: Vec3;
  /** The front face's outward normal (boresight) heading, clockwise from TRUE north, [0, 360). */
  azimuthDeg: number;
  /** Positive when the boresight looks below the horizon (the top leans forward). */
  downtiltDeg: number;
  /** Sideways lean of the long axis, positive when its top leans to the item's right seen from behind. */
  plumbDeg: number;
  /** Extents across, along the long axis, and front to back (a dish: diameter, diameter, depth). */
  widthM: number;
  heightM: number;
  depthM: number;
  /** Height of the centre above the tower's base. */
  heightAboveBaseM: number;
  /** The box's eight corners in the input frame (outlines projected into photos, the 3D view). */
  corners: Vec3[];
  /** 0..1: how well the shape fits and how much of it the cloud holds. */
  confidence: number;
  pointCount: number;
}

export interface DetectionQuality {
  /** 'borderline' becomes additional status 9 (a warning); the items are still reported. */
  level: 'good' | 'borderline';
  /** In words, for the person reviewing (e.g. "the cloud around the top level holds 40 points per m²"). */
  reasons: string[];
}

export type DetectionOutcome =
  | { kind: 'detected'; tower: DetectedTower; items: DetectedItem[]; quality: DetectionQuality }
  /** Additional status 8: no tower in the cloud (a bridge, a street, a park). */
  | { kind: 'no-tower'; reason: string }
  /** Additional status 10: a tower, but a cloud too thin or cut off to find its equipment. */
  | { kind: 'insufficient'; tower: DetectedTower | null; reason: string };
