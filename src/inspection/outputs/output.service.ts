// Outputs of an inspection (spec "Get outputs"): `[{output_type, url}]`, a presigned GET URL per
// file that exists now, valid DOWNLOAD_URL_TTL_SECONDS (CONTRACT: at least one hour).
// - the cloud project's outputs whose availability is `done`, under the cloud's names
//   (`calibrated_camera_parameters_json`, `point_cloud`, `3d_mesh_web_ply` the 3D tab draws, ...),
//   every type passed through as the cloud lists it, the point cloud clipped around the
//   asset in place of the full one when the inspection was clipped (status 5);
// - this service's own files: `report_pdf` and `report_json` once a report is available, and
//   `input_zip` (the cloud's name for it) once the inputs ZIP is built.
// A share holder (auth/share-tokens.ts) gets URLs that last SHARE_TOKEN_URL_TTL_SECONDS, and the
// report's copy made for share holders (no share token, no e-mail address); a report built
// before such copies existed is not listed to them.
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { Reconstruction } from '../pipeline/reconstruction.ts';
import { ApiError } from '../../infra/http/errors.ts';
import { inspectionFiles, type FileStore } from '../storage/inspection-files.ts';
import { downloadUrlSeconds } from '../auth/share-tokens.ts';

export interface OutputRecord {
  output_type: string;
  url: string;
}

export class OutputService {
  constructor(
    private readonly access: InspectionAccess,
    private readonly cloud: CloudClient,
    private readonly files: FileStore,
  ) {}

  async list(auth: AuthContext, id: number): Promise<OutputRecord[]> {
    const inspection = await this.access.requireInspection(auth, id);
    const urlSeconds = downloadUrlSeconds(auth);
    const presign = (bucket: string, key: string) => this.files.store.presignGetUrl(bucket, key, urlSeconds);
    const outputs: OutputRecord[] = [];
    // Purged by retention (retention/retention.service.ts): the report alone stays.
    if (inspection.project_id !== null && !inspection.purged_at) {
      const cloudOutputs = await this.cloud.as(inspection).outputs(inspection.project_id).catch((err) => {
        if (err instanceof ApiError && err.statusCode === 404) return [];
        throw err;
      });
      // A clipped point cloud (status 5) replaces the cloud's full one as `point_cloud` (and its PLY).
      const clipped = (inspection.reconstruction as Reconstruction | null)?.clipped_point_cloud ?? null;
      for (const o of cloudOutputs) {
        if (o.availability !== 'done' || !o.s3_key) continue;
        if (clipped && o.output_type === 'point_cloud') outputs.push({ output_type: o.output_type, url: await presign(clipped.bucket, clipped.key) });
        else if (clipped && o.output_type === 'point_cloud_ply') outputs.push({ output_type: o.output_type, url: await presign(clipped.bucket, clipped.ply_key) });
        else outputs.push({ output_type: o.output_type, url: await presign(o.s3_bucket ?? this.files.bucket, o.s3_key) });
      }
    }
    if (inspection.inputs_zip_status === 'available' && inspection.inputs_zip_key && !inspection.purged_at) {
      outputs.push({ output_type: 'input_zip', url: await presign(this.files.bucket, inspection.inputs_zip_key) });
    }
    if (inspection.report_status === 'available' && inspection.report_pdf_key && inspection.report_json_key) {
      const report = { pdf: inspection.report_pdf_key, json: inspection.report_json_key };
      const readable = auth.share ? await this.shareHoldersCopy(report) : report;
      if (readable) {
        outputs.push({ output_type: 'report_pdf', url: await presign(this.files.bucket, readable.pdf) });
        outputs.push({ output_type: 'report_json', url: await presign(this.files.bucket, readable.json) });
      }
    }
    return outputs;
  }

  /** The keys of the report's copy for share holders, if it was made (reports built since issue 27). */
  private async shareHoldersCopy(report: { pdf: string; json: string }): Promise<{ pdf: string; json: string } | undefined> {
    const copy = { pdf: inspectionFiles.reportForShareHolders(report.pdf), json: inspectionFiles.reportForShareHolders(report.json) };
    // The PDF is written after the JSON: its presence says both are there.
    return (await this.files.store.headObject(this.files.bucket, copy.pdf)) ? copy : undefined;
  }
}
