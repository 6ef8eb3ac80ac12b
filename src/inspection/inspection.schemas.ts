// TypeBox schemas of the inspection API's requests and responses (they also make its OpenAPI document).
import { Type } from 'typebox';
import { StorageCredentialsSchema } from '../shared/schemas/storage-credentials.ts';
import { Id, IdParams, Int, LIMITS, Num } from '../shared/schemas/limits.ts';
import { InspectionDate } from './inspections/inspection-date.ts';
import { PageQuery } from './http/lists.ts';
import { Nullable } from './http/nullable.ts';
import { PROCESSING_BACKENDS } from './pipeline/output-options.ts';
import { Computation as InventoryComputation } from './inventory/inventory.schemas.ts';

export { IdParams };
export const ErrorBody = Type.Object({ detail: Type.String(), code: Type.String() }, { additionalProperties: true });
export const FieldErrorsBody = Type.Record(Type.String(), Type.Unknown(), { description: 'Field name -> list of messages' });
export const errorResponses = { 400: FieldErrorsBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 503: ErrorBody };
export const NoContent = Type.Null({ description: 'No body' });
/** 410 `purged`: the route served data that retention deleted (retention/purged.ts). */
export const purgedResponse = { 410: ErrorBody };

export const AuthHeaders = Type.Object({
  'x-api-key': Type.Optional(Type.String({ description: 'API key of the application (required)' })),
  'vendor-organization-uuid': Type.Optional(Type.String({ description: 'Organization to act for' })),
  'x-share-token': Type.Optional(Type.String({ description: 'Instead of Authorization and X-Api-Key: a read-only share token (POST /v1/inspections/{id}/share_tokens/); opens the GET routes of its inspection listed there, 403 elsewhere. Also `?share_token=`.' })),
});

export const TokenBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: LIMITS.name }),
  password: Type.String({ minLength: 1, maxLength: LIMITS.key }),
  scope: Type.Optional(
    Type.String({ maxLength: LIMITS.name, description: 'Space-separated: `cloud:read` alone makes a read-only token (GET only); `cloud:write` or no scope, both. Another value: 400.' }),
  ),
});
export const TokenResponse = Type.Object({ api_token: Type.String(), expires_in: Type.Integer(), scope: Type.String({ description: 'The scopes granted, space-separated.' }) });

export const Profile = Type.Object(
  {
    id: Type.Integer(),
    username: Type.String(),
    email: Type.String(),
    organization_uuid: Type.Union([Type.String(), Type.Null()], { description: 'The organization this request acts for (its vendor-organization-uuid header), or null' }),
    organizations: Type.Array(Type.Object({ uuid: Type.String(), name: Type.String() }), { description: 'Organizations the user is a member of and may act for' }),
  },
  { description: 'The user a token acts for. Not in the spec: the web console needs it to offer the organizations to act for at sign-in.' },
);

export const StatusRecord = Type.Object({ id: Type.Integer(), description: Type.String() });
export const AssetTypeRecord = Type.Object({ id: Type.Integer(), description: Type.String(), family: Type.String() });

