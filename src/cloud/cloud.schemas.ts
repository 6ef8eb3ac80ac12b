// TypeBox schemas of the cloud API's requests and responses (they also make its OpenAPI document).
import { Type } from 'typebox';
import { StorageCredentialsSchema } from '../shared/schemas/storage-credentials.ts';

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) });

export const ErrorBody = Type.Object({ detail: Type.String(), code: Type.String() }, { additionalProperties: true });
export const FieldErrorsBody = Type.Record(Type.String(), Type.Unknown(), { description: 'Field name -> list of messages' });

export const TokenRequest = Type.Object({
  grant_type: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
  token_format: Type.Optional(Type.String()),
  token_type: Type.Optional(Type.String()),
});

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  scope: Type.String(),
});

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
const NullableString = Nullable(Type.String());

export const ProjectDetails = Type.Object({
  id: Type.Integer(),
  uuid: Type.String({ format: 'uuid' }),
  name: Type.String(),
  display_name: Type.String(),
  project_group_id: NullableInt,
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
  coordinate_system: Type.String(),
  min_zoom: Type.Integer(),
  max_zoom: Type.Integer(),
  proj_pipeline: Type.String(),
  tags: Type.Array(Type.String()),
  outputs: Type.Object({
    mesh: Type.Object({ texture_res: Type.Union([Type.Integer(), Type.Null()]) }),
    images: Type.Object({
      project_thumb: Type.Object({ status: Type.String(), name: Type.String(), s3_key: NullableString, s3_bucket: NullableString }),
      reflectance: Type.Array(Type.Unknown()),
    }),
    map: Type.Object({ layers: Type.Array(Type.Unknown()), bounds: Type.Union([Type.Object({ sw: Type.Array(Type.Number()), ne: Type.Array(Type.Number()) }), Type.Null()]) }),
    bundles: Type.Object({ inputs: Type.Object({ status: Type.String(), request_url: Type.String() }) }),
    reports: Type.Record(Type.String(), Type.Unknown()),
  }),
});

export const CreateProjectBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  coordinate_system: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  project_group_id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
});

export const StorageCredentials = StorageCredentialsSchema;

export const BulkRegisterBody = Type.Object({
  input_file_keys: Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), { minItems: 1, maxItems: 10000 }),
});
export const RegisterResult = Type.Object({ nb_images_registered: Type.Integer() });

export const StartProcessingBody = Type.Union([
  Type.Object({ tags: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()])) }),
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
