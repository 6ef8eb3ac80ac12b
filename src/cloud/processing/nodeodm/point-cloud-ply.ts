// `point_cloud_ply` for a NodeODM run: ODM delivers its dense cloud as LAZ only, and the console's
// 3D view (and the inspection's clipped copy, which replaces the PLY when the cloud lists one)
// reads PLY with double coordinates, as the colmap engine writes it (sparse-outputs.ts). So the
// node's cloud is read back from the store, decompressed, and written again as PLY beside it.
// A cloud that cannot be read leaves the run without the PLY (listed not available with the
// reason this returns), never failed: the LAZ is the output the spec names.
import type { ObjectStore } from '../../../infra/storage/object-store.ts';
import { readPointCloudFile, writePly } from '../../../shared/pointcloud/index.ts';

/** Writes the PLY; returns null, or why it could not. */
export async function writePlyCopy(store: ObjectStore, bucket: string, lazKey: string, plyKey: string, coordinateSystem: string): Promise<string | null> {
  try {
    const { body } = await store.getObject(bucket, lazKey);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
    const las = await readPointCloudFile(Buffer.concat(chunks));
    await store.putObject(bucket, plyKey, writePly(las, [`coordinate system: ${coordinateSystem}`]), { contentType: 'application/octet-stream' });
    return null;
  } catch (err) {
    return `The node's point cloud could not be read to copy it as PLY: ${err instanceof Error ? err.message : String(err)}`;
  }
}
