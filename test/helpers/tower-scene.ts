// A telecom tower site from the tower-flight generator (scripts/tower-flight/, docs/tower-flight.md)
// as a fake NodeODM node delivers it (helpers/fake-nodeodm.ts `results`), for the antenna
// detection's tests (issue 36 §3) without a reconstruction:
// - the dense point cloud: the generator's reference cloud (points sampled on the scene's
//   surfaces: `referenceCloud`, LAS in the base's UTM zone with EGM96 heights), at a spacing a
//   photogrammetric dense cloud of a tower flight reaches, not the reference's 1 cm;
// - the cameras: the generator's flight plan (`planFlight`, SMALL_CAMERA: 1600 x 1200, pinhole,
//   1125 px) at their true poses, as ODM's shots.geojson and cameras.json give them (translation
//   in UTM, rotation the Rodrigues vector from UTM axes to the camera frame) — what the nodeodm
//   engine turns into calibrated_camera_parameters_json (odm-results.ts) and the inspection imports;
// - the truth (`buildTruth`): every antenna's type, centre and true azimuth, downtilt and size;
// - small geotagged JPEGs (160 x 120, the camera's 4:3) at the cameras' positions, named as the
//   flight's photos, for the inspection's upload and image analysis.
// Other clouds in the same UTM frame: a park without a tower (lawn, trees, benches, a path), and a
// few points taken from the tower's cloud.
import { generateGeotaggedJpeg } from '../../scripts/generate-demo-images.ts';
import { SMALL_CAMERA, focalPx } from '../../scripts/tower-flight/camera-models.ts';
import { planFlight } from '../../scripts/tower-flight/flight-plan.ts';
import { localToGeodeticConverter, utmProjector } from '../../scripts/tower-flight/geodesy.ts';
import { referenceCloud } from '../../scripts/tower-flight/reference-cloud.ts';
import { layoutScene, parseSceneDescription } from '../../scripts/tower-flight/scene-description.ts';
import { sceneParts } from '../../scripts/tower-flight/scene-geometry.ts';
import type { CameraPose, SceneLayout } from '../../scripts/tower-flight/scene-types.ts';
import { buildTruth, type Truth } from '../../scripts/tower-flight/truth.ts';
import { cameraToEnuQuaternion, rotateVector, type Vec3 } from '../../src/shared/geo/rotation.ts';
import { utmWithEgm96Wkt } from '../../src/shared/geo/utm-wkt.ts';
import { utmZone, type UtmZone } from '../../src/shared/geo/utm.ts';
import { createPointCloud, readLas, subset, writeLas, type PointCloud } from '../../src/shared/pointcloud/index.ts';
import { seededRandom } from '../../src/shared/seeded-random.ts';

export interface TowerScene {
  layout: SceneLayout;
  truth: Truth;
  zone: UtmZone;
  /** The scene's cloud (LAS), UTM easting/northing, EGM96 heights. */
  cloud: Buffer;
  points: number;
  poses: CameraPose[];
  /** ODM's cameras.json for the flight's camera. */
  odmCameras: Record<string, unknown>;
  /** UTM easting, northing of a WGS 84 position in the scene's zone. */
  toUtm(latitude: number, longitude: number): [number, number];
}

export interface TowerSceneOptions {
  seed: number;
  /** A scene file's JSON (docs/tower-flight.md); default: the generator's defaults. */
  scene?: unknown;
  /** Spacing of the points on the tower and its equipment, and on the ground (metres). */
  towerSpacingM?: number;
  groundSpacingM?: number;
  groundRadiusM?: number;
}

export function towerScene(options: TowerSceneOptions): TowerScene {
  const layout = layoutScene(parseSceneDescription(options.scene ?? {}), options.seed);
  const poses = planFlight(layout, SMALL_CAMERA, { small: true });
  const truth = buildTruth(layout, poses, SMALL_CAMERA);
  const cloud = referenceCloud(sceneParts(layout), layout.site.base, {
    seed: options.seed,
    towerSpacingM: options.towerSpacingM ?? 0.03,
    groundSpacingM: options.groundSpacingM ?? 0.2,
    groundRadiusM: options.groundRadiusM ?? 25,
  });
  const zone = utmZone(layout.site.base.latitude, layout.site.base.longitude);
  const project = utmProjector(zone);
  const size = Math.max(SMALL_CAMERA.widthPx, SMALL_CAMERA.heightPx);
  const focal = focalPx(SMALL_CAMERA) / size;
  return {
    layout,
    truth,
    zone,
    cloud,
    points: cloud.readUInt32LE(107),
    poses,
    odmCameras: {
      [`v2 dji m30t ${SMALL_CAMERA.widthPx} ${SMALL_CAMERA.heightPx} perspective ${focal.toFixed(4)}`]: {
        projection_type: 'perspective',
        width: SMALL_CAMERA.widthPx,
        height: SMALL_CAMERA.heightPx,
        focal,
        k1: 0,
        k2: 0,
      },
    },
    toUtm: project,
  };
}

