// Kysely row types of schema `cloud` (see cloud.migrations.ts).
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { OutputCoordinateSystem } from './coordinate-systems/crs.ts';
import type { RequestedOutputs } from './processing/requested-outputs.ts';
import type { RasterInfo } from './processing/map-layers.ts';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface CloudTables {
  'cloud.organizations': { id: Generated<number>; uuid: string; name: string; created_at: Generated<Date> };
  'cloud.clients': {
    id: Generated<number>;
    client_id: string;
    secret_hash: string;
    organization_id: number;
    name: string;
    /** A service client may act for any organization it names in its token request (issue 30). */
    acts_for_organizations: Generated<boolean>;
    /** Where the client's processing and webhook e-mails go (notifications/cloud-mail.ts); null: none. */
    email: ColumnType<string | null, string | null | undefined, string | null>;
    created_at: Generated<Date>;
  };
  'cloud.project_groups': {
    id: Generated<number>;
    uuid: string;
    name: string;
    project_group_type: string;
    organization_id: number;
    created_at: Generated<Date>;
  };
  'cloud.folders': {
    id: Generated<number>;
    uuid: string;
    name: string;
    organization_id: number;
    parent_id: number | null;
    created_at: Generated<Date>;
  };
  'cloud.projects': ProjectsTable;
  /** Webhook subscriptions of an organization's projects (webhooks/cloud-webhooks.ts; columns as infra/webhooks/webhook-core.ts). */
  'cloud.webhooks': {
    id: Generated<number>;
    organization_id: number;
    client_id: number | null;
    url: string;
    events: ColumnType<string[], string, string>;
    secret_sealed: string;
    created_at: Generated<Date>;
    failed_events: Generated<number>;
    disabled_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    disabled_reason: string | null;
  };
  'cloud.project_inputs': {
    project_id: number;
    key: string;
    size: number;
    /** Cached image analysis (see processing/input-analysis.ts); null until read. */
    analysis: ColumnType<StoredAnalysis | null, string | null | undefined, string | null>;
    created_at: Generated<Date>;
  };
  'cloud.project_outputs': {
    id: Generated<number>;
    project_id: number;
    output_type: string;
    result_type: string;
    availability: string;
    s3_key: string | null;
    note: string | null;
    /** A georeferenced raster's map-layer description (processing/map-layers.ts); null otherwise. */
    raster: ColumnType<RasterInfo | null, string | null | undefined, string | null>;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  'cloud.project_gcps': {
    project_id: number;
    name: string;
    point_type: string;
    x: number;
    y: number;
    z: number;
    xy_accuracy: number;
    z_accuracy: number;
    created_at: Generated<Date>;
  };
  'cloud.project_mtps': { project_id: number; name: string; is_checkpoint: boolean; created_at: Generated<Date> };
  'cloud.project_marks': { project_id: number; point_name: string; photo: string; x: number; y: number; created_at: Generated<Date> };
  /** Extra files registered with a project (projects/project-extras.ts). */
  'cloud.project_extras': { project_id: number; key: string; size: number; created_at: Generated<Date> };
  /** A project's share link: the SHA-256 of its token (projects/share-links.ts). */
  'cloud.project_share_links': { project_id: number; token_hash: string; client_id: number | null; created_at: Generated<Date> };
}

/** What is cached of one input's image analysis (ImageMetadata with its date as an ISO string). */
export type StoredAnalysis =
  | {
      ok: true;
      width: number;
      height: number;
      latitude: number | null;
      longitude: number | null;
      altitude: number | null;
      make: string | null;
      model: string | null;
      focal_length_35mm: number | null;
      captured_at: string | null;
      quaternion: number[] | null;
      format: string;
    }
  | { ok: false; reason: string };

export interface MapBounds {
  /** [latitude, longitude] of the south-west corner. */
  sw: [number, number];
  /** [latitude, longitude] of the north-east corner. */
  ne: [number, number];
}

export interface ProjectsTable {
  id: Generated<number>;
  uuid: string;
  name: string;
  organization_id: number;
  project_group_id: number | null;
  client_id: number | null;
  user_agent: string | null;
  coordinate_system: string | null;
  public_status: Generated<PublicStatus>;
  detailed_status: Generated<string>;
  progress: Generated<number>;
  error_code: number | null;
  error_reason: Generated<string>;
  tags: ColumnType<string[], string | undefined, string>;
  engine: string | null;
  /** start_processing's `outputs` extension (engine.ts RequestedOutputs); null: the engine's defaults. */
  requested_outputs: ColumnType<RequestedOutputs | null, string | null | undefined, string | null>;
  /** The pipeline processing chose: nadir, oblique, building or mobile. */
  pipeline: string | null;
  folder_id: number | null;
  geoid_model: string | null;
  geoid_height: number | null;
  /** OutputCoordinateSystem (coordinate-systems/crs.ts), recorded when processing resolved it. */
  output_crs: ColumnType<OutputCoordinateSystem | null, string | null | undefined, string | null>;
  is_geolocalized: Generated<boolean>;
  map_bounds: ColumnType<MapBounds | null, string | null | undefined, string | null>;
  image_count: Generated<number>;
  bucket_name: string;
  s3_base_path: string;
  acquisition_date: Timestamp | null;
  processing_started_at: Timestamp | null;
  processing_ended_at: Timestamp | null;
  created_at: Generated<Date>;
  deleted_at: Timestamp | null;
}

export type ProjectRow = Selectable<ProjectsTable>;

/** CONTRACT.md section 3. */
export type PublicStatus = 'NEW' | 'UPLOADING' | 'WAITING' | 'PROCESSING' | 'DONE' | 'ERROR' | 'CANCELED';
