// Point-cloud utilities (src/shared/pointcloud): LAS 1.2 writing and reading (header layout,
// scale/offset/bounds, projection records, formats 2 and 3), PLY, clipping by a horizontal radius,
// picking along a ray (with a cone tolerance), LAZ reading (laz-perf), and the pixel <-> ray mapping of a calibrated camera with distortion.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  boundsOf,
  clipByRadius,
  createPointCloud,
  insideImage,
  pickAlongRay,
  pixelRay,
  projectPoint,
  isLaz,
  LasFormatError,
  readLas,
  readPointCloudFile,
  readPly,
  writeLas,
  writePly,
  type PhotoCamera,
  type PointCloud,
  type Vec3,
} from '../src/shared/pointcloud/index.ts';
import { cameraToEnuQuaternion, quaternionToMatrix } from '../src/shared/geo/rotation.ts';
import { seededRandom } from '../src/shared/seeded-random.ts';

function cloudOf(points: Vec3[], colors?: [number, number, number][]): PointCloud {
  const cloud = createPointCloud(points.length, colors !== undefined);
  points.forEach((p, i) => cloud.positions.set(p, 3 * i));
  colors?.forEach((c, i) => cloud.colors!.set(c, 3 * i));
  return cloud;
}

describe('LAS 1.2', () => {
  const rand = seededRandom(7);
  const points: Vec3[] = Array.from({ length: 500 }, () => [386551 + rand() * 300 - 150, 6174045 + rand() * 300 - 150, rand() * 40 - 5]);
  const colors = points.map(() => [Math.floor(rand() * 256), Math.floor(rand() * 256), Math.floor(rand() * 256)] as [number, number, number]);
  const cloud = cloudOf(points, colors);
  const wkt = 'COMPD_CS["WGS 84 / UTM zone 33N + EGM96 height",PROJCS["WGS 84 / UTM zone 33N"],VERT_CS["EGM96 height"]]';

  it('writes the public header as the specification lays it out', () => {
    const las = writeLas(cloud, { offset: [386551, 6174045, 0], wkt, horizontalEpsg: 32633, verticalEpsg: 5773, generatingSoftware: 'test' });
    assert.equal(las.toString('ascii', 0, 4), 'LASF');
    assert.equal(las[24], 1);
    assert.equal(las[25], 2);
    assert.equal(las.readUInt16LE(94), 227);
    const pointOffset = las.readUInt32LE(96);
    assert.equal(las.readUInt32LE(100), 2, 'two VLRs: GeoKeyDirectoryTag and WKT');
    assert.equal(las[104], 2);
    assert.equal(las.readUInt16LE(105), 26);
    assert.equal(las.readUInt32LE(107), 500);
    assert.equal(las.readUInt32LE(111), 500, 'all first returns');
    assert.equal(las.length, pointOffset + 500 * 26);
    assert.deepEqual([las.readDoubleLE(131), las.readDoubleLE(139), las.readDoubleLE(147)], [0.001, 0.001, 0.001]);
    assert.deepEqual([las.readDoubleLE(155), las.readDoubleLE(163), las.readDoubleLE(171)], [386551, 6174045, 0]);
    const b = boundsOf(cloud);
    assert.deepEqual([las.readDoubleLE(179), las.readDoubleLE(187)], [b.max[0], b.min[0]]);
    assert.deepEqual([las.readDoubleLE(195), las.readDoubleLE(203)], [b.max[1], b.min[1]]);
    assert.deepEqual([las.readDoubleLE(211), las.readDoubleLE(219)], [b.max[2], b.min[2]]);
    // First point record: X at scale and offset, return byte, RGB as 16-bit.
    assert.equal(las.readInt32LE(pointOffset), Math.round((points[0][0] - 386551) / 0.001));
    assert.equal(las[pointOffset + 14], 0b1001);
    assert.equal(las.readUInt16LE(pointOffset + 20), colors[0][0] * 257);
    assert.equal(las.toString('ascii', 227 + 2, 227 + 2 + 15), 'LASF_Projection');
  });

  it('reads back what it writes: coordinates to the scale, colours, projection records (formats 2 and 3)', () => {
    for (const pointFormat of [2, 3] as const) {
      const las = readLas(writeLas(cloud, { pointFormat, wkt, horizontalEpsg: 32633, verticalEpsg: 5773 }));
      assert.equal(las.header.pointFormat, pointFormat);
      assert.equal(las.header.pointRecordLength, pointFormat === 2 ? 26 : 34);
      assert.equal(las.count, 500);
      for (let i = 0; i < las.positions.length; i++) assert.ok(Math.abs(las.positions[i] - cloud.positions[i]) <= 0.0005 + 1e-9, `coordinate ${i}`);
      assert.deepEqual([...las.colors!], [...cloud.colors!]);
      assert.equal(las.header.wkt, wkt);
      assert.equal(las.header.horizontalEpsg, 32633);
      assert.equal(las.header.verticalEpsg, 5773);
      assert.deepEqual(las.header.offset, [386000, 6173000, -1000]);
      assert.equal(las.classification[0], 1);
      assert.equal(las.gpsTime !== null, pointFormat === 3);
    }
  });

  it('an independent reader, laz-perf (the LAZ library of the PDAL project, WebAssembly), reads what it writes', async () => {
    const { createLazPerf } = await import('laz-perf');
    const LazPerf = await createLazPerf();
    const data = writeLas(cloud, { offset: [386551, 6174045, 0], wkt, horizontalEpsg: 32633 });
    const filePtr = LazPerf._malloc(data.length);
    LazPerf.HEAPU8.set(data, filePtr);
    const reader = new LazPerf.LASZip();
    try {
      reader.open(filePtr, data.length);
      assert.equal(reader.getCount(), 500);
      assert.equal(reader.getPointFormat(), 2);
      assert.equal(reader.getPointLength(), 26);
      const pointPtr = LazPerf._malloc(26);
      for (let i = 0; i < 500; i++) {
        reader.getPoint(pointPtr);
        const view = new DataView(LazPerf.HEAPU8.buffer, pointPtr, 26);
        const x = view.getInt32(0, true) * 0.001 + 386551;
        const z = view.getInt32(8, true) * 0.001;
        assert.ok(Math.abs(x - points[i][0]) <= 0.0005 + 1e-9 && Math.abs(z - points[i][2]) <= 0.0005 + 1e-9, `point ${i}`);
        assert.equal(view.getUint16(24, true), colors[i][2] * 257);
      }
      LazPerf._free(pointPtr);
    } finally {
      reader.delete();
      LazPerf._free(filePtr);
    }
  });

  it('rejects what it cannot represent or read', () => {
    assert.throws(() => writeLas(cloudOf([[0, 0, 0], [1e7, 0, 0]]), { scale: 0.0001 }), /do not fit/);
    assert.throws(() => writeLas(cloudOf([[NaN, 0, 0]])), /non-finite/);
    assert.throws(() => readLas(Buffer.from('not a las file at all'.padEnd(300))), /LASF/);
    const truncated = writeLas(cloud).subarray(0, 1000);
    assert.throws(() => readLas(truncated), /truncated/);
    const laz = writeLas(cloud);
    laz[104] |= 0x80;
    assert.throws(() => readLas(laz), /LAZ/);
  });

  it('writes an empty cloud', () => {
    const las = readLas(writeLas(createPointCloud(0, true)));
    assert.equal(las.count, 0);
  });
});

