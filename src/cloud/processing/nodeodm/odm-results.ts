// ODM's camera results (`odm_report/shots.geojson` and `cameras.json` of all.zip) as this
// project's `calibrated_camera_parameters_json`, in the same shape as the colmap engine's.
//
// shots.geojson has one feature per calibrated image: `geometry.coordinates` [longitude, latitude,
// altitude], `properties.translation` the camera centre in ODM's UTM system, `properties.rotation`
// the Rodrigues vector of the rotation from that system to the camera frame (x right, y down, z
// forward, OpenSfM's convention), `focal` (focal / max(width, height)), `width`, `height`.
// cameras.json holds the intrinsics, normalised by max(width, height), principal point relative
// to the image centre (OpenSfM's `perspective` and `brown` projections).
import proj4 from 'proj4';
import { epsgByCode } from '../../coordinate-systems/epsg.ts';
import { utmZone } from '../../../shared/geo/utm.ts';
import { multiplyQuaternions, normalizeQuaternion, quaternionFromAxisAngle, type Quaternion, type Vec3 } from '../../../shared/geo/rotation.ts';

export interface OdmShot {
  filename: string;
  width: number;
  height: number;
  focal: number;
  translation: Vec3;
  rotation: Vec3;
  coordinates: Vec3;
}

export function parseShots(geojson: unknown): OdmShot[] {
  const features = (geojson as { features?: unknown[] })?.features;
  if (!Array.isArray(features)) return [];
  const shots: OdmShot[] = [];
  for (const f of features as { properties?: Record<string, unknown>; geometry?: { coordinates?: unknown } }[]) {
    const p = f?.properties;
    const c = f?.geometry?.coordinates;
    if (!p || typeof p.filename !== 'string' || !isVec3(p.translation) || !isVec3(p.rotation) || !isVec3(c)) continue;
    shots.push({ filename: p.filename, width: Number(p.width) || 0, height: Number(p.height) || 0, focal: Number(p.focal) || 0, translation: p.translation, rotation: p.rotation, coordinates: c });
  }
  return shots;
}

function isVec3(v: unknown): v is Vec3 {
  return Array.isArray(v) && v.length >= 3 && v.slice(0, 3).every((x) => typeof x === 'number' && Number.isFinite(x));
}

