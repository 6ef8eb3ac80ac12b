// TypeBox schemas of the cloud API's requests and responses (they also make its OpenAPI document).
import { Type, type TSchema } from 'typebox';
import { StorageCredentialsSchema } from '../shared/schemas/storage-credentials.ts';
import { Id, IdParams, LIMITS, Num } from '../shared/schemas/limits.ts';

export { IdParams };

export const ErrorBody = Type.Object({ detail: Type.String(), code: Type.String() }, { additionalProperties: true });
export const FieldErrorsBody = Type.Record(Type.String(), Type.Unknown(), { description: 'Field name -> list of messages' });
/** The error answers of the project routes (401 without a token, 403 a read-only token's write, 404 another organization's, 409 a state that forbids it). */
export const ProjectRouteErrors = { 400: FieldErrorsBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

export const TokenRequest = Type.Object({
  grant_type: Type.Optional(Type.String({ maxLength: LIMITS.code })),
  client_id: Type.Optional(Type.String({ maxLength: LIMITS.name })),
  client_secret: Type.Optional(Type.String({ maxLength: LIMITS.key })),
  token_format: Type.Optional(Type.String({ maxLength: LIMITS.code })),
  token_type: Type.Optional(Type.String({ maxLength: LIMITS.code })),
  scope: Type.Optional(
    Type.String({
      maxLength: LIMITS.name,
      description:
        'Space-separated, among read:cloud write:cloud, also spelled cloud:read cloud:write (invalid_scope otherwise). read:cloud alone: a read-only token (GET and HEAD only; read-only storage credentials); otherwise both.',
    }),
  ),
  organization_uuid: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'Extension for service clients (the inspection service\'s): the organization the token acts for; its records are the ones the token sees. ' +
        'unauthorized_client from any other client.',
    }),
  ),
});

export const OAuthErrorBody = Type.Object(
  {
    error: Type.String({ description: 'RFC 6749 5.2: invalid_request, invalid_client, unsupported_grant_type or invalid_scope' }),
    error_description: Type.String(),
    detail: Type.Optional(Type.String()),
    code: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'RFC 6749 error; a malformed parameter also names its field as CONTRACT.md does ({"client_id": ["..."]}).' },
);

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  scope: Type.String({ description: 'What the token grants: "read:cloud write:cloud", or "read:cloud" for a read-only token.' }),
});

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
const NullableString = Nullable(Type.String());

export const OutputCoordinateSystem = Type.Object({
  name: Type.String(),
  source: Type.String({ description: 'requested, default (WGS 84 / UTM from the images) or arbitrary' }),
  type: Type.String({ description: 'projected or arbitrary' }),
  horizontal_epsg: NullableInt,
  vertical_epsg: NullableInt,
  vertical_name: NullableString,
  unit: Type.String(),
  axis_order: Type.Array(Type.String(), { description: 'Directions of x and y, e.g. ["east", "north"].' }),
  geoid_model: NullableString,
  geoid_height: Type.Union([Type.Number(), Type.Null()]),
});

export const BundleState = Type.Object({
  status: Type.String({ description: 'requestable, in_progress or done' }),
  request_url: Type.String({ description: 'POST requests the ZIP (202); GET reads this state.' }),
  url: NullableString,
  url_expires_at: NullableString,
  size: Type.Union([Type.Integer(), Type.Null()]),
  note: NullableString,
});

export const MapLayer = Type.Object(
  {
    name: Type.String({ description: 'The output type of the raster: ortho_rgb, dsm or dtm.' }),
    layer_type: Type.String({ description: 'Its result_type: ortho, dsm or dtm.' }),
    output_id: Type.Integer(),
    s3_key: Type.String(),
    s3_bucket: Type.String(),
    bounds: Type.Object({ sw: Type.Array(Type.Number()), ne: Type.Array(Type.Number()) }, { description: 'Extent of the raster in WGS 84: [latitude, longitude] of its corners.' }),
    min_zoom: Type.Integer({ description: 'Web Mercator zoom at which the whole raster fits in one 256-pixel tile.' }),
    max_zoom: Type.Integer({ description: 'First zoom whose tiles are as fine as the raster\'s pixels.' }),
    resolution_m: Type.Number({ description: 'Ground size of a pixel, metres.' }),
    width: Type.Integer(),
    height: Type.Integer(),
    epsg: Type.Integer({ description: 'EPSG code of the raster\'s own system.' }),
  },
  { description: 'A georeferenced raster produced by processing (docs/cloud-service.md, "Map layers").' },
);

