// The inspection's point cloud read from storage, kept in memory for the next request: coords_3d
// (annotations/coords-3d.ts) and measurement volumes (measurements/volume.ts) read the same
// clouds, often several times in a row (a series of annotations, a body of measurements).
// The cloud read is the cloud project's full point cloud (reconstruction.point_cloud, not the
// clipped one: what is pointed at or measured may lie outside the clipping radius), LAS or LAZ.
import type { InspectionRow } from '../inspection.tables.ts';
import { readPointCloudFile, type PointCloud } from '../../shared/pointcloud/index.ts';
import { readStoredObject, type Reconstruction, type StoredObject } from '../pipeline/reconstruction.ts';
import type { FileStore } from './inspection-files.ts';

/** Point clouds kept in memory (most recently used). */
const CACHED_CLOUDS = 4;

export class StoredPointClouds {
  private readonly clouds = new Map<string, Promise<PointCloud>>();

  /** `files`: also read by measurement volumes for the DSM, from the same store. */
  constructor(readonly files: FileStore) {}

  /** The inspection's full point cloud and the metres per unit of its system; null when it has none or it cannot be read. */
  async of(inspection: InspectionRow): Promise<{ cloud: PointCloud; unitFactor: number } | null> {
    const reconstruction = inspection.reconstruction as Reconstruction | null;
    if (!reconstruction?.point_cloud) return null;
    const cloud = await this.read(reconstruction.point_cloud).catch(() => null);
    return cloud ? { cloud, unitFactor: reconstruction.coordinate_system?.unit_factor ?? 1 } : null;
  }

  /** The cloud stored at `source` (rejects when it cannot be read: not LAS/LAZ, removed). */
  read(source: StoredObject): Promise<PointCloud> {
    const id = `${source.bucket}/${source.key}`;
    let cloud = this.clouds.get(id);
    if (cloud) {
      this.clouds.delete(id); // re-inserted: most recently used last
    } else {
      cloud = readStoredObject(this.files, source).then((data) => readPointCloudFile(data));
      cloud.catch(() => this.clouds.delete(id));
    }
    this.clouds.set(id, cloud);
    while (this.clouds.size > CACHED_CLOUDS) this.clouds.delete(this.clouds.keys().next().value!);
    return cloud;
  }
}
