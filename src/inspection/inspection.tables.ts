// Kysely row types of schema `inspection` (see inspection.migrations.ts).
// Past 350 lines: one type per table of the schema, kept together as the migrations are.
import type { ColumnType, Generated, Selectable } from 'kysely';

import type { CameraCalibration, Reconstruction } from './pipeline/reconstruction.ts';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string | undefined, string>;
/** numeric columns come back as strings (exact decimals). */
type Decimal = ColumnType<string, string | number | undefined, string | number>;

export type MemberRole = 'member' | 'admin';

export interface InspectionTables {
  'inspection.organizations': {
    id: Generated<number>;
    uuid: string;
    name: string;
    created_at: Generated<Date>;
    /** Days its inspections' data is kept (retention/retention.service.ts); null: RETENTION_DAYS; 0: kept for ever. */
    retention_days: Generated<number | null>;
  };
  'inspection.users': { id: Generated<number>; username: string; email: string; password_hash: string; created_at: Generated<Date> };
  /** `admin`: may remove the organization's members (auth/membership-removal.ts). */
  'inspection.memberships': { user_id: number; organization_id: number; role: Generated<MemberRole> };
  /** Storage credentials handed out by GET s3_credentials, refused once revoked (a removed member's). */
  'inspection.storage_credential_grants': {
    access_key: string;
    user_id: number;
    organization_id: number | null;
    inspection_id: number;
    expires_at: Timestamp;
    revoked_at: Timestamp | null;
  };
  'inspection.api_keys': {
    id: Generated<number>;
    name: string;
    key_hash: string;
    created_at: Generated<Date>;
    revoked_at: Timestamp | null;
    /** The organization whose applications hold the key (login-throttle.ts: its members' attempts with it are counted apart at their address); null: any application. */
    organization_id: Generated<number | null>;
  };
  'inspection.allowance_types': { id: number; code: string; name: string };
  'inspection.allowance_transactions': {
    id: Generated<number>;
    organization_id: number | null;
    user_id: number | null;
    allowance_type_id: number;
    direction: 'ingress' | 'egress';
    amount: number;
    reason: string;
    inspection_id: number | null;
    created_at: Generated<Date>;
  };
  'inspection.assets': AssetsTable;
  'inspection.inspections': InspectionsTable;
  'inspection.inspection_images': {
    inspection_id: number;
    key: string;
    registered_at: Generated<Date>;
    source: ColumnType<ImageSource, ImageSource | undefined, ImageSource>;
    /** Bytes of an uploaded file when it was registered (null: registered before sizes were kept, or a video frame). */
    size: ColumnType<number | null, number | null | undefined, number | null>;
  };
  'inspection.cameras': CamerasTable;
  'inspection.annotations': AnnotationsTable;
  'inspection.measurements': MeasurementsTable;
  'inspection.inventory_items': InventoryItemsTable;
  'inspection.share_tokens': ShareTokensTable;
  'inspection.webhooks': WebhooksTable;
  'inspection.webhook_messages': WebhookMessagesTable;
  'inspection.webhook_attempts': WebhookAttemptsTable;
}

/** A webhook subscription (webhooks/); `secret_sealed`: its whsec_ secret sealed by SecretBox. */
export interface WebhooksTable {
  id: Generated<number>;
  organization_id: number | null;
  user_id: number;
  url: string;
  events: Json<string[]>;
  secret_sealed: string;
  created_at: Generated<Date>;
  /** Events in a row whose every attempt failed (0 after a success). */
  failed_events: Generated<number>;
  disabled_at: Timestamp | null;
  disabled_reason: string | null;
}

/** One event for one subscription: `body` is the exact JSON signed and sent. */
export interface WebhookMessagesTable {
  id: Generated<number>;
  uid: string;
  webhook_id: number;
  event: string;
  body: string;
  created_at: Generated<Date>;
  state: ColumnType<'pending' | 'delivered' | 'failed', 'pending' | 'delivered' | 'failed' | undefined, 'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  message_id: number;
  webhook_id: number;
  attempt: number;
  at: Generated<Date>;
  status_code: number | null;
  error: string | null;
}