export const ReportEntry = Type.Object({
  status: Type.String({ description: 'processed' }),
  name: Type.String(),
  format: Type.String({ description: 'json or pdf' }),
  output_id: Type.Integer(),
  s3_key: Type.String(),
  s3_bucket: Type.String(),
});

export const ProjectDetails = Type.Object({
  id: Type.Integer(),
  uuid: Type.String({ format: 'uuid' }),
  name: Type.String(),
  display_name: Type.String(),
  project_group_id: NullableInt,
  folder_uuid: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The folder holding the project, if any.' }),
  is_demo: Type.Boolean(),
  is_geolocalized: Type.Boolean(),
  never_delete: Type.Boolean(),
  under_trial: Type.Boolean(),
  create_date: Type.String({ format: 'date-time' }),
  acquisition_date: Type.String({ format: 'date-time' }),
  public_status: Type.String({ description: 'NEW, UPLOADING, WAITING, PROCESSING, DONE, ERROR or CANCELED' }),
  display_detailed_status: Type.String(),
  progress: Type.Integer({ minimum: 0, maximum: 100 }),
  error_reason: Type.String(),
  error_code: NullableInt,
  user_display_name: Type.String(),
  project_thumb: Type.String(),
  detail_url: Type.String(),
  project_type: Type.String(),
  image_count: Type.Integer(),
  last_datetime_processing_started: NullableString,
  last_datetime_processing_ended: NullableString,
  bucket_name: Type.String(),
  s3_bucket_region: Type.String(),
  s3_base_path: Type.String(),
  coordinate_system: Type.String({
    description: 'OGC WKT: the output system in use once processing has resolved it, before that the one requested at creation (empty when none).',
  }),
  output_coordinate_system: Type.Union([OutputCoordinateSystem, Type.Null()]),
  geoid_model: NullableString,
  geoid_height: Type.Union([Type.Number(), Type.Null()]),
  min_zoom: Type.Integer({ description: 'Lowest min_zoom of the map layers (0 without layers).' }),
  max_zoom: Type.Integer({ description: 'Highest max_zoom of the map layers (0 without layers).' }),
  proj_pipeline: Type.String({ description: 'PROJ definition of the horizontal output system (empty when arbitrary or not resolved yet).' }),
  tags: Type.Array(Type.String()),
  pipeline: Type.Union([Type.String(), Type.Null()], { description: 'Pipeline processing chose: nadir, oblique, building or mobile (null before processing).' }),
  engine: Type.Union([Type.String(), Type.Null()], { description: 'Engine chosen at start_processing: exif, colmap or nodeodm (null before).' }),
  outputs: Type.Object({
    mesh: Type.Object({ texture_res: Type.Union([Type.Integer(), Type.Null()]) }),
    images: Type.Object({
      project_thumb: Type.Object({ status: Type.String(), name: Type.String(), s3_key: NullableString, s3_bucket: NullableString }),
      reflectance: Type.Array(Type.Unknown()),
    }),
    map: Type.Object({
      layers: Type.Array(MapLayer),
      bounds: Type.Union([Type.Object({ sw: Type.Array(Type.Number()), ne: Type.Array(Type.Number()) }), Type.Null()], {
        description:
          'WGS 84 extent, [latitude, longitude] of the south-west and north-east corners: of the map layers when processing produced any, else of the geotagged images (null before processing or without positions).',
      }),
    }),
    bundles: Type.Object({ inputs: BundleState }),
    reports: Type.Record(Type.String(), ReportEntry, { description: 'The quality reports produced, by output type: quality_report (JSON), quality_report_pdf (nodeodm).' }),
  }),
});

export const CreateProjectBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  coordinate_system: Type.Optional(
    Type.Union([Type.String({ maxLength: 50000 }), Type.Null()], {
      description: 'Output system: OGC WKT (WKT1 or WKT2) of an EPSG-registered system. Default: WGS 84 / UTM of the images + EGM96 height.',
    }),
  ),
  geoid_model: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()], {
      description: 'Geoid model of the vertical output (e.g. EGM2008 or a PROJ grid name); needs a vertical component in coordinate_system.',
    }),
  ),
  geoid_height: Type.Optional(
    Type.Union([Num({ minimum: -200, maximum: 200 }), Type.Null()], {
      description: 'Constant geoid height above the ellipsoid, metres; needs a vertical component and excludes a geoid model.',
    }),
  ),
  project_group_id: Type.Optional(Type.Union([Id(), Type.Null()])),
});

