// What the processing of an inspection is doing, in one read for the web console's processing
// page: the inspection's own status and reason of failure (`processing_error`), and the state of
// its cloud project as the cloud's public API reports it (public_status, progress, detailed
// status, error code and reason, engine) and, once it is DONE, a summary of what it made
// (processing-summary.ts). Not in the spec: the inspection record carries none of
// the cloud's detail, and the console reaches the cloud only through this service.
import { Type, type Static } from 'typebox';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { FileStore } from '../storage/inspection-files.ts';
import type { Reconstruction } from '../pipeline/reconstruction.ts';
import { ApiError } from '../../infra/http/errors.ts';
import { processingSummary, ProcessingSummary } from './processing-summary.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const ProcessingState = Type.Object(
  {
    status: Type.Integer({ description: 'The inspection status' }),
    error_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the inspection is in an error status, in words' }),
    cloud: Type.Union(
      [
        Type.Object({
          public_status: Type.String({ description: 'NEW, UPLOADING, WAITING, PROCESSING, DONE, ERROR or CANCELED' }),
          detailed_status: Type.String(),
          progress: Type.Union([Type.Number(), Type.Null()], { description: 'Percent of the cloud processing done' }),
          error_code: Type.Union([Type.Integer(), Type.Null()]),
          error_reason: NullableString,
          engine: NullableString,
          image_count: Type.Integer(),
          processing_started: NullableString,
          processing_ended: NullableString,
        }),
        Type.Null(),
      ],
      { description: 'The cloud project; null when it is not known (not created, or deleted)' },
    ),
    summary: Type.Union([ProcessingSummary, Type.Null()], { description: 'What the processing made, once the cloud project is DONE; null before' }),
  },
  { description: 'State of the processing of an inspection. Not in the spec: the web console shows the cloud project detail, which the inspection record does not carry.' },
);
export type ProcessingState = Static<typeof ProcessingState>;

interface CloudProjectDetail {
  public_status: string;
  display_detailed_status: string;
  progress?: number | null;
  error_code: number | null;
  error_reason: string | null;
  engine?: string | null;
  image_count: number;
  last_datetime_processing_started?: string | null;
  last_datetime_processing_ended?: string | null;
}

export class ProcessingStatusService {
  constructor(
    private readonly access: InspectionAccess,
    private readonly cloud: CloudClient,
    private readonly files: FileStore,
  ) {}

  async get(auth: AuthContext, id: number): Promise<ProcessingState> {
    const inspection = await this.access.requireInspection(auth, id);
    let cloud: ProcessingState['cloud'] = null;
    if (inspection.project_id !== null) {
      const project = (await this.cloud.as(inspection).getProject(inspection.project_id).catch((err) => {
        if (err instanceof ApiError && err.statusCode === 404) return null;
        throw err;
      })) as CloudProjectDetail | null;
      if (project) {
        cloud = {
          public_status: project.public_status,
          detailed_status: project.display_detailed_status,
          progress: project.progress ?? null,
          error_code: project.error_code,
          error_reason: project.error_reason || null,
          engine: project.engine ?? null,
          image_count: project.image_count,
          processing_started: project.last_datetime_processing_started ?? null,
          processing_ended: project.last_datetime_processing_ended ?? null,
        };
      }
    }
    const reconstruction = inspection.reconstruction as Reconstruction | null;
    const summary =
      cloud?.public_status === 'DONE'
        ? await processingSummary(this.files, await this.cloud.as(inspection).outputs(inspection.project_id!), {
            total: cloud.image_count,
            placed: reconstruction?.reconstructed ? (reconstruction.images_registered ?? null) : null,
          })
        : null;
    return { status: inspection.status, error_reason: inspection.processing_error, cloud, summary };
  }
}
