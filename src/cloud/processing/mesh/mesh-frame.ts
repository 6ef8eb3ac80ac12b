// The mesh's vertices from the engine's local frame (east, north, up minus `offset_3d_xyz`:
// georeference.ts) to what the delivered files hold: the OBJ keeps output coordinates minus the
// offset (mesh-obj.ts says why), the PLY absolute output coordinates. An output system whose first
// axis is north gets x and y swapped, as LocalFrame.toOutput does; a swap mirrors the mesh, so the
// triangles' winding is reversed with it to keep their normals facing the same way.
import type { Vec3 } from '../../../shared/geo/rotation.ts';
import { writePlyMeshFile, type PlyMesh } from './mesh-ply.ts';

/** Where the engine's local frame sits in the output system (LocalFrame's fields of the same names). */
export interface MeshFrame {
  offsetOutput: Vec3;
  swapped: boolean;
}

/** Vertex `v` in output coordinates minus the offset (the local frame, x/y swapped for a north-first system). */
export function offsetPosition(mesh: Pick<PlyMesh, 'positions'>, v: number, frame: MeshFrame): Vec3 {
  const e = mesh.positions[3 * v];
  const n = mesh.positions[3 * v + 1];
  const u = mesh.positions[3 * v + 2];
  return frame.swapped ? [n, e, u] : [e, n, u];
}

/** The triangle's second and third corners, in the order that keeps its orientation in output coordinates. */
export function windingOrder(frame: MeshFrame): [number, number] {
  return frame.swapped ? [2, 1] : [1, 2];
}

/** The mesh in absolute output coordinates. */
export function toOutputCoordinates(mesh: PlyMesh, frame: MeshFrame): PlyMesh {
  const positions = new Float64Array(mesh.positions.length);
  const [ox, oy, oz] = frame.offsetOutput;
  for (let v = 0; v < mesh.vertexCount; v++) {
    const [x, y, z] = offsetPosition(mesh, v, frame);
    positions[3 * v] = x + ox;
    positions[3 * v + 1] = y + oy;
    positions[3 * v + 2] = z + oz;
  }
  const [second, third] = windingOrder(frame);
  const indices = new Uint32Array(mesh.indices.length);
  for (let f = 0; f < mesh.faceCount; f++) {
    indices[3 * f] = mesh.indices[3 * f];
    indices[3 * f + 1] = mesh.indices[3 * f + second];
    indices[3 * f + 2] = mesh.indices[3 * f + third];
  }
  return { ...mesh, positions, indices };
}

/** Writes the delivered `3d_mesh_ply` (absolute output coordinates in doubles) from the local mesh. */
export async function writeOutputMeshPly(file: string, localMesh: PlyMesh, frame: MeshFrame, coordinateSystem: string): Promise<void> {
  await writePlyMeshFile(file, toOutputCoordinates(localMesh, frame), [`coordinate system: ${coordinateSystem}; heights EGM96`, `offset_3d_xyz ${frame.offsetOutput.join(' ')} (already added)`]);
}