export const LegacyMoveBody = Type.Object({
  project_group_id: Type.Union([Id(), Type.Null()], {
    description: 'Target project group, or null for the organization root.',
  }),
});

export const StorageCredentials = StorageCredentialsSchema;

export const BulkRegisterBody = Type.Object({
  input_file_keys: Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.key }), { minItems: 1, maxItems: 10000 }),
});
export const RegisterResult = Type.Object({ nb_images_registered: Type.Integer() });

export const StartProcessingBody = Type.Union([
  Type.Object({
    tags: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: LIMITS.code }), { maxItems: 100 }), Type.String({ maxLength: LIMITS.name })], {
        description: 'A list, or one comma-separated string.',
      }),
    ),
    engine: Type.Optional(Type.String({ maxLength: LIMITS.code, description: 'Extension: the engine to process with, one of those this deployment offers (default: its ENGINE).' })),
    custom_template_s3_key: Type.Optional(
      Type.String({
        maxLength: LIMITS.key,
        description:
          'A PIX4Dmapper processing template (.tmpl) uploaded under the project\'s prefix and registered with POST …/extras/. Each step\'s runStep is honoured (dense: point_cloud and mesh; ortho: dsm and ortho); ' +
          'initial/runStep false, index/runStep true and any other option are a 400 naming them (docs/cloud-service.md, "Processing templates"). Not with `outputs`.',
      }),
    ),
    custom_template_s3_bucket: Type.Optional(Type.String({ maxLength: LIMITS.name, description: "The template's bucket: the project's bucket_name (400 otherwise)." })),
    outputs: Type.Optional(
      Type.Object(
        {
          point_cloud: Type.Optional(Type.Unknown({ description: 'boolean' })),
          mesh: Type.Optional(Type.Unknown({ description: 'boolean' })),
          dsm: Type.Optional(Type.Unknown({ description: 'boolean' })),
          ortho: Type.Optional(Type.Unknown({ description: 'boolean' })),
        },
        {
          // Checked by the service (requested-outputs.ts), so that a wrong value is a 400 on `outputs`.
          additionalProperties: true,
          maxProperties: 8,
          description:
            'Extension (JSON bodies): booleans, the optional outputs asked for; a key left out: the engine\'s default; anything else: 400 on `outputs`. The nodeodm engine maps them onto ODM options ' +
            '(mesh false: skip-3dmodel; dsm: dsm; ortho false: skip-orthophoto); an output not asked for and not made is listed `not available` as not requested, ' +
            'one asked for that the engine cannot make (exif: all four; colmap: mesh, dsm, ortho) `not available` with the engine\'s reason.',
        },
      ),
    ),
  }),
  Type.Null(),
]);

export const OutputsResponse = Type.Object({
  outputs: Type.Array(
    Type.Object({
      output_id: Type.Integer(),
      result_type: Type.String(),
      output_type: Type.String(),
      availability: Type.String({ description: 'requestable, in_progress, done or not available' }),
      s3_key: NullableString,
      s3_bucket: NullableString,
      s3_region: NullableString,
      url: Type.Union([Type.String(), Type.Null()], { description: 'Presigned download URL of a done output.' }),
      note: NullableString,
    }),
  ),
});

export const CreateProjectGroupBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  project_group_type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export const ProjectGroup = Type.Object({
  id: Type.Integer(),
  uuid: Type.String({ format: 'uuid' }),
  name: Type.String(),
  project_group_type: Type.String(),
  organization_uuid: Type.String({ format: 'uuid' }),
  project_ids: Type.Array(Type.Integer()),
  created_at: Type.String({ format: 'date-time' }),
});

export const Folder = Type.Object({
  id: Type.Integer(),
  uuid: Type.String({ format: 'uuid' }),
  name: Type.String(),
  parent_uuid: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  organization_uuid: Type.String({ format: 'uuid' }),
  project_ids: Type.Array(Type.Integer()),
  created_at: Type.String({ format: 'date-time' }),
});