/** Row-major rotation matrix of a Rodrigues vector. */
export function rodriguesToMatrix(r: Vec3): [Vec3, Vec3, Vec3] {
  const theta = Math.hypot(r[0], r[1], r[2]);
  if (theta < 1e-12) return [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
  const [x, y, z] = [r[0] / theta, r[1] / theta, r[2] / theta];
  const c = Math.cos(theta);
  const s = Math.sin(theta);
  const C = 1 - c;
  return [
    [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
    [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
    [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
  ];
}

/** The UTM zone (EPSG code) in which ODM wrote the shots' translations, found by projecting their positions. */
export function odmUtmEpsg(shots: OdmShot[]): number | null {
  const first = shots[0];
  if (!first) return null;
  const [lon, lat] = first.coordinates;
  const zone = utmZone(lat, lon);
  const candidates = [zone.epsg, zone.epsg - 1, zone.epsg + 1];
  for (const code of candidates) {
    const entry = epsgByCode(code);
    if (!entry?.proj4) continue;
    const [e, n] = proj4('EPSG:4326', entry.proj4).forward([lon, lat]);
    if (Math.hypot(e - first.translation[0], n - first.translation[1]) < 5) return code;
  }
  return null;
}

interface OdmCamera {
  projection_type?: string;
  width?: number;
  height?: number;
  focal?: number;
  focal_x?: number;
  focal_y?: number;
  c_x?: number;
  c_y?: number;
  k1?: number;
  k2?: number;
  p1?: number;
  p2?: number;
}

function intrinsicsFor(cameras: Record<string, OdmCamera>, shot: OdmShot) {
  const list = Object.values(cameras ?? {});
  const camera = list.find((c) => c.width === shot.width && c.height === shot.height && Math.abs((c.focal_x ?? c.focal ?? 0) - shot.focal) < 1e-6) ?? (list.length === 1 ? list[0] : undefined);
  if (!camera || !['perspective', 'brown', undefined].includes(camera.projection_type)) return null;
  const w = shot.width || camera.width || 0;
  const h = shot.height || camera.height || 0;
  const size = Math.max(w, h);
  const fx = (camera.focal_x ?? camera.focal ?? shot.focal) * size;
  const fy = (camera.focal_y ?? camera.focal ?? shot.focal) * size;
  return {
    model: `ODM ${camera.projection_type ?? 'perspective'}`,
    focal_length_px: fx,
    fx,
    fy,
    cx: w / 2 + (camera.c_x ?? 0) * size,
    cy: h / 2 + (camera.c_y ?? 0) * size,
    k1: camera.k1 ?? 0,
    k2: camera.k2 ?? 0,
    p1: camera.p1 ?? 0,
    p2: camera.p2 ?? 0,
  };
}

export function calibratedFromOdm(input: {
  shots: OdmShot[];
  cameras: Record<string, OdmCamera>;
  keyOf: (filename: string) => string | undefined;
  imagesTotal: number;
  allNames: { name: string; key: string }[];
}) {
  const epsg = odmUtmEpsg(input.shots);
  const entry = epsg ? epsgByCode(epsg) : undefined;
  const n = input.shots.length;
  const mean = (i: number) => input.shots.reduce((s, shot) => s + shot.translation[i], 0) / Math.max(1, n);
  const offset: Vec3 = [Math.round(mean(0)) + 0, Math.round(mean(1)) + 0, Math.round(mean(2)) + 0];
  // Meridian convergence at the centre of the shots (grid north -> true north).
  let convergence = 0;
  if (entry?.proj4 && n) {
    const lat = input.shots.reduce((s, shot) => s + shot.coordinates[1], 0) / n;
    const lon = input.shots.reduce((s, shot) => s + shot.coordinates[0], 0) / n;
    const converter = proj4('EPSG:4326', entry.proj4);
    const a = converter.forward([lon, lat]);
    const b = converter.forward([lon, lat + 1e-4]);
    convergence = Math.atan2(b[0] - a[0], b[1] - a[1]);
  }
  const toTrueEnu = quaternionFromAxisAngle([0, 0, 1], convergence);
  const cameras = input.shots.map((shot) => {
    const R = rodriguesToMatrix(shot.rotation); // world (UTM) -> camera
    const theta = Math.hypot(...shot.rotation);
    const cameraToGrid: Quaternion = theta < 1e-12 ? [1, 0, 0, 0] : quaternionFromAxisAngle(shot.rotation, -theta);
    return {
      key: input.keyOf(shot.filename) ?? shot.filename,
      image_name: shot.filename,
      width: shot.width,
      height: shot.height,
      intrinsics: intrinsicsFor(input.cameras, shot),
      position_output_crs: { x: shot.translation[0], y: shot.translation[1], z: shot.translation[2] },
      position_wgs84: { latitude: shot.coordinates[1], longitude: shot.coordinates[0], altitude: shot.coordinates[2] },
      quaternion: normalizeQuaternion(multiplyQuaternions(toTrueEnu, cameraToGrid)),
      rotation_matrix_output_crs: [0, 1, 2].map((i) => [R[0][i], R[1][i], R[2][i]]),
    };
  });
  const calibrated = new Set(input.shots.map((s) => s.filename));
  return {
    epsg,
    offset,
    document: {
      engine: 'nodeodm',
      reconstructed: true,
      note: 'Cameras calibrated by OpenDroneMap (OpenSfM) on a NodeODM node; positions in the UTM system ODM chose (that of the first geotagged image), heights as ODM writes them (the images\' GPS altitudes, not converted to EGM96).',
      conventions: {
        quaternion: '[w, x, y, z] rotating the camera frame (x right, y down, z along the optical axis) to local East-North-Up',
        rotation_matrix_output_crs: 'row-major 3x3, camera frame -> the UTM system\'s axes (east, north, up)',
        pixel: 'u right, v down, (0, 0) the top-left corner of the image as stored',
      },
      coordinate_system: entry?.wkt ?? null,
      coordinate_system_epsg: epsg,
      // The same description as the other engines' (coordinate-systems/crs.ts describeCrs).
      output_coordinate_system: entry
        ? { name: entry.name, wkt: entry.wkt, type: 'projected', horizontal_epsg: epsg, vertical_epsg: null, axis_order: ['east', 'north'], unit: 'metre', unit_factor: 1, proj4: entry.proj4 ?? '', horizontal_wkt: entry.wkt }
        : null,
      offset_3d_xyz: offset,
      grid_convergence_deg: (convergence * 180) / Math.PI,
      images_total: input.imagesTotal,
      images_registered: cameras.length,
      cameras,
      not_calibrated: input.allNames.filter((x) => !calibrated.has(x.name)).map((x) => ({ key: x.key, image_name: x.name, reason: 'not in ODM\'s reconstruction' })),
    },
  };
}
