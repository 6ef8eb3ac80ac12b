// The mesh's files (src/cloud/processing/mesh/): the binary PLY reader on both byte orders and
// polygons, the delivered PLY (absolute output coordinates in doubles) and the OBJ zip (output
// coordinates minus the offset, vertex colours, MTL, offset file, README), each read back by a
// parser of its own here or by three.js's OBJLoader, for an east-first and a north-first system;
// and the three deliverables made together (mesh-outputs.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { OBJLoader } from 'three/examples/jsm/loaders/OBJLoader.js';
import type { Mesh, BufferGeometry } from 'three';
import yauzl from 'yauzl';
import { writeOutputMeshPly, type MeshFrame } from '../src/cloud/processing/mesh/mesh-frame.ts';
import { writeMeshObjZip } from '../src/cloud/processing/mesh/mesh-obj.ts';
import { writeMeshOutputs } from '../src/cloud/processing/mesh/mesh-outputs.ts';
import { readPlyMesh, writePlyMeshFile, type PlyMesh } from '../src/cloud/processing/mesh/mesh-ply.ts';

const EAST_FIRST: MeshFrame = { offsetOutput: [500_000, 6_170_000, 40], swapped: false };
/** A north-first system: the offset is [north, east, up]. */
const NORTH_FIRST: MeshFrame = { offsetOutput: [6_170_000, 500_000, 40], swapped: true };

/** A gently tilted grid of n x n vertices in the local frame (east, north, up), triangles facing up, coloured by position. */
function gridMesh(n: number): PlyMesh {
  const vertexCount = n * n;
  const positions = new Float64Array(3 * vertexCount);
  const colors = new Uint8Array(3 * vertexCount);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const v = i * n + j;
      positions.set([j * 0.25 - 3.1, i * 0.25 + 7.3, 0.01 * j + 0.123456], 3 * v);
      colors.set([j % 256, i % 256, (i + j) % 256], 3 * v);
    }
  }
  const indices: number[] = [];
  for (let i = 0; i + 1 < n; i++) {
    for (let j = 0; j + 1 < n; j++) {
      const a = i * n + j;
      // counter-clockwise seen from above (east right, north up): normal +up
      indices.push(a, a + 1, a + n + 1, a, a + n + 1, a + n);
    }
  }
  return { vertexCount, positions, colors, normals: null, values: null, faceCount: indices.length / 3, indices: Uint32Array.from(indices) };
}

/** Output coordinates of a local vertex (what LocalFrame.toOutput does). */
function expectedOutput(mesh: PlyMesh, v: number, frame: MeshFrame): [number, number, number] {
  const [e, n, u] = [mesh.positions[3 * v], mesh.positions[3 * v + 1], mesh.positions[3 * v + 2]];
  const [ox, oy, oz] = frame.offsetOutput;
  return frame.swapped ? [n + ox, e + oy, u + oz] : [e + ox, n + oy, u + oz];
}

/**
 * The z component of a triangle's normal as a viewer sees it: output coordinates read as a
 * right-handed x, y, z (for a north-first system that mirrors the terrain, so the writer must
 * reverse the winding for the normals to keep pointing up).
 */
function upNormal(p: number[][]): number {
  return (p[1][0] - p[0][0]) * (p[2][1] - p[0][1]) - (p[1][1] - p[0][1]) * (p[2][0] - p[0][0]);
}

function unzip(file: string): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Buffer>();
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            entries.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** A PLY written by hand: extra properties, a quad and a triangle, in the given byte order. */
function handPly(little: boolean): Buffer {
  const header = [
    'ply', `format binary_${little ? 'little' : 'big'}_endian 1.0`, 'comment by hand', 'element vertex 4',
    'property double x', 'property float y', 'property float z', 'property float value', 'property uchar red', 'property uchar green', 'property uchar blue', 'property uchar alpha',
    'element face 2', 'property list uchar int vertex_indices', 'property uchar flags', 'end_header', '',
  ].join('\n');
  const vertex = (x: number, y: number, z: number, value: number, rgb: number[]) => {
    const b = Buffer.alloc(8 + 12 + 4);
    if (little) b.writeDoubleLE(x, 0); else b.writeDoubleBE(x, 0);
    [y, z, value].forEach((f, k) => (little ? b.writeFloatLE(f, 8 + 4 * k) : b.writeFloatBE(f, 8 + 4 * k)));
    b.set([...rgb, 255], 20);
    return b;
  };
  const face = (ids: number[]) => {
    const b = Buffer.alloc(1 + 4 * ids.length + 1);
    b[0] = ids.length;
    ids.forEach((id, k) => (little ? b.writeInt32LE(id, 1 + 4 * k) : b.writeInt32BE(id, 1 + 4 * k)));
    b[b.length - 1] = 7;
    return b;
  };
  return Buffer.concat([
    Buffer.from(header, 'ascii'),
    vertex(500000.125, 2.5, 3.25, 8.5, [1, 2, 3]), vertex(1, 0, 0, 7, [4, 5, 6]), vertex(1, 1, 0, 6, [7, 8, 9]), vertex(0, 1, 0, 5, [10, 11, 12]),
    face([0, 1, 2, 3]), face([3, 2, 1]),
  ]);
}

