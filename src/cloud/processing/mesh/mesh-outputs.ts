// The mesh's deliverables from the trimmed local mesh that meshFromFusedCloud wrote: what the
// engine's mesh stage uploads.
// - `3d_mesh_obj_zip`: OBJ + MTL + offset file + README (mesh-obj.ts), output coordinates minus
//   the offset;
// - `3d_mesh_ply`: the same mesh in absolute output coordinates, doubles (mesh-frame.ts);
// - the web viewer's copy: at most `webMaxFaces` triangles (mesh-decimate.ts), in the local frame
//   (output coordinates minus `offset_3d_xyz`, x/y as the output system orders them), so that the
//   browser's 32-bit floats keep its detail; the 3D tab adds the offset it already has.
import path from 'node:path';
import { decimateMesh } from './mesh-decimate.ts';
import { toOutputCoordinates, writeOutputMeshPly, type MeshFrame } from './mesh-frame.ts';
import { writeMeshObjZip } from './mesh-obj.ts';
import { readPlyMeshFile, writePlyMeshFile } from './mesh-ply.ts';

/** A browser draws this many triangles smoothly on modest hardware. */
export const WEB_MAX_FACES = 200_000;

export interface MeshOutputs {
  objZip: string;
  ply: string;
  webPly: string;
  faces: number;
  webFaces: number;
}

export async function writeMeshOutputs(localMeshPly: string, frame: MeshFrame, workDir: string, coordinateSystem: string, webMaxFaces = WEB_MAX_FACES): Promise<MeshOutputs> {
  const mesh = await readPlyMeshFile(localMeshPly);
  const objZip = path.join(workDir, '3d_mesh_obj.zip');
  await writeMeshObjZip(objZip, mesh, frame, workDir, { name: 'mesh', coordinateSystem });
  const ply = path.join(workDir, '3d_mesh.ply');
  await writeOutputMeshPly(ply, mesh, frame, coordinateSystem);
  const web = decimateMesh(mesh, webMaxFaces);
  const webPly = path.join(workDir, '3d_mesh_web.ply');
  // The output axis order with the offset taken off again: the local frame as the output system orders it.
  const webFrame: MeshFrame = { offsetOutput: [0, 0, 0], swapped: frame.swapped };
  await writePlyMeshFile(webPly, toOutputCoordinates(web, webFrame), [`coordinate system: ${coordinateSystem} minus offset_3d_xyz ${frame.offsetOutput.join(' ')}`]);
  return { objZip, ply, webPly, faces: mesh.faceCount, webFaces: web.faceCount };
}