describe('PLY', () => {
  it('round-trips double coordinates and colours', () => {
    const cloud = cloudOf([[386551.123456, 6174045.654321, 12.5], [1, 2, 3]], [[1, 2, 3], [250, 251, 252]]);
    const ply = writePly(cloud, ['coordinate system: WGS 84 / UTM zone 33N']);
    assert.match(ply.toString('ascii', 0, 200), /^ply\nformat binary_little_endian 1.0\ncomment coordinate system/);
    const back = readPly(ply);
    assert.deepEqual([...back.positions], [...cloud.positions]);
    assert.deepEqual([...back.colors!], [...cloud.colors!]);
  });
});

describe('clipByRadius', () => {
  it('keeps the points within a horizontal distance, whatever their height', () => {
    const cloud = cloudOf([[0, 0, 100], [3, 4, -50], [3, 4.01, 0], [-5, 0, 0], [10, 10, 10]], [[1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4], [5, 5, 5]]);
    const clipped = clipByRadius(cloud, { x: 0, y: 0 }, 5);
    assert.equal(clipped.count, 3);
    assert.deepEqual([...clipped.positions], [0, 0, 100, 3, 4, -50, -5, 0, 0]);
    assert.deepEqual([...clipped.colors!], [1, 1, 1, 2, 2, 2, 4, 4, 4]);
    assert.equal(clipByRadius(cloud, { x: 100, y: 100 }, 1).count, 0);
    assert.throws(() => clipByRadius(cloud, { x: 0, y: 0 }, -1), /radius/);
  });
});

describe('pickAlongRay', () => {
  const cloud = cloudOf([
    [0, 0, -5], // behind the origin
    [0.05, 0, 10], // on the ray, nearest in front
    [0, 0.02, 20],
    [1, 0, 5], // in front but too far from the ray
  ]);

  it('returns the first point along the ray within the tolerance', () => {
    const hit = pickAlongRay(cloud, [0, 0, 0], [0, 0, 2], 0.1)!;
    assert.equal(hit.index, 1);
    assert.deepEqual(hit.point, [0.05, 0, 10]);
    assert.ok(Math.abs(hit.distanceAlongRay - 10) < 1e-12);
    assert.ok(Math.abs(hit.distanceFromRay - 0.05) < 1e-12);
    assert.equal(pickAlongRay(cloud, [0, 0, 0], [0, 0, 1], 0.03)!.index, 2, 'the nearer point is outside a tighter tolerance');
    assert.equal(pickAlongRay(cloud, [0, 0, 0], [0, 0, 1], 1.5)!.index, 3, 'a wider tolerance catches the nearer off-ray point');
    assert.equal(pickAlongRay(cloud, [0, 0, 0], [0, 1, 0], 0.1), null);
    assert.throws(() => pickAlongRay(cloud, [0, 0, 0], [0, 0, 0], 0.1), /direction/);
  });

  it('a tolerance growing with the distance (a cone) reaches far points a fixed tolerance misses', () => {
    const far = cloudOf([[0.5, 0, 50], [0.5, 0, 200]]);
    assert.equal(pickAlongRay(far, [0, 0, 0], [0, 0, 1], 0.1), null);
    assert.equal(pickAlongRay(far, [0, 0, 0], [0, 0, 1], 0, 0.005)?.index, 1, '0.5 m off at 200 m is within 0.005 rad; at 50 m it is not');
    assert.equal(pickAlongRay(far, [0, 0, 0], [0, 0, 1], 0, 0.011)?.index, 0, 'a wider cone takes the nearer one first');
    assert.throws(() => pickAlongRay(far, [0, 0, 0], [0, 0, 1], 0, -1), /tolerances/);
  });
});