/**
 * ODM's shots.geojson features for the uploaded images the fake node received (`names`: NodeODM's
 * file names, `00001_DJI_0001.JPG`): each image's true pose from the flight plan.
 */
export function odmShots(scene: TowerScene, names: readonly string[]): unknown[] {
  const toGeo = localToGeodeticConverter(scene.layout.site.base);
  const size = Math.max(SMALL_CAMERA.widthPx, SMALL_CAMERA.heightPx);
  const utm = (p: Vec3): Vec3 => {
    const g = toGeo(p);
    const [e, n] = scene.toUtm(g.latitude, g.longitude);
    return [e, n, g.altitude];
  };
  return names.flatMap((name) => {
    const pose = scene.poses.find((p) => name.endsWith(`_${p.file}`) || name === p.file);
    if (!pose) return [];
    const q = cameraToEnuQuaternion({ yaw: pose.yawDeg, pitch: pose.pitchDeg, roll: pose.rollDeg });
    const centre = utm(pose.position);
    // The camera's axes in UTM: each local (true-north) axis carried through the projection, so
    // the grid convergence and scale come from proj4, not from the code under test.
    const axes = [0, 1, 2].map((i) => {
      const d = rotateVector(q, [i === 0 ? 1 : 0, i === 1 ? 1 : 0, i === 2 ? 1 : 0]);
      const tip = utm([pose.position[0] + 10 * d[0], pose.position[1] + 10 * d[1], pose.position[2] + 10 * d[2]]);
      return [tip[0] - centre[0], tip[1] - centre[1], tip[2] - centre[2]] as Vec3;
    });
    const g = toGeo(pose.position);
    return [
      {
        type: 'Feature',
        properties: { filename: name, width: SMALL_CAMERA.widthPx, height: SMALL_CAMERA.heightPx, focal: focalPx(SMALL_CAMERA) / size, translation: centre, rotation: rodrigues(orthonormal(axes)) },
        geometry: { type: 'Point', coordinates: [g.longitude, g.latitude, g.altitude] },
      },
    ];
  });
}

/** The flight's photos as small geotagged JPEGs at the true camera positions (image analysis reads their headers). */
export async function scenePhotos(scene: TowerScene): Promise<{ name: string; body: Buffer }[]> {
  return Promise.all(
    scene.truth.cameras.map(async (c, i) => ({
      name: c.file,
      body: await generateGeotaggedJpeg({ latitude: c.position[0], longitude: c.position[1], altitude: c.position[2], seed: i + 1, width: 160, height: 120 }),
    })),
  );
}

/** Gram-Schmidt on three nearly orthonormal rows (the projection's scale and shear are ~1e-4). */
function orthonormal(rows: Vec3[]): [Vec3, Vec3, Vec3] {
  const unit = (v: Vec3): Vec3 => {
    const n = Math.hypot(v[0], v[1], v[2]);
    return [v[0] / n, v[1] / n, v[2] / n];
  };
  const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const x = unit(rows[0]);
  const y0 = rows[1];
  const y = unit([y0[0] - dot(y0, x) * x[0], y0[1] - dot(y0, x) * x[1], y0[2] - dot(y0, x) * x[2]]);
  const z: Vec3 = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
  return [x, y, z];
}

