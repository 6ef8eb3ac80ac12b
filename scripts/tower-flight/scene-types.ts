// The shapes every part of the tower-flight generator shares (issue 36 §1): the concrete scene a
// seed lays out, the triangles it is built of, the flight's camera poses and the camera model.
//
// One frame for all geometry: local East-North-Up in metres with its origin at the tower's base
// point on the ground (x = east, y = north along true north, z = up). Heights above that origin add
// to the base's altitude (EGM96 height; over a site of 100 m the geoid is flat to a millimetre), and
// `geodesy.ts` turns a local point into WGS 84 latitude/longitude. Angles in degrees.

export type Vec3 = [number, number, number];

/** The inventory's model types (CONTRACT §2) the generator places and the truth names. */
export type EquipmentType = 'panel_antenna' | 'microwave_antenna' | 'ancillary_box';

/**
 * One piece of equipment on the tower, as the truth reports it. Its own frame: `front` is the
 * horizontal direction of `azimuthDeg` tilted down by `downtiltDeg` (the boresight), `up` is the
 * long axis (the antenna's height) after downtilt and plumb, `right` completes it.
 * - azimuthDeg: the boresight's heading, clockwise from true north, [0, 360);
 * - downtiltDeg: mechanical downtilt, positive = the front face looks below the horizon;
 * - plumbDeg: the sideways lean of the long axis, positive = its top leans to the antenna's right
 *   (seen from behind, looking along the boresight);
 * - widthM / heightM / depthM: extent along right / up / front; for a dish the diameter is width
 *   and height, depth its depth from rim to back.
 */
export interface Equipment {
  id: string;
  type: EquipmentType;
  /** Centre of the box (of the dish: of its rim disc's centre, shifted half the depth back). */
  centre: Vec3;
  azimuthDeg: number;
  downtiltDeg: number;
  plumbDeg: number;
  widthM: number;
  heightM: number;
  depthM: number;
  /** Which antenna level (0 = lowest) and sector it belongs to; dishes and boxes keep theirs too. */
  level: number;
  sector: number;
  /** Radome or housing colour, linear RGB 0..1 (varies within realistic light greys and whites). */
  colour: Vec3;
}

export type TowerType = 'monopole' | 'lattice';

export interface TowerLayout {
  type: TowerType;
  heightM: number;
  /** Monopole: outer radius at the base and at the top. Lattice: the legs' circumradius at base and top. */
  baseRadiusM: number;
  topRadiusM: number;
  /** Lattice only: leg tube radius and the height of one bracing bay. */
  legRadiusM: number;
  bayHeightM: number;
}

export interface AntennaLevel {
  /** Height of the level's antenna centres above the base. */
  heightM: number;
  /** Radius of the mount ring (platform or sector frames) the antennas hang from. */
  mountRadiusM: number;
  sectors: { azimuthDeg: number }[];
}

export interface CompoundLayout {
  /** Fenced square around the base: half side (m) and the fence height. */
  halfSideM: number;
  fenceHeightM: number;
  /** Cabinets and a shelter on the concrete pad: centre, size (x, y, z extents) and yaw. */
  cabinets: { centre: Vec3; size: Vec3; yawDeg: number }[];
  shelter: { centre: Vec3; size: Vec3; yawDeg: number } | null;
}

export interface SiteLayout {
  /** The tower's base point: latitude, longitude (WGS 84) and altitude (EGM96 height, m). */
  base: { latitude: number; longitude: number; altitude: number };
  /** Ground slope: the ground's height is z = tan(slopeDeg) * (distance along slopeAzimuthDeg). */
  slopeDeg: number;
  slopeAzimuthDeg: number;
  /** Sun for the lighting and shadows: azimuth from north and elevation above the horizon. */
  sun: { azimuthDeg: number; elevationDeg: number };
}

/** Everything a seed lays out: what the renderer draws and the truth reports. */
export interface SceneLayout {
  seed: number;
  site: SiteLayout;
  tower: TowerLayout;
  levels: AntennaLevel[];
  /** Panel antennas, RRUs/TMAs (ancillary_box) and microwave dishes. */
  equipment: Equipment[];
  compound: CompoundLayout;
}

/** Surface materials the renderer shades procedurally (world-space texture, no image files). */
export type MaterialName =
  | 'galvanised_steel'
  | 'radome'
  | 'rru_housing'
  | 'dish'
  | 'concrete'
  | 'gravel'
  | 'grass'
  | 'fence'
  | 'cabinet'
  | 'shelter_wall'
  | 'shelter_roof';

/** A triangle soup of one material: xyz per vertex, three vertices per triangle (local ENU). */
export interface MeshPart {
  material: MaterialName;
  positions: Float32Array;
  /** Per-vertex colour tint (RGB 0..1) where a part varies (radome colours), else undefined. */
  tint?: Vec3;
  /** The equipment this part belongs to, for the truth's per-antenna reference points. */
  equipmentId?: string;
  /** 'tower' for the structure and what hangs on it, 'ground' for the compound and terrain. */
  group: 'tower' | 'ground';
}

/** The drone's camera (EXIF): image size, focal length and sensor width in millimetres. */
export interface CameraModel {
  make: string;
  model: string;
  widthPx: number;
  heightPx: number;
  focalLengthMm: number;
  sensorWidthMm: number;
  /** 35 mm equivalent focal length (EXIF FocalLengthIn35mmFilm). */
  focalLength35mm: number;
}

/**
 * One photo of the flight: where the camera truly was and how the gimbal pointed (the DJI
 * convention of src/shared/geo/rotation.ts: yaw clockwise from north, pitch 0 level and -90 nadir,
 * positive up; roll positive = the image's right side down).
 */
export interface CameraPose {
  file: string;
  position: Vec3;
  yawDeg: number;
  pitchDeg: number;
  rollDeg: number;
  /** Seconds since the flight's start (EXIF time, motion blur from the speed). */
  timeS: number;
  /** The drone's velocity (m/s, local ENU) when the photo was taken: motion blur. */
  velocity: Vec3;
  /** Which part of the flight took it: 'helix', 'under-level-N', 'top', 'nadir'. */
  segment: string;
}
