// The delivered `3d_mesh_obj_zip`: the mesh as Wavefront OBJ + MTL with per-vertex colours, the
// offset file and a README, zipped.
//
// Coordinates: the OBJ holds output-system coordinates minus an offset, and `<name>_offset.xyz`
// holds that offset (x y z in the output system's axis order and unit), as Pix4D's
// `3d_mesh_obj_zip` does. Why not absolute coordinates (ODM's odm_textured_model_geo.obj is in UTM):
// the viewers that open OBJ keep positions in 32-bit floats (three.js's OBJLoader builds a
// Float32BufferAttribute, Blender and MeshLab store floats), and a float keeps about 7 digits: a
// UTM northing of 6 170 000 m has a step of 0.5 m, which shreds a mesh of centimetre detail.
// GIS-side tools that want absolute positions (CloudCompare's global shift, QGIS's 3D view) take
// them from the offset file or from the `3d_mesh_ply`, which is absolute in doubles
// (mesh-ply.ts). The offset is the engine's `offset_3d_xyz` (georeference.ts), so the OBJ shares
// its frame with the rest of the engine's outputs and the OBJ's numbers are the local frame's.
// For an output system whose first axis is north, x and y are swapped like every other output,
// and the triangles' winding is reversed so that their normals still face up (a swap mirrors).
//
// Vertex colours: `v x y z r g b` with r g b in 0..1, sRGB (Paul Bourke's note on OBJ vertex
// colour: "widely supported"). MeshLab writes and reads this form; three.js's OBJLoader reads the
// 7-value `v` line as an sRGB colour and sets `vertexColors` (checked in test/mesh-files.test.ts);
// Blender's built-in C++ OBJ importer reads it (and MRGB) into a Color attribute since the change
// D15159 of 2022 (the 3.3 series; the legacy Python importer ignored vertex colours); Obj2Tiles
// reads it since 2026. The MTL has one white material, so a viewer
// that multiplies by the material colour shows the vertex colours unchanged.
//
// The OBJ is written to a file in chunks (a few MB of text at a time: a mesh of millions of faces
// is never one string) and zipped from that file by yazl.
import fs from 'node:fs';
import path from 'node:path';
import yazl from 'yazl';
import { offsetPosition, windingOrder, type MeshFrame } from './mesh-frame.ts';
import { closeStream, writeChunk, type PlyMesh } from './mesh-ply.ts';

export interface ObjZipOptions {
  /** Base name of the files in the zip, e.g. `mesh` -> mesh.obj, mesh.mtl, mesh_offset.xyz. */
  name: string;
  /** The output coordinate system, for the README (e.g. `WGS 84 / UTM zone 33N (EPSG:32633)`). */
  coordinateSystem: string;
}

const CHUNK = 16384;
/** Decimals of coordinates: 0.1 mm in metres. */
const COORDINATE_DECIMALS = 4;

/** Writes the OBJ (referring to `<name>.mtl`), in chunks. */
export async function writeObjFile(file: string, mesh: PlyMesh, frame: MeshFrame, name: string): Promise<void> {
  const out = fs.createWriteStream(file);
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  const work = (async () => {
    await writeChunk(out, `# ${mesh.vertexCount} vertices, ${mesh.faceCount} triangles; coordinates: output system minus ${name}_offset.xyz\nmtllib ${name}.mtl\no ${name}\n`);
    for (let first = 0; first < mesh.vertexCount; first += CHUNK) {
      const lines: string[] = [];
      for (let v = first; v < Math.min(first + CHUNK, mesh.vertexCount); v++) {
        const [x, y, z] = offsetPosition(mesh, v, frame);
        let line = `v ${x.toFixed(COORDINATE_DECIMALS)} ${y.toFixed(COORDINATE_DECIMALS)} ${z.toFixed(COORDINATE_DECIMALS)}`;
        if (mesh.colors) line += ` ${(mesh.colors[3 * v] / 255).toFixed(3)} ${(mesh.colors[3 * v + 1] / 255).toFixed(3)} ${(mesh.colors[3 * v + 2] / 255).toFixed(3)}`;
        lines.push(line);
      }
      await writeChunk(out, `${lines.join('\n')}\n`);
    }
    await writeChunk(out, `usemtl ${name}\n`);
    const [second, third] = windingOrder(frame);
    for (let first = 0; first < mesh.faceCount; first += CHUNK) {
      const lines: string[] = [];
      for (let f = first; f < Math.min(first + CHUNK, mesh.faceCount); f++) {
        lines.push(`f ${mesh.indices[3 * f] + 1} ${mesh.indices[3 * f + second] + 1} ${mesh.indices[3 * f + third] + 1}`);
      }
      await writeChunk(out, `${lines.join('\n')}\n`);
    }
    await closeStream(out);
  })();
  await Promise.race([work, failed]);
}

export function mtlText(name: string): string {
  return `# vertex colours are in ${name}.obj (v x y z r g b); the material is white so that they show unchanged\nnewmtl ${name}\nKa 1.000 1.000 1.000\nKd 1.000 1.000 1.000\nKs 0.000 0.000 0.000\nd 1.0\nillum 1\n`;
}

/** The offset file: one line `x y z` in the output system (Pix4D's `*_offset.xyz`). */
export function offsetText(frame: MeshFrame): string {
  return `${frame.offsetOutput.map((c) => String(c)).join(' ')}\n`;
}

export function readmeText(name: string, frame: MeshFrame, options: ObjZipOptions, mesh: PlyMesh): string {
  const [x, y, z] = frame.offsetOutput;
  return [
    `${name}.obj: triangle mesh (${mesh.vertexCount} vertices, ${mesh.faceCount} triangles) with per-vertex colours (v x y z r g b, r g b in 0..1).`,
    `${name}.mtl: its material (white; the colours are the vertices').`,
    `${name}_offset.xyz: the offset "x y z".`,
    '',
    `Coordinate system: ${options.coordinateSystem}; heights are EGM96 heights.`,
    `The OBJ's coordinates are the coordinate system's minus the offset ${x} ${y} ${z}:`,
    `  X = x + ${x}, Y = y + ${y}, Z = z + ${z}`,
    'They are kept small so that viewers, which store positions as 32-bit floats, keep their precision.',
    'The 3d_mesh_ply output is the same mesh in absolute coordinates (doubles).',
    '',
  ].join('\n');
}

/** Writes `<name>.obj` into `workDir`, then the zip (OBJ, MTL, offset, README) to `zipPath`. */
export async function writeMeshObjZip(zipPath: string, mesh: PlyMesh, frame: MeshFrame, workDir: string, options: ObjZipOptions): Promise<void> {
  const name = options.name;
  const objPath = path.join(workDir, `${name}.obj`);
  await writeObjFile(objPath, mesh, frame, name);
  const zip = new yazl.ZipFile();
  zip.addFile(objPath, `${name}.obj`);
  zip.addBuffer(Buffer.from(mtlText(name)), `${name}.mtl`);
  zip.addBuffer(Buffer.from(offsetText(frame)), `${name}_offset.xyz`);
  zip.addBuffer(Buffer.from(readmeText(name, frame, options, mesh)), 'README.txt');
  zip.end();
  const out = fs.createWriteStream(zipPath);
  await new Promise<void>((resolve, reject) => {
    zip.outputStream.on('error', reject).pipe(out).on('error', reject).on('close', () => resolve());
  });
  await fs.promises.rm(objPath, { force: true });
}
