// Kysely row types of schema `cloud` (see cloud.migrations.ts).
import type { ColumnType, Generated, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface CloudTables {
  'cloud.organizations': { id: Generated<number>; uuid: string; name: string; created_at: Generated<Date> };
  'cloud.clients': {
    id: Generated<number>;
    client_id: string;
    secret_hash: string;
    organization_id: number;
    name: string;
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
  'cloud.projects': ProjectsTable;
  'cloud.project_inputs': { project_id: number; key: string; size: number; created_at: Generated<Date> };
  'cloud.project_outputs': {
    id: Generated<number>;
    project_id: number;
    output_type: string;
    result_type: string;
    availability: string;
    s3_key: string | null;
    note: string | null;
    created_at: Generated<Date>;
  };
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
