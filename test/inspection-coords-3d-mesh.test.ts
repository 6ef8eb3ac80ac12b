// coords_3d against the reconstruction's mesh (annotations/coords-3d.ts), through the API: a
// synthetic street scene in absolute UTM coordinates, stored the way processing records it (the
// delivered `3d_mesh_ply` written by the cloud's writer, a LAS point cloud, a calibrated camera):
// - a facade 10 m north of the camera, meshed, with a window-sized hole; the point cloud is a
//   plane 0.5 m behind it (close enough to back the mesh: within UNSUPPORTED_MESH_GAP of its
//   depth), so every answer says which model it came from;
// - a rectangle on the facade -> the point where its centre's ray meets the mesh (to 1 mm); one
//   whose centre falls on a small spike of the mesh -> the facade still (the median depth of the
//   rectangle's rays); a sheet of mesh 3 m before the facade with no point of the cloud near it
//   (Poisson's made-up surface) -> the cloud's point;
// - a rectangle on the hole (the ray misses the mesh), no mesh, a truncated mesh, a mesh whose
//   header claims a billion faces, a file that is not PLY -> the cloud's point behind, never a 5xx.
// Plus the ray hierarchy (shared/mesh/mesh-bvh.ts) against brute force on a random triangle soup.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection } from './helpers/inspection-fixtures.ts';
import { writePlyMeshFile } from '../src/cloud/processing/mesh/mesh-ply.ts';
import { readPlyMesh } from '../src/shared/mesh/ply-mesh.ts';
import { buildMeshBvh, intersectRay } from '../src/shared/mesh/mesh-bvh.ts';
import { loadMeshBvh, MeshLoadError } from '../src/shared/mesh/mesh-loader.ts';
import { createPointCloud, writeLas } from '../src/shared/pointcloud/index.ts';
import { seededRandom } from '../src/shared/seeded-random.ts';

const UTM15N = { name: 'WGS 84 / UTM zone 15N', wkt: 'PROJCS["WGS 84 / UTM zone 15N"]', type: 'projected', proj4: '+proj=utm +zone=15 +datum=WGS84 +units=m +no_defs', axis_order: ['east', 'north'], unit_factor: 1 };
// The camera stands at (E, N, Z + 1.5) looking north; the facade is the plane y = N + 10 from
// x = E - 10 to E + 10 and z = Z to Z + 8, with a hole x in [E - 3, E - 1], z in [Z + 1, Z + 2.5];
// the cloud is the plane y = N + 10.5.
const [E, N, Z] = [500_000, 4_500_000, 100];
const FACADE = N + 10;
const BEHIND = N + 10.5;
const CALIBRATION = {
  width: 1000,
  height: 750,
  intrinsics: { fx: 1000, fy: 1000, cx: 500, cy: 375 },
  position_output_crs: { x: E, y: N, z: Z + 1.5 },
  // Camera x -> east, camera y (image down) -> down, camera z (optical axis) -> north.
  rotation_matrix_output_crs: [
    [1, 0, 0],
    [0, 0, 1],
    [0, -1, 0],
  ],
};

/** The facade: 1 m squares, two triangles each, but for the hole's; plus `extra` squares [x0, z0, side, y] (a spike, a sheet). */
function facade(extra: [number, number, number, number][] = []) {
  const positions: number[] = [];
  const indices: number[] = [];
  const vertex = (x: number, z: number) => (positions.push(E + x, FACADE, Z + z), positions.length / 3 - 1);
  for (let x = -10; x < 10; x++) {
    for (let z = 0; z < 8; z++) {
      if (x >= -3 && x < -1 && z >= 1 && z < 3) continue; // the hole (rows z 1-3; the ray aims at 1.75)
      const [a, b, c, d] = [vertex(x, z), vertex(x + 1, z), vertex(x + 1, z + 1), vertex(x, z + 1)];
      indices.push(a, b, c, a, c, d);
    }
  }
  for (const [x0, z0, side, y] of extra) {
    const first = positions.length / 3;
    positions.push(E + x0, y, Z + z0, E + x0 + side, y, Z + z0, E + x0 + side, y, Z + z0 + side, E + x0, y, Z + z0 + side);
    indices.push(first, first + 1, first + 2, first, first + 2, first + 3);
  }
  return { vertexCount: positions.length / 3, positions: Float64Array.from(positions), colors: null, faceCount: indices.length / 3, indices: Uint32Array.from(indices) };
}

/** The cloud: a 0.1 m grid on the plane 0.5 m behind the facade. */
function behind() {
  const cloud = createPointCloud(201 * 81, false);
  let i = 0;
  for (let x = -100; x <= 100; x++) for (let z = 0; z <= 80; z++, i++) cloud.positions.set([E + x / 10, BEHIND, Z + z / 10], 3 * i);
  return cloud;
}

