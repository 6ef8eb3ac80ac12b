// Where the inspection service keeps the files it builds (inputs ZIPs, reports, clipped point clouds): in the shared
// object store, under a prefix of its own, out of reach of the temporary credentials clients get
// (those only cover a cloud project's upload prefix). Clients download them with presigned URLs.
import type { ObjectStore } from '../../infra/storage/object-store.ts';

/** Lifetime of the presigned URLs handed out in outputs and inputs answers (CONTRACT: at least 1 hour). */
export const DOWNLOAD_URL_TTL_SECONDS = 6 * 3600;

/**
 * Keys of one inspection's files. `generation` (the time the file was requested, ms) keeps a
 * slow, superseded build from overwriting the file of a newer request.
 */
export const inspectionFiles = {
  prefix: (inspectionId: number) => `inspection-service/inspections/${inspectionId}/`,
  inputsZip: (inspectionId: number, generation: number) => `inspection-service/inspections/${inspectionId}/inputs/${generation}/inputs-${inspectionId}.zip`,
  reportPdf: (inspectionId: number, generation: number) => `inspection-service/inspections/${inspectionId}/report/${generation}/report-${inspectionId}.pdf`,
  /** The point cloud clipped around the asset (status 5): LAS, and PLY beside it. */
  clippedPointCloud: (inspectionId: number, generation: number, extension: 'las' | 'ply') => `inspection-service/inspections/${inspectionId}/point-cloud/${generation}/point_cloud_clipped.${extension}`,
  /** A photo's preview made by sharp (previews/preview.service.ts), kept for the next request. */
  photoPreview: (inspectionId: number, photoId: number, size: string) => `inspection-service/inspections/${inspectionId}/previews/${photoId}-${size}.jpg`,
  reportJson: (inspectionId: number, generation: number) => `inspection-service/inspections/${inspectionId}/report/${generation}/report-${inspectionId}.json`,
  /** The copy of a report file (reportPdf, reportJson) that share holders read: no share token, no e-mail (reports/report-data.ts shareHolderView). */
  reportForShareHolders: (reportKey: string) => `${reportKey.slice(0, reportKey.lastIndexOf('/') + 1)}shared/${reportKey.slice(reportKey.lastIndexOf('/') + 1)}`,
};

/** A background build that has not finished within this long is considered dead and can be requested again. */
export const STALE_BUILD_MS = 3600 * 1000;

/** The object store and the bucket of the service's own files. */
export interface FileStore {
  store: ObjectStore;
  bucket: string;
}
