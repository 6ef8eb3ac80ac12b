// The 3D view's rules: the PLY the colmap engine writes read back in the browser's parser (with
// absolute UTM coordinates kept to the millimetre), the mesh's web copy as the engine writes it
// (faces, colours, the offset its header names), and measurement lengths and areas equal to what
// the service prints in the report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPointCloud } from '../src/shared/pointcloud/point-cloud.ts';
import { writePly } from '../src/shared/pointcloud/ply.ts';
import { writePlyMeshFile } from '../src/cloud/processing/mesh/mesh-ply.ts';
import { tempDir } from './helpers/test-system.ts';
import fs from 'node:fs';
import path from 'node:path';
import { measure } from '../src/inspection/measurements/quantities.ts';
import { offsetFromComments, parsePly, parsePlyMesh, PlyFormatError } from '../web/src/lib/ply.ts';
import { closeRing, describe, pathLength, ringArea, type Point3 } from '../web/src/lib/measure-geometry.ts';

test('PLY: the service writes it, the console reads it back, centred, to the millimetre', () => {
  const positions = new Float64Array([370001.2345, 6170002.5, 40.125, 370003.2345, 6170000.5, 42.125, 370002.2345, 6170001.5, 41.125]);
  const colors = new Uint8Array([255, 0, 0, 0, 255, 0, 0, 0, 255]);
  const cloud = { ...createPointCloud(3, true), positions, colors };
  const file = writePly(cloud, ['coordinate system: WGS 84 / UTM zone 33N']);
  const parsed = parsePly(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer);
  assert.equal(parsed.count, 3);
  assert.deepEqual(parsed.comments, ['coordinate system: WGS 84 / UTM zone 33N']);
  for (let i = 0; i < 9; i++) assert.ok(Math.abs(parsed.positions[i] + parsed.centre[i % 3] - positions[i]) < 0.001, `coordinate ${i}`);
  assert.deepEqual(Array.from(parsed.colors!.slice(0, 3)), [255, 0, 0]);
  assert.equal(parsed.fileCount, 3);
  // A budget keeps every k-th point.
  assert.equal(parsePly(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer, 2).count, 2);
  assert.throws(() => parsePly(new TextEncoder().encode('not a ply').buffer as ArrayBuffer), PlyFormatError);
  const cut = file.subarray(0, file.length - 5);
  assert.throws(() => parsePly(cut.buffer.slice(cut.byteOffset, cut.byteOffset + cut.byteLength) as ArrayBuffer), /cut short/);
});

test('mesh PLY: the engine writes its web copy, the console reads faces, colours and the offset', async () => {
  // Two triangles and a quad (split into two) over 5 vertices, as writePlyMeshFile writes them.
  const file = path.join(tempDir('oi-web-mesh-'), 'mesh.ply');
  const positions = new Float64Array([0, 0, 10, 4, 0, 10, 4, 4, 10, 0, 4, 10, 2, 2, 14]);
  const colors = new Uint8Array([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150]);
  await writePlyMeshFile(file, { vertexCount: 5, positions, colors, faceCount: 2, indices: new Uint32Array([0, 1, 4, 1, 2, 4]) }, ['coordinate system: WGS 84 / UTM zone 15N minus offset_3d_xyz 386551 6174045 -2.5']);
  const bytes = fs.readFileSync(file);
  const mesh = parsePlyMesh(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  assert.equal(mesh.count, 5);
  assert.equal(mesh.faceCount, 2);
  assert.deepEqual(Array.from(mesh.indices), [0, 1, 4, 1, 2, 4]);
  assert.deepEqual(Array.from(mesh.colors!.slice(12)), [130, 140, 150]);
  for (let i = 0; i < 15; i++) assert.ok(Math.abs(mesh.positions[i] + mesh.centre[i % 3] - positions[i]) < 1e-6, `coordinate ${i}`);
  assert.deepEqual(offsetFromComments(mesh.comments), [386551, 6174045, -2.5]);
  assert.equal(offsetFromComments(['coordinate system: EPSG:32615']), null);
  // A point cloud is not a mesh; a face naming a vertex past the last is refused.
  const cloud = writePly({ ...createPointCloud(1, false), positions: new Float64Array([1, 2, 3]) });
  assert.throws(() => parsePlyMesh(cloud.buffer.slice(cloud.byteOffset, cloud.byteOffset + cloud.byteLength) as ArrayBuffer), /no faces/);
  await writePlyMeshFile(file, { vertexCount: 3, positions: positions.slice(0, 9), colors: null, faceCount: 1, indices: new Uint32Array([0, 1, 7]) });
  const bad = fs.readFileSync(file);
  assert.throws(() => parsePlyMesh(bad.buffer.slice(bad.byteOffset, bad.byteOffset + bad.byteLength) as ArrayBuffer), /does not exist/);
});

test('measurements: the console shows the lengths and areas the report prints', () => {
  const line: Point3[] = [[370000, 6170000, 40], [370003, 6170004, 40], [370003, 6170004, 52]];
  assert.equal(pathLength(line), measure({ type: 'LineString', coordinates: line } as never).length_m);
  assert.equal(pathLength(line), 17);
  // A vertical 4 m x 3 m wall face.
  const ring = closeRing([[0, 0, 0], [4, 0, 0], [4, 0, 3], [0, 0, 3]]);
  assert.equal(ring.length, 5);
  assert.equal(ringArea(ring), 12);
  assert.equal(ringArea(ring), measure({ type: 'Polygon', coordinates: [ring] } as never).area_m2);
  assert.equal(describe({ type: 'Polygon', coordinates: [ring] }), '12.00 m² · perimeter 14.00 m');
  assert.equal(describe({ type: 'LineString', coordinates: line }), '17.00 m');
  assert.deepEqual(closeRing(ring), ring, 'a closed ring stays as it is');
});