/** The rectangle (coords_2d) of `half` px around pixel (u, v). */
function rectangle(u: number, v: number, half = 8): [number, number][] {
  const [x0, x1, y0, y1] = [(u - half) / 1000, (u + half) / 1000, (v - half) / 750, (v + half) / 750];
  return [
    [x0, y0],
    [x1, y0],
    [x1, y1],
    [x0, y1],
  ];
}

describe('coords_3d on the mesh', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspectionId: number;
  let photoId: number;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'coords3d-mesh-'));

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    const processed = await processedInspection(account);
    inspectionId = processed.inspection.id;
    photoId = processed.cameras[0].photo_id;
    await sql`update inspection.cameras set calibration = ${JSON.stringify(CALIBRATION)}::jsonb where inspection_id = ${inspectionId}`.execute(system.inspection.db);
    const bucket = system.config.storageBucket;
    await system.store.putObject(bucket, 'coords3d-mesh/cloud.las', writeLas(behind(), { horizontalEpsg: 32615, wkt: UTM15N.wkt }));
    const meshFile = path.join(tmp, 'mesh.ply');
    await writePlyMeshFile(meshFile, facade(), ['coordinate system: WGS 84 / UTM zone 15N']);
    const mesh = fs.readFileSync(meshFile);
    await system.store.putObject(bucket, 'coords3d-mesh/mesh.ply', mesh);
    // A 0.2 m spike 0.4 m before the facade around (E + 2, Z + 2.25) (pixel (700, 300)); a 4 m sheet 3 m before it at the same place.
    for (const [name, extra] of [['spike.ply', [[1.9, 2.15, 0.2, FACADE - 0.4]]], ['sheet.ply', [[0, 1, 4, FACADE - 3]]]] as const) {
      await writePlyMeshFile(path.join(tmp, name), facade(extra.map((e) => [...e] as [number, number, number, number])), ['coordinate system: WGS 84 / UTM zone 15N']);
      await system.store.putObject(bucket, `coords3d-mesh/${name}`, fs.readFileSync(path.join(tmp, name)));
    }
    await system.store.putObject(bucket, 'coords3d-mesh/truncated.ply', mesh.subarray(0, mesh.length - 100));
    const header = mesh.subarray(0, mesh.indexOf('end_header')).toString('latin1').replace(/element face \d+/, 'element face 1000000000');
    await system.store.putObject(bucket, 'coords3d-mesh/billion.ply', Buffer.concat([Buffer.from(header, 'latin1'), mesh.subarray(mesh.indexOf('end_header'))]));
    await system.store.putObject(bucket, 'coords3d-mesh/not-ply.ply', Buffer.from('solid wall\nendsolid wall\n'));
  });
  after(async () => {
    fs.rmSync(tmp, { recursive: true, force: true });
    await system?.stop();
  });

  /** coords_3d of the rectangle around (u, v) with `mesh` (a key under coords3d-mesh/, or none) recorded as the reconstruction's mesh. */
  async function locate(mesh: string | null, u: number, v: number, half = 8) {
    const bucket = system.config.storageBucket;
    const reconstruction = {
      engine: 'test',
      reconstructed: true,
      coordinate_system: UTM15N,
      offset_3d_xyz: [E, N, Z],
      images_registered: 1,
      point_cloud: { bucket, key: 'coords3d-mesh/cloud.las' },
      mesh: mesh ? { bucket, key: `coords3d-mesh/${mesh}` } : null,
      clipped_point_cloud: null,
    };
    await system.inspection.inspectionRows.recordReconstruction(inspectionId, reconstruction as never);
    const created = await account.client.expect(201, 'POST', '/v1/annotations/?coords_3d=true', { type: 'Crack', inspection: inspectionId, photo_id: photoId, data: { coords_2d: rectangle(u, v, half) } });
    return created.coords_3d as { x: number; y: number; z: number } | null;
  }

  it('a rectangle on the facade gets the point where its ray meets the mesh', async () => {
    // Pixel (700, 300): camera direction (0.2, -0.075, 1) -> east 0.2, north 1, up 0.075 per metre north.
    const hit = await locate('mesh.ply', 700, 300);
    assert.ok(hit, 'coords_3d');
    assert.ok(Math.hypot(hit.x - (E + 2), hit.y - FACADE, hit.z - (Z + 2.25)) < 0.001, JSON.stringify(hit));
    // Left of the hole, lower down: (E - 4, FACADE, Z + 0.5).
    const low = await locate('mesh.ply', 100, 475);
    assert.ok(low && Math.hypot(low.x - (E - 4), low.y - FACADE, low.z - (Z + 0.5)) < 0.001, JSON.stringify(low));
  });

  it('a spike under the rectangle centre is outvoted by the rest of it; a sheet the cloud does not back is set aside', async () => {
    // The centre's ray alone meets the spike 0.4 m before the facade; 24 of the 25 rays meet the facade.
    // The centre ray at the rays' median depth: on the facade give or take 2 cm (the oblique rays'
    // depths along the centre ray are not exactly symmetric about it), not on the spike.
    const spiked = await locate('spike.ply', 700, 300, 40);
    assert.ok(spiked && Math.hypot(spiked.x - (E + 2), spiked.y - FACADE, spiked.z - (Z + 2.25)) < 0.02, JSON.stringify(spiked));
    // Every ray meets the sheet 3 m before the facade; the cloud's nearest point in the cone is 3.5 m behind it.
    const sheeted = await locate('sheet.ply', 700, 300);
    assert.ok(sheeted && Math.abs(sheeted.y - BEHIND) < 0.001, JSON.stringify(sheeted));
  });

  it('falls back to the point cloud when the ray misses the mesh or there is no readable mesh', async () => {
    // Through the hole: (E - 2, FACADE, Z + 1.75) is pixel (300, 350); the cloud behind it is met at
    // (E - 2.1, BEHIND, Z + 1.7625) (the ray continued 0.5 m), give or take the grid's 0.1 m.
    const expected = [E - 2.1, BEHIND, Z + 1.7625];
    for (const mesh of ['mesh.ply', null, 'truncated.ply', 'billion.ply', 'not-ply.ply', 'missing.ply']) {
      const p = await locate(mesh, 300, 350);
      assert.ok(p, `${mesh}: coords_3d`);
      assert.ok(Math.hypot(p.x - expected[0], p.y - expected[1], p.z - expected[2]) < 0.15, `${mesh}: ${JSON.stringify(p)}`);
    }
    // On the facade, a hostile mesh falls back too: the cloud's point behind, not the facade's.
    for (const mesh of [null, 'truncated.ply', 'billion.ply']) assert.equal((await locate(mesh, 700, 300))?.y, BEHIND, String(mesh));
  });

  it('the hierarchy finds the same first hit as testing every triangle', () => {
    const random = seededRandom(28);
    const n = 3000;
    const positions = Float64Array.from({ length: 9 * n }, () => 1000 + random() * 50);
    const indices = Uint32Array.from({ length: 3 * n }, (_, i) => i);
    const bvh = buildMeshBvh(positions, indices.slice());
    const brute = buildMeshBvh(positions, indices.slice(0, 3)); // one triangle at a time, below
    let hits = 0;
    for (let r = 0; r < 300; r++) {
      const origin: [number, number, number] = [1000 + random() * 50, 1000 + random() * 50, 1000 + random() * 50];
      const d = [random() - 0.5, random() - 0.5, random() - 0.5];
      const len = Math.hypot(d[0], d[1], d[2]);
      const direction: [number, number, number] = [d[0] / len, d[1] / len, d[2] / len];
      let best = Infinity;
      for (let f = 0; f < n; f++) {
        brute.indices.set(indices.subarray(3 * f, 3 * f + 3));
        brute.bounds.set([-Infinity, -Infinity, -Infinity, Infinity, Infinity, Infinity]);
        const h = intersectRay(brute, origin, direction);
        if (h && h.t < best) best = h.t;
      }
      const found = intersectRay(bvh, origin, direction);
      if (best === Infinity) assert.equal(found, null, `ray ${r}`);
      else {
        hits++;
        assert.ok(found && Math.abs(found.t - best) < 1e-9, `ray ${r}: ${found?.t} against ${best}`);
      }
    }
    assert.ok(hits > 100, `${hits} rays hit`);
  });

  it('hostile PLY headers are errors, not allocations or endless loops', async () => {
    const header = (lines: string[]) => Buffer.from(['ply', 'format binary_little_endian 1.0', ...lines, 'end_header', ''].join('\n'));
    assert.throws(() => readPlyMesh(header(['element vertex 3', 'property double x', 'property double y', 'property double z', 'element face 4000000000', 'property list uchar int vertex_indices'])), /shorter/);
    assert.throws(() => readPlyMesh(header(['element vertex 9000000000000', 'property double x', 'property double y', 'property double z'])), /shorter/);
    assert.throws(() => readPlyMesh(header(['element junk 9000000000000', 'property uchar a'])), /shorter/);
    assert.throws(() => readPlyMesh(header(['element face 1', 'property list float int vertex_indices'])), /not read/);
    const empty = readPlyMesh(header(['element junk 9000000000000', 'element vertex 0', 'property double x', 'property double y', 'property double z']));
    assert.equal(empty.faceCount, 0);
    await assert.rejects(loadMeshBvh(header(['element vertex 9000000000000', 'property double x', 'property double y', 'property double z'])), MeshLoadError);
    await assert.rejects(loadMeshBvh(Buffer.from('not a mesh')), MeshLoadError);
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
