// The storage credentials record: what the cloud service hands out for a project and the
// inspection service relays for an inspection (CONTRACT section 5).
import { Type, type Static } from 'typebox';

export const StorageCredentialsSchema = Type.Object({
  access_key: Type.String(),
  secret_key: Type.String(),
  session_token: Type.String(),
  expiration: Type.String({ format: 'date-time' }),
  bucket: Type.String(),
  key: Type.String({ description: 'The only prefix these credentials can write under' }),
  server_time: Type.String({ format: 'date-time' }),
  region: Type.String(),
  is_bucket_accelerated: Type.Boolean(),
  endpoint_override: Type.String({ description: 'Endpoint URL for S3 clients (e.g. aws --endpoint-url); empty on AWS S3' }),
});

export type StorageCredentialsRecord = Static<typeof StorageCredentialsSchema>;