test('the PLY reader reads both byte orders, skips unknown properties and splits polygons into triangles', () => {
  for (const little of [true, false]) {
    const mesh = readPlyMesh(handPly(little));
    assert.equal(mesh.vertexCount, 4);
    assert.deepEqual(Array.from(mesh.positions.slice(0, 3)), [500000.125, 2.5, 3.25]);
    assert.deepEqual(Array.from(mesh.colors!), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.deepEqual(Array.from(mesh.values!), [8.5, 7, 6, 5]);
    assert.equal(mesh.normals, null);
    assert.equal(mesh.faceCount, 3);
    assert.deepEqual(Array.from(mesh.indices), [0, 1, 2, 0, 2, 3, 3, 2, 1]);
  }
  assert.throws(() => readPlyMesh(handPly(true).subarray(0, handPly(true).length - 10)), /shorter than its header/);
  assert.throws(() => readPlyMesh(Buffer.from('ply\nformat ascii 1.0\nend_header\n')), /binary only/);
});

for (const [label, frame] of [['east-first', EAST_FIRST], ['north-first', NORTH_FIRST]] as const) {
  test(`the delivered PLY holds absolute output coordinates in doubles, faces facing up (${label})`, async () => {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'mesh-ply-'));
    try {
      const mesh = gridMesh(270); // 72 900 vertices: more than one write chunk
      const file = path.join(dir, 'mesh.ply');
      await writeOutputMeshPly(file, mesh, frame, 'test system');
      const data = await fs.promises.readFile(file);
      // An independent reading of the layout the writer promises.
      const end = data.indexOf('end_header\n') + 'end_header\n'.length;
      const header = data.toString('ascii', 0, end);
      assert.match(header, /format binary_little_endian 1\.0\ncomment coordinate system: test system/);
      assert.ok(header.endsWith(`element vertex 72900\nproperty double x\nproperty double y\nproperty double z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nelement face ${mesh.faceCount}\nproperty list uchar int vertex_indices\nend_header\n`), header);
      assert.equal(data.length, end + 72900 * 27 + mesh.faceCount * 13);
      for (const v of [0, 1, 65535, 65536, 72899]) {
        const o = end + v * 27;
        assert.deepEqual([data.readDoubleLE(o), data.readDoubleLE(o + 8), data.readDoubleLE(o + 16)], expectedOutput(mesh, v, frame), `vertex ${v}`);
        assert.deepEqual([...data.subarray(o + 24, o + 27)], [...mesh.colors!.subarray(3 * v, 3 * v + 3)]);
      }
      const faces = end + 72900 * 27;
      for (const f of [0, 100_000, mesh.faceCount - 1]) {
        const o = faces + f * 13;
        assert.equal(data[o], 3);
        const corners = [1, 5, 9].map((k) => data.readInt32LE(o + k)).map((v) => expectedOutput(mesh, v, frame));
        assert.ok(upNormal(corners) > 0, `face ${f} faces up`);
      }
      const back = readPlyMesh(data);
      assert.equal(back.faceCount, mesh.faceCount);
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  });

  test(`the OBJ zip: output coordinates minus the offset file's offset, vertex colours, MTL and README (${label})`, async () => {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'mesh-obj-'));
    try {
      const mesh = gridMesh(150); // 22 500 vertices: more than one chunk of OBJ lines
      const zipPath = path.join(dir, 'mesh.zip');
      await writeMeshObjZip(zipPath, mesh, frame, dir, { name: 'model', coordinateSystem: 'WGS 84 / UTM zone 32N (EPSG:32632)' });
      const entries = await unzip(zipPath);
      assert.deepEqual([...entries.keys()].sort(), ['README.txt', 'model.mtl', 'model.obj', 'model_offset.xyz']);
      assert.ok(!fs.existsSync(path.join(dir, 'model.obj')), 'the unzipped OBJ is removed');
      const offset = entries.get('model_offset.xyz')!.toString().trim().split(/\s+/).map(Number);
      assert.deepEqual(offset, frame.offsetOutput);
      const readme = entries.get('README.txt')!.toString();
      assert.match(readme, /EPSG:32632/);
      assert.match(readme, new RegExp(`X = x \\+ ${frame.offsetOutput[0]}, Y = y \\+ ${frame.offsetOutput[1]}, Z = z \\+ ${frame.offsetOutput[2]}`));
      assert.match(entries.get('model.mtl')!.toString(), /newmtl model\nKa 1\.000 1\.000 1\.000\nKd 1\.000 1\.000 1\.000/);

      // Our own reading: v x y z r g b, f a b c (1-based).
      const text = entries.get('model.obj')!.toString();
      assert.match(text, /^mtllib model\.mtl$/m);
      assert.match(text, /^usemtl model$/m);
      const vs = text.split('\n').filter((l) => l.startsWith('v ')).map((l) => l.split(' ').slice(1).map(Number));
      const fs_ = text.split('\n').filter((l) => l.startsWith('f ')).map((l) => l.split(' ').slice(1).map((i) => Number(i) - 1));
      assert.equal(vs.length, mesh.vertexCount);
      assert.equal(fs_.length, mesh.faceCount);
      let largest = 0;
      for (let v = 0; v < mesh.vertexCount; v++) {
        const absolute = vs[v].slice(0, 3).map((c, k) => c + offset[k]);
        const expected = expectedOutput(mesh, v, frame);
        for (let k = 0; k < 3; k++) assert.ok(Math.abs(absolute[k] - expected[k]) < 1e-4, `vertex ${v} axis ${k}: ${absolute[k]} vs ${expected[k]}`);
        for (let k = 0; k < 3; k++) assert.equal(Math.round(vs[v][3 + k] * 255), mesh.colors![3 * v + k]);
        largest = Math.max(largest, ...vs[v].slice(0, 3).map(Math.abs));
      }
      assert.ok(largest < 1000, `OBJ coordinates are small (largest ${largest}), so that float viewers keep them`);
      for (const f of [0, 7777, fs_.length - 1]) {
        const corners = fs_[f].map((v) => vs[v].slice(0, 3).map((c, k) => c + offset[k]));
        assert.ok(upNormal(corners) > 0, `face ${f} faces up`);
      }

      // three.js's OBJLoader reads the positions and the colours (sRGB, into a linear colour attribute).
      const group = new OBJLoader().parse(text);
      const geometry = (group.children[0] as Mesh).geometry as BufferGeometry;
      assert.equal(geometry.getAttribute('position').count, 3 * mesh.faceCount);
      assert.ok(geometry.getAttribute('color'), 'three.js found vertex colours');
      const first = fs_[0][0];
      assert.ok(Math.abs(geometry.getAttribute('position').getX(0) - vs[first][0]) < 1e-3);
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  });
}