describe('LAZ', () => {
  const reference = path.resolve(import.meta.dirname, '..', '..', 'shared', 'datasets', 'brighton_beach', 'reference_model.laz');

  it('reads a LAZ file (OpenDroneMap\'s brighton_beach point cloud) like a LAS file', async (t) => {
    if (!fs.existsSync(reference)) {
      if (process.env.CI === 'true') assert.fail(`${reference} is missing (../shared/datasets)`);
      t.skip(`${reference} not present`);
      return;
    }
    const data = fs.readFileSync(reference);
    assert.ok(isLaz(data));
    const cloud = await readPointCloudFile(data);
    assert.equal(cloud.count, data.readUInt32LE(107), 'every point the header counts');
    assert.equal(cloud.header.horizontalEpsg, 32615);
    const bounds = boundsOf(cloud);
    for (let a = 0; a < 3; a++) {
      assert.ok(Math.abs(bounds.min[a] - cloud.header.min[a]) < 0.01 && Math.abs(bounds.max[a] - cloud.header.max[a]) < 0.01, `axis ${a}: ${bounds.min[a]}..${bounds.max[a]} vs header ${cloud.header.min[a]}..${cloud.header.max[a]}`);
    }
    assert.ok(cloud.colors && cloud.colors.some((c) => c > 0), 'colours decoded');
  });

  it('an uncompressed LAS file passes through; a broken LAZ file is a LasFormatError', async () => {
    const las = writeLas(cloudOf([[1, 2, 3]]));
    assert.equal(isLaz(las), false);
    assert.equal((await readPointCloudFile(las)).count, 1);
    const broken = Buffer.from(las);
    broken.writeUInt8(broken.readUInt8(104) | 0x80, 104); // claims compression, holds raw points
    await assert.rejects(readPointCloudFile(broken), LasFormatError);
  });
});

describe('pixelRay and projectPoint', () => {
  // A camera 30 m above the ground looking down, heading 40 degrees, with lens distortion.
  const camera: PhotoCamera = {
    width: 4000,
    height: 3000,
    fx: 2300,
    fy: 2310,
    cx: 2010,
    cy: 1490,
    k1: -0.08,
    k2: 0.02,
    p1: 0.001,
    p2: -0.0005,
    position: [500, 800, 30],
    rotation: quaternionToMatrix(cameraToEnuQuaternion({ yaw: 40, pitch: -80, roll: 2 })),
  };

  it('the ray through the pixel of a point passes through the point', () => {
    const rand = seededRandom(3);
    for (let n = 0; n < 200; n++) {
      const point: Vec3 = [500 + rand() * 40 - 20, 800 + rand() * 40 - 20, rand() * 5];
      const { u, v, depth } = projectPoint(camera, point);
      assert.ok(depth > 0);
      if (!insideImage(camera, u, v)) continue;
      const ray = pixelRay(camera, u, v);
      assert.ok(Math.abs(Math.hypot(...ray.direction) - 1) < 1e-12);
      const d: Vec3 = [point[0] - ray.origin[0], point[1] - ray.origin[1], point[2] - ray.origin[2]];
      const t = d[0] * ray.direction[0] + d[1] * ray.direction[1] + d[2] * ray.direction[2];
      const off = Math.hypot(d[0] - t * ray.direction[0], d[1] - t * ray.direction[1], d[2] - t * ray.direction[2]);
      assert.ok(off < 1e-6, `point ${n} is ${off} m off its ray`);
    }
  });

  it('the principal point looks along the optical axis; u grows to the camera\'s right', () => {
    const noDistortion = { ...camera, k1: 0, k2: 0, p1: 0, p2: 0 };
    const centre = pixelRay(noDistortion, camera.cx, camera.cy);
    const axis = [camera.rotation[0][2], camera.rotation[1][2], camera.rotation[2][2]];
    assert.ok(centre.direction.every((v, i) => Math.abs(v - axis[i]) < 1e-12));
    const right = pixelRay(noDistortion, camera.cx + 100, camera.cy).direction;
    const x = [camera.rotation[0][0], camera.rotation[1][0], camera.rotation[2][0]];
    assert.ok(right[0] * x[0] + right[1] * x[1] + right[2] * x[2] > 0);
  });
});