export const CreateFolderBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  parent_uuid: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
});

export const MoveBatchBody = Type.Object({
  owner_uuid: Type.String({ format: 'uuid', description: "The caller's organization." }),
  source_nodes: Type.Array(Type.Object({ type: Type.String({ maxLength: LIMITS.code, description: 'project' }), uuid: Type.String({ format: 'uuid' }) }), {
    minItems: 1,
    maxItems: 1000,
  }),
  target_type: Type.Union([Type.Literal('project_group'), Type.Literal('organization'), Type.Literal('folder')]),
  target_uuid: Type.String({ format: 'uuid' }),
});
export const MoveBatchResult = Type.Object({ moved: Type.Integer() });

const Finite = (description?: string) => Num({ minimum: -1e12, maximum: 1e12, ...(description ? { description } : {}) });

export const GcpRecord = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  point_type: Type.String({ description: 'GCP or CHECKPOINT (any case on input; upper case on output)' }),
  x: Finite('In the project coordinate system, first axis.'),
  y: Finite('In the project coordinate system, second axis.'),
  z: Finite(),
  xy_accuracy: Type.Number({ exclusiveMinimum: 0, maximum: 1e6 }),
  z_accuracy: Type.Number({ exclusiveMinimum: 0, maximum: 1e6 }),
});
export const GcpInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
  point_type: Type.Optional(Type.String({ maxLength: LIMITS.code, description: 'GCP (default) or CHECKPOINT, any case.' })),
  x: Finite(),
  y: Finite(),
  z: Finite(),
  xy_accuracy: Type.Optional(Num({ exclusiveMinimum: 0, maximum: 1e6, description: 'Metres; default 0.02.' })),
  z_accuracy: Type.Optional(Num({ exclusiveMinimum: 0, maximum: 1e6, description: 'Metres; default 0.02.' })),
});
export const GcpsBody = Type.Object({ gcps: Type.Array(GcpInput, { minItems: 1, maxItems: 10000 }) });
export const GcpsResult = Type.Object({ gcps: Type.Array(GcpRecord) });

export const MtpRecord = Type.Object({ name: Type.String(), is_checkpoint: Type.Boolean() });
export const MtpsBody = Type.Object({
  mtps: Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }), is_checkpoint: Type.Optional(Type.Boolean()) }), {
    minItems: 1,
    maxItems: 10000,
  }),
});
export const MtpsResult = Type.Object({ mtps: Type.Array(MtpRecord) });

export const MarkRecord = Type.Object({
  gcp: Type.String({ description: 'Name of a registered GCP or MTP.' }),
  photo: Type.String({ description: 'Storage key of a registered input image.' }),
  x: Type.Number({ description: 'Pixel column, 0 <= x < width.' }),
  y: Type.Number({ description: 'Pixel row, 0 <= y < height.' }),
});
/**
 * Marks one registration may carry; a project holds up to ten times as many, over several calls
 * (control-point.service.ts). The body of 10,000 parses and checks in a few tens of ms; one of
 * 100,000 held the event loop ~220 ms before the route ran (issue 40 §5).
 */
export const MAX_MARKS_PER_CALL = 10_000;
export const MarksBody = Type.Object({
  marks: Type.Array(
    Type.Object({
      gcp: Type.String({ minLength: 1, maxLength: 255 }),
      photo: Type.String({ minLength: 1, maxLength: LIMITS.key }),
      x: Finite(),
      y: Finite(),
    }),
    { minItems: 1, maxItems: MAX_MARKS_PER_CALL },
  ),
});
export const MarksResult = Type.Object({ marks: Type.Array(MarkRecord) });
export const ControlPointsResult = Type.Object({ gcps: Type.Array(GcpRecord), mtps: Type.Array(MtpRecord), marks: Type.Array(MarkRecord) });

export const PageEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({ count: Type.Integer(), next: NullableString, previous: NullableString, results: Type.Array(item) });
export const ListOf = <T extends TSchema>(item: T) => Type.Union([Type.Array(item), PageEnvelope(item)]);

export const ShareTokenQuery = Type.Object({
  shareToken: Type.Optional(
    Type.String({ maxLength: 256, description: "The project's share token (POST …/share_link/): reads the project without a bearer token (docs/cloud-service.md, \"Share links\")." }),
  ),
});