export const AllowanceType = Type.Object({ id: Type.Integer(), code: Type.String(), name: Type.String() });
export const AllowanceBalance = Type.Object({ allowance_type: Type.String(), granted: Type.Integer(), consumed: Type.Integer(), balance: Type.Integer() });
export const AllowanceHistoryEntry = Type.Object({
  id: Type.Integer(),
  allowance_type: Type.String(),
  direction: Type.Union([Type.Literal('ingress'), Type.Literal('egress')]),
  amount: Type.Integer(),
  reason: Type.String(),
  inspection: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

const NullableString = Nullable(Type.String());
/** Descriptions and remarks of request bodies. */
const NullableText = Nullable(Type.String({ maxLength: LIMITS.text }));
/** Decimal degrees with at most 8 decimals, as a string or a number. */
const Coordinate = (max: number) =>
  Type.Union([Nullable(Type.String({ pattern: '^-?\\d{1,3}(\\.\\d{1,8})?$' })), Num({ minimum: -max, maximum: max, multipleOf: 1e-8 })]);

const assetFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: Int({ minimum: 1, maximum: 13, description: 'See GET /v1/assets/types/' }),
  latitude: Type.Optional(Coordinate(90)),
  longitude: Type.Optional(Coordinate(180)),
  description: Type.Optional(NullableText),
};

export const AssetBody = Type.Object(assetFields);
/** PUT: `name` required, every field overwritten (latitude, longitude, description cleared when absent). */
export const AssetPutBody = Type.Object({ ...assetFields, type: Type.Optional(assetFields.type) });
/** PATCH: any subset. */
export const AssetPatchBody = Type.Partial(Type.Object(assetFields));

export const Asset = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  type: Type.Integer(),
  latitude: NullableString,
  longitude: NullableString,
  user: Type.Integer(),
  organization_uuid: NullableString,
  description: NullableString,
  inspections: Type.Array(Type.Integer()),
  project_group_id: Type.Union([Type.Integer(), Type.Null()]),
  project_group_uuid: NullableString,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const ProcessingParameters = Type.Object(
  {
    is_video: Type.Optional(Type.Boolean({ description: 'true: register .mp4/.mov videos (each with its DJI .SRT telemetry) instead of photos; processing extracts their frames first (status 12; 14 when a video cannot be read)' })),
    generate_point_cloud: Type.Optional(Type.Boolean({ description: 'Sent to the cloud as start_processing `outputs.point_cloud` (absent: false)' })),
    clip_point_cloud: Type.Optional(Type.Boolean()),
    clipping_radius: Type.Optional(Int({ minimum: 1, description: 'Metres, horizontally around the asset position' })),
    generate_mesh: Type.Optional(Type.Boolean({ description: 'Sent to the cloud as start_processing `outputs.mesh` (absent: false); an engine that cannot make it lists it `not available` with the reason' })),
    generate_dsm: Type.Optional(Type.Boolean({ description: 'Sent as `outputs.dsm` (absent: false)' })),
    generate_ortho: Type.Optional(Type.Boolean({ description: 'Sent as `outputs.ortho` (absent: false)' })),
    detect_antennas: Type.Optional(
      Type.Boolean({
        description:
          'true: once processed, the dense point cloud is searched for the tower and its equipment, each found item written to the inventory (`additional_statuses.inventory` 1 → 2 → 3, or 7–10 with `inventory_reason`). Needs a Tower inventory unit in the account (403 insufficient_allowance), spent once when processing starts; asks the cloud for the point cloud as generate_point_cloud does',
      }),
    ),
    detect_rust: Type.Optional(Type.Boolean()),
    roof_segmentation: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const point3Description = 'x, y, z in the output coordinate system of the inspection (extras), metres';
const Point3 = Type.Union([Type.Object({ x: Type.Number(), y: Type.Number(), z: Type.Number() }), Type.Null()], { description: point3Description });
/** Point3 of request bodies: finite numbers. */
const Point3Input = Type.Union([Type.Object({ x: Num(), y: Num(), z: Num() }), Type.Null()], { description: point3Description });
const ReportStatus = Type.Union([Type.Literal('not available'), Type.Literal('processing'), Type.Literal('available'), Type.Literal('error')]);

export const CreateInspectionBody = Type.Object({
  asset: Type.Optional(Type.Union([Id(), AssetBody])),
  new_asset: Type.Optional(Type.Boolean()),
  processing_parameters: Type.Optional(ProcessingParameters),
  inspection_date: Type.Optional(InspectionDate),
  description: Type.Optional(NullableText),
  name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  processing_backend: Type.Optional(Type.Union(PROCESSING_BACKENDS.map((b) => Type.Literal(b)))),
  app_source: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
});

export const Inspection = Type.Object({
  id: Type.Integer(),
  project_id: Type.Union([Type.Integer(), Type.Null()]),
  project_uuid: NullableString,
  app_source: Type.String(),
  can_retry: Type.Boolean(),
  retry_of: Type.Union([Type.Integer(), Type.Null()]),
  retries: Type.Array(Type.Object({ id: Type.Integer(), status: Type.Integer(), created_at: Type.String() })),
  asset: Type.Integer(),
  user: Type.Integer(),
  status: Type.Integer(),
  additional_statuses: Type.Object({
    inventory: Type.Union([Type.Integer(), Type.Null()]),
    rust: Type.Union([Type.Integer(), Type.Null()]),
    inventory_reason: Type.Optional(Type.String({ description: 'The words beside the inventory status: why the antenna detection failed (7), found no tower (8), found the cloud too thin (10) or borderline (9, a warning), or found no equipment (3).' })),
    rust_reason: Type.Optional(Type.String({ description: 'Why the rust status is 14 (error), or which photos a completed rust analysis (13) skipped and why.' })),
  }),
  pcs_task_uuid: NullableString,
  inspection_date: NullableString,
  description: NullableString,
  name: NullableString,
  is_main: Type.Boolean(),
  base_plate_location: Point3,
  top_point_location: Point3,
  base_plate_size: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
  ground_reference_altitude: Type.String(),
  processing_parameters: ProcessingParameters,
  processing_backend: Type.String(),
  report_status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

/** PUT and PATCH of an inspection: every field optional (the spec's update body has no required field). */
export const UpdateInspectionBody = Type.Object({
  status: Type.Optional(Int({ description: 'Any status of GET /v1/inspections/statuses/ (or a reserved one)' })),
  additional_statuses: Type.Optional(
    Type.Object(
      {
        inventory: Type.Optional(Nullable(Int({ minimum: 1, maximum: 10 }))),
        rust: Type.Optional(Nullable(Int({ minimum: 11, maximum: 14 }))),
      },
      { additionalProperties: false, description: 'Merged into the current value' },
    ),
  ),
  pcs_task_uuid: Type.Optional(Nullable(Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }))),
  inspection_date: Type.Optional(InspectionDate),
  description: Type.Optional(NullableText),
  name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  base_plate_location: Type.Optional(Point3Input),
  top_point_location: Type.Optional(Point3Input),
  base_plate_size: Type.Optional(Nullable(Num({ minimum: 0 }))),
  report_status: Type.Optional(ReportStatus),
  processing_parameters: Type.Optional(ProcessingParameters),
});

export const SkipEmailQuery = Type.Object({ skip_email: Type.Optional(Type.Boolean({ description: 'true: no e-mail for this status change' })) });

export const RetryBody = Type.Object({
  inspection: Id({ description: 'The inspection to retry' }),
  processing_parameters: Type.Optional(ProcessingParameters),
  description: Type.Optional(NullableText),
});

export const Extras = Type.Object({ coordinate_system: Type.String(), offset_3d_xyz: Type.Array(Type.Number()) });
export const Output = Type.Object({ output_type: Type.String(), url: Type.String() });
export const InputsReady = Type.Object({ url: Type.String() });
export const InputsPending = Type.Object({ detail: Type.String() });
export const EmptyObject = Type.Object({});

export const InventoryItem = Type.Object({
  id: Type.Integer(),
  number: Type.Integer(),
  name: Type.String(),
  model_name: Type.String(),
  weight: Type.String(),
  urls: Type.Record(Type.String(), Type.Unknown()),
  photo_id: Type.Union([Type.Integer(), Type.Null()]),
  point_of_view: Type.Array(Type.Unknown()),
  coords_2d: Type.Record(Type.String(), Type.Unknown()),
  photo_projection: Type.Record(Type.String(), Type.Unknown()),
  coords_3d: Type.Array(Type.Unknown()),
  public: Type.Boolean(),
  visible: Type.Boolean(),
  device_status: Type.String(),
  source: Type.String(),
  model_type: Type.String({ description: 'panel_antenna, microwave_antenna, ancillary_box, collinear_antenna, yagi_antenna or mount' }),
  offset_xyz: Type.Record(Type.String(), Type.Unknown()),
  plumb: Type.Union([Type.Number(), Type.Null()]),
  azimuth: Type.Union([Type.Number(), Type.Null()]),
  downtilt: Type.Union([Type.Number(), Type.Null()]),
  height: Type.Union([Type.Number(), Type.Null()]),
  width: Type.Union([Type.Number(), Type.Null()]),
  depth: Type.Union([Type.Number(), Type.Null()]),
  custom_fields: Type.Array(Type.Unknown()),
  template: Type.Union([Type.Integer(), Type.Null()]),
  inspection: Type.Integer(),
  computation: InventoryComputation,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const StorageCredentials = StorageCredentialsSchema;

export const RegisterImagesBody = Type.Object({
  // The 500 limit is checked in the service so the message names it; the schema caps abuse.
  image_keys: Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.key }), { minItems: 1, maxItems: 100000 }),
});
export const RegisterResult = Type.Object({ nb_images_registered: Type.Integer() });

export const Camera = Type.Object({
  id: Type.Integer(),
  photo_id: Type.Integer(),
  filename: Type.String(),
  location: Type.Object({
    latitude: Type.Union([Type.Number(), Type.Null()]),
    longitude: Type.Union([Type.Number(), Type.Null()]),
    elevation: Type.Union([Type.Number(), Type.Null()]),
  }),
  mission: Type.String(),
  dimensions: Type.Object({ x: Type.Integer(), y: Type.Integer() }),
  quaternions: Type.Array(Type.Number(), { minItems: 4, maxItems: 4 }),
  is_master: Type.Boolean(),
  is_reviewed: Type.Boolean(),
  is_visible: Type.Boolean(),
});

export const SearchQuery = Type.Object({ ...PageQuery.properties, search: Type.Optional(Type.String({ maxLength: 255, description: 'Part of the name' })) });
export { PageQuery };