/** A read-only share token of an inspection (auth/share-tokens.ts); the token itself is not stored. */
export interface ShareTokensTable {
  id: Generated<number>;
  inspection_id: number;
  /** Public part of the token, to find its row. */
  selector: string;
  /** SHA-256 (hex) of the whole token. */
  token_hash: string;
  label: Generated<string>;
  created_by: number;
  created_at: Generated<Date>;
  revoked_at: Timestamp | null;
  /** When it stops opening the inspection (SHARE_TOKEN_TTL_SECONDS, or the `expires_in` it was made with). */
  expires_at: Timestamp;
}

/** A registered upload (photos; a video and its telemetry), or a frame taken from a video (video/). */
export type ImageSource = 'upload' | 'video_frame';

export interface AssetsTable {
  id: Generated<number>;
  name: string;
  type: number;
  latitude: Decimal | null;
  longitude: Decimal | null;
  description: string | null;
  user_id: number;
  organization_id: number | null;
  project_group_id: number | null;
  project_group_uuid: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  deleted_at: Timestamp | null;
}

export interface ProcessingParameters {
  is_video?: boolean;
  generate_point_cloud?: boolean;
  clip_point_cloud?: boolean;
  clipping_radius?: number;
  generate_mesh?: boolean;
  generate_dsm?: boolean;
  generate_ortho?: boolean;
  detect_antennas?: boolean;
  detect_rust?: boolean;
  roof_segmentation?: boolean;
}

export interface InspectionsTable {
  id: Generated<number>;
  asset_id: number;
  user_id: number;
  organization_id: number | null;
  project_id: number | null;
  project_uuid: string | null;
  storage_prefix: string | null;
  status: Generated<number>;
  additional_statuses: Json<{ inventory: number | null; rust: number | null }>;
  report_status: Generated<string>;
  app_source: Generated<string>;
  retry_of: number | null;
  /** Set on a main inspection when its first retry is made (never cleared): without it, it has none (inspection-records.ts). */
  has_retries: Generated<boolean>;
  pcs_task_uuid: string | null;
  inspection_date: Timestamp | null;
  description: string | null;
  name: string | null;
  base_plate_location: Json<{ x: number; y: number; z: number } | null> | null;
  top_point_location: Json<{ x: number; y: number; z: number } | null> | null;
  base_plate_size: Decimal | null;
  ground_reference_altitude: Decimal;
  processing_parameters: Json<ProcessingParameters>;
  processing_backend: Generated<string>;
  processing_started_at: Timestamp | null;
  processing_ended_at: Timestamp | null;
  images_valid: number | null;
  images_invalid: number | null;
  processing_error: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  deleted_at: Timestamp | null;
  /** Last annotation number handed out (numbers are 1, 2, 3... per inspection). */
  annotation_seq: Generated<number>;
  inputs_zip_status: Generated<BackgroundFileStatus>;
  inputs_zip_key: string | null;
  inputs_zip_requested_at: Timestamp | null;
  report_options: Json<ReportOptions | null> | null;
  report_pdf_key: string | null;
  report_json_key: string | null;
  report_requested_at: Timestamp | null;
  report_error: string | null;
  /** What photogrammetry produced (pipeline/reconstruction.ts); null before, or without outputs. */
  reconstruction: Json<Reconstruction | null> | null;
  /** When its photos, outputs and inputs were given up by retention (retention/retention.service.ts); routes serving them answer 410 from then on. */
  purged_at: Generated<Date | null>;
}

/** State of a file the service builds in the background (inputs ZIP). */
export type BackgroundFileStatus = 'none' | 'processing' | 'available' | 'error';