test('the deliverables from the trimmed local mesh: the OBJ zip, the absolute PLY and the web copy within its face limit', async () => {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'mesh-outputs-'));
  try {
    const mesh = gridMesh(120);
    const local = path.join(dir, 'meshed-trimmed.ply');
    await writePlyMeshFile(local, mesh);
    const out = await writeMeshOutputs(local, NORTH_FIRST, dir, 'test system', 5000);
    assert.equal(out.faces, mesh.faceCount);
    assert.ok(out.webFaces <= 5000 && out.webFaces > 1000, `${out.webFaces} web faces`);
    assert.deepEqual([...(await unzip(out.objZip)).keys()].sort(), ['README.txt', 'mesh.mtl', 'mesh.obj', 'mesh_offset.xyz']);
    const ply = readPlyMesh(await fs.promises.readFile(out.ply));
    assert.deepEqual(Array.from(ply.positions.slice(0, 3)), expectedOutput(mesh, 0, NORTH_FIRST));
    const web = readPlyMesh(await fs.promises.readFile(out.webPly));
    assert.equal(web.faceCount, out.webFaces);
    // The web copy is local (small numbers) in the output system's axis order: x is north here.
    for (let v = 0; v < web.vertexCount; v++) {
      assert.ok(web.positions[3 * v] >= 7.3 - 1e-9 && web.positions[3 * v] <= 7.3 + 0.25 * 119 + 1e-9, `x ${web.positions[3 * v]} is a local north`);
    }
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
});