/** The Rodrigues vector of the rotation whose matrix has these rows (world -> camera, OpenSfM's `rotation`). */
export function rodrigues(r: [Vec3, Vec3, Vec3]): Vec3 {
  // Matrix -> quaternion (Shepperd), then axis * angle.
  const t = r[0][0] + r[1][1] + r[2][2];
  let w: number, x: number, y: number, z: number;
  if (t > 0) {
    const s = Math.sqrt(t + 1) * 2;
    [w, x, y, z] = [s / 4, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s];
  } else if (r[0][0] > r[1][1] && r[0][0] > r[2][2]) {
    const s = Math.sqrt(1 + r[0][0] - r[1][1] - r[2][2]) * 2;
    [w, x, y, z] = [(r[2][1] - r[1][2]) / s, s / 4, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s];
  } else if (r[1][1] > r[2][2]) {
    const s = Math.sqrt(1 + r[1][1] - r[0][0] - r[2][2]) * 2;
    [w, x, y, z] = [(r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, s / 4, (r[1][2] + r[2][1]) / s];
  } else {
    const s = Math.sqrt(1 + r[2][2] - r[0][0] - r[1][1]) * 2;
    [w, x, y, z] = [(r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, s / 4];
  }
  if (w < 0) [w, x, y, z] = [-w, -x, -y, -z];
  const sin = Math.hypot(x, y, z);
  if (sin < 1e-12) return [0, 0, 0];
  const angle = 2 * Math.atan2(sin, w);
  return [(x / sin) * angle, (y / sin) * angle, (z / sin) * angle];
}

/**
 * A park in the scene's UTM frame, no tower: a lawn 60 m across with a gentle slope, a dozen trees
 * (trunks and round crowns, 6–14 m), benches and a gravel path; about `spacing` apart on surfaces.
 */
export function parkCloud(scene: TowerScene, seed = 1, spacing = 0.12): Buffer {
  const random = seededRandom(seed);
  const points: number[] = [];
  const colours: number[] = [];
  const put = (x: number, y: number, z: number, c: [number, number, number]) => {
    points.push(x, y, z);
    colours.push(...c);
  };
  const ground = (x: number, y: number) => 0.02 * x + 0.01 * y;
  for (let x = -30; x <= 30; x += spacing * 2) for (let y = -30; y <= 30; y += spacing * 2) put(x + random() * spacing, y + random() * spacing, ground(x, y) + random() * 0.03, Math.abs(y - 0.3 * x) < 1.5 ? [150, 140, 120] : [80, 125, 60]);
  for (let t = 0; t < 12; t++) {
    const [cx, cy] = [random() * 50 - 25, random() * 50 - 25];
    const height = 6 + random() * 8;
    const crown = 2 + random() * 2.5;
    const trunk = height - crown * 1.5;
    for (let z = 0; z < trunk; z += spacing) for (let a = 0; a < 2 * Math.PI; a += spacing / 0.2) put(cx + 0.2 * Math.cos(a), cy + 0.2 * Math.sin(a), ground(cx, cy) + z, [90, 70, 50]);
    const n = Math.round((4 * Math.PI * crown * crown) / (spacing * spacing));
    for (let k = 0; k < n; k++) {
      const u = random() * 2 - 1;
      const a = random() * 2 * Math.PI;
      const r = crown * (0.85 + 0.15 * random());
      const s = Math.sqrt(1 - u * u);
      put(cx + r * s * Math.cos(a), cy + r * s * Math.sin(a), ground(cx, cy) + trunk + crown + r * u, [60 + random() * 30, 100 + random() * 40, 50]);
    }
  }
  for (let b = 0; b < 6; b++) {
    const [cx, cy] = [random() * 40 - 20, random() * 40 - 20];
    for (let x = -0.9; x <= 0.9; x += spacing / 2) for (let y = -0.25; y <= 0.25; y += spacing / 2) put(cx + x, cy + y, ground(cx, cy) + 0.45, [120, 90, 60]);
  }
  return localCloud(scene, points, colours);
}

/** `count` points drawn from a cloud (LAS), as LAS. */
export function sampledCloud(las: Buffer, count: number, seed = 1): Buffer {
  const cloud = readLas(las);
  const random = seededRandom(seed);
  const picked = Array.from({ length: Math.min(count, cloud.count) }, () => Math.floor(random() * cloud.count));
  return writeCloud(subset(cloud, picked), cloud.header.horizontalEpsg!);
}

/** Local ENU points around the tower's base (metres) as LAS in the scene's UTM frame. */
function localCloud(scene: TowerScene, local: number[], colours: number[]): Buffer {
  const toGeo = localToGeodeticConverter(scene.layout.site.base);
  const cloud = createPointCloud(local.length / 3, true);
  for (let i = 0; i < cloud.count; i++) {
    const g = toGeo([local[3 * i], local[3 * i + 1], local[3 * i + 2]]);
    const [e, n] = scene.toUtm(g.latitude, g.longitude);
    cloud.positions.set([e, n, g.altitude], 3 * i);
    cloud.colors!.set([colours[3 * i], colours[3 * i + 1], colours[3 * i + 2]].map((v) => Math.max(0, Math.min(255, Math.round(v)))), 3 * i);
  }
  return writeCloud(cloud, scene.zone.epsg);
}

function writeCloud(cloud: PointCloud, epsg: number): Buffer {
  return writeLas(cloud, { pointFormat: 2, horizontalEpsg: epsg, verticalEpsg: 5773, wkt: utmWithEgm96Wkt(epsg), generatingSoftware: 'open-inspection test' });
}