export interface ReportOptions {
  include_email: boolean;
  include_annotations: boolean;
  include_polygon_measurements: boolean;
  include_line_measurements: boolean;
  include_inventory_items: boolean;
  include_only_visible: boolean;
  include_sharetoken: boolean;
  include_2d_plans: boolean;
  extra_remarks: string | null;
}

export interface Point3 {
  x: number;
  y: number;
  z: number;
}

export interface AnnotationData {
  coords_2d: [number, number][];
  links?: { link: string; description: string }[];
}

export interface AnnotationsTable {
  id: Generated<number>;
  inspection_id: number;
  user_id: number;
  number: number;
  type: string;
  name: string | null;
  data: Json<AnnotationData>;
  severity_level: number;
  description: string | null;
  photo_id: number;
  coords_3d: Json<Point3 | null> | null;
  public: boolean;
  is_visible: boolean;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface Geometry {
  type: 'Point' | 'LineString' | 'Polygon';
  coordinates: unknown;
  bbox: number[];
}

export interface MeasurementsTable {
  id: string;
  /** Creation order. */
  seq: Generated<number>;
  inspection_id: number;
  user_id: number;
  properties: Json<Record<string, unknown>>;
  tags: Json<string[]>;
  geometry: Json<Geometry>;
  extension: Json<Record<string, unknown>>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface InventoryItemsTable {
  id: Generated<number>;
  inspection_id: number;
  number: number;
  name: Generated<string>;
  model_name: Generated<string>;
  weight: Generated<string>;
  urls: Json<Record<string, unknown>>;
  photo_id: number | null;
  point_of_view: Json<unknown[]>;
  coords_2d: Json<Record<string, unknown>>;
  photo_projection: Json<Record<string, unknown>>;
  coords_3d: Json<unknown[]>;
  public: Generated<boolean>;
  visible: Generated<boolean>;
  device_status: Generated<string>;
  source: Generated<string>;
  model_type: string;
  offset_xyz: Json<Record<string, unknown>>;
  plumb: number | null;
  azimuth: number | null;
  downtilt: number | null;
  height: number | null;
  width: number | null;
  depth: number | null;
  custom_fields: Json<unknown[]>;
  template: number | null;
  /** How the geometry was computed (inventory/inventory-geometry.ts); null before issue 30 §4. */
  computation: Json<Record<string, unknown> | null> | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface CamerasTable {
  id: Generated<number>;
  inspection_id: number;
  image_key: string;
  filename: string;
  latitude: number | null;
  longitude: number | null;
  elevation: number | null;
  width: number;
  height: number;
  quaternion: Json<[number, number, number, number] | null> | null;
  make: string | null;
  model: string | null;
  mission: Generated<string>;
  is_master: Generated<boolean>;
  is_reviewed: Generated<boolean>;
  is_visible: Generated<boolean>;
  /** The calibrated camera (intrinsics and pose in the output system), when reconstructed. */
  calibration: Json<CameraCalibration | null> | null;
  /** The camera's record in the cameras list, as JSON text; written by a trigger (inspections/camera-list-json.ts), never by the code. */
  list_json: Generated<string>;
}

export type AssetRow = Selectable<AssetsTable>;
export type InspectionRow = Selectable<InspectionsTable>;
/** A camera as the code reads it: every column but `list_json`, which only the cameras list reads. */
export type CameraRow = Omit<Selectable<CamerasTable>, 'list_json'>;
/** The columns of a CameraRow (select these, not selectAll: list_json is ~270 bytes per camera). */
export const CAMERA_COLUMNS = [
  'id',
  'inspection_id',
  'image_key',
  'filename',
  'latitude',
  'longitude',
  'elevation',
  'width',
  'height',
  'quaternion',
  'make',
  'model',
  'mission',
  'is_master',
  'is_reviewed',
  'is_visible',
  'calibration',
] as const satisfies readonly (keyof CameraRow)[];
export type AnnotationRow = Selectable<AnnotationsTable>;
export type MeasurementRow = Selectable<MeasurementsTable>;
export type InventoryItemRow = Selectable<InventoryItemsTable>;
