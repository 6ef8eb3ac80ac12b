// Stage `meshing`: `colmap poisson_mesher` on the fused cloud, trimmed by density, by distance to
// the fused points and of small pieces (mesh/poisson-mesher.ts: why COLMAP's own trim is not used),
// delivered as `3d_mesh_obj_zip` (OBJ + MTL with vertex colours + offset file, mesh/mesh-obj.ts)
// and `3d_mesh_ply` (absolute output coordinates, doubles), and `3d_mesh_web_ply`, the copy the
// console's 3D tab draws (at most WEB_MAX_FACES faces, float coordinates minus offset_3d_xyz: the
// offset is in its header comment). The web copy is a viewing aid like `ortho_thumb`: it is not
// listed as not available when the mesh is not made (dense-plan.ts lists the deliverables).
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import fsp from 'node:fs/promises';
import { meshFromFusedCloud } from '../../mesh/poisson-mesher.ts';
import { writeMeshOutputs } from '../../mesh/mesh-outputs.ts';
import { putFile, type DenseProducts } from './dense-products.ts';
import type { FusedCloud } from './fusion.ts';
import type { Placement } from './georegistration.ts';
import type { Stage } from './stage.ts';

export function meshingStage(binary: string): Stage<{ fused: FusedCloud; placement: Placement }, DenseProducts> {
  return {
    name: 'meshing',
    title: 'Meshing the surface',
    weight: 6,
    async run(context, { fused, placement }) {
      const folder = path.join(context.work, 'mesh');
      await fsp.mkdir(folder, { recursive: true });
      // COLMAP's output and the trim's summary go into the stage's section of the log.
      const log = new Writable({ write: (chunk, _encoding, done) => (context.log(String(chunk).replace(/\n$/, '')), done()) });
      const mesh = await meshFromFusedCloud(fused.plyPath, folder, { binary, glogDir: context.glogDir, log, threads: os.availableParallelism() }, context.signal);
      await context.progress(0.7, 'Writing the mesh');
      const frame = { offsetOutput: placement.frame?.offsetOutput ?? ([0, 0, 0] as const), swapped: placement.frame?.swapped ?? false };
      const files = await writeMeshOutputs(mesh.meshPly, frame, folder, context.input.outputCrs.name);
      context.log(`mesh: ${files.faces} faces (${mesh.vertices} vertices, octree depth ${mesh.depth}), web copy ${files.webFaces} faces`);
      const outputs = [
        await putFile(context.input, '3d_mesh_obj_zip', files.objZip, '3d_mesh_obj.zip', 'application/zip'),
        await putFile(context.input, '3d_mesh_ply', files.ply, '3d_mesh.ply', 'application/octet-stream'),
        await putFile(context.input, '3d_mesh_web_ply', files.webPly, '3d_mesh_web.ply', 'application/octet-stream'),
      ];
      return { outputs, leftOut: [] };
    },
  };
}
