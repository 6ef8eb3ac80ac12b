// Schema `cloud`: owned by the cloud project-processing service alone.
import type { Kysely } from 'kysely';
import { runStatements, type MigrationSet } from '../infra/database/migrate.ts';

export const cloudMigrations: MigrationSet = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        create table cloud.organizations (
          id serial primary key,
          uuid uuid not null unique,
          name text not null,
          created_at timestamptz not null default now()
        );
        create table cloud.clients (
          id serial primary key,
          client_id text not null unique,
          secret_hash text not null,
          organization_id integer not null references cloud.organizations(id),
          name text not null,
          created_at timestamptz not null default now()
        );
        create table cloud.project_groups (
          id serial primary key,
          uuid uuid not null unique,
          name text not null,
          project_group_type text not null,
          organization_id integer not null references cloud.organizations(id),
          created_at timestamptz not null default now()
        );
        create table cloud.projects (
          id serial primary key,
          uuid uuid not null unique,
          name text not null,
          organization_id integer not null references cloud.organizations(id),
          project_group_id integer references cloud.project_groups(id) on delete set null,
          client_id integer references cloud.clients(id) on delete set null,
          user_agent text,
          coordinate_system text,
          public_status text not null default 'NEW',
          detailed_status text not null default '',
          progress integer not null default 0,
          error_code integer,
          error_reason text not null default '',
          tags jsonb not null default '[]',
          engine text,
          image_count integer not null default 0,
          bucket_name text not null,
          s3_base_path text not null,
          acquisition_date timestamptz,
          processing_started_at timestamptz,
          processing_ended_at timestamptz,
          created_at timestamptz not null default now(),
          deleted_at timestamptz
        );
        create index projects_organization on cloud.projects (organization_id) where deleted_at is null;
        create table cloud.project_inputs (
          project_id integer not null references cloud.projects(id) on delete cascade,
          key text not null,
          size bigint not null,
          created_at timestamptz not null default now(),
          primary key (project_id, key)
        );
        create table cloud.project_outputs (
          id serial primary key,
          project_id integer not null references cloud.projects(id) on delete cascade,
          output_type text not null,
          result_type text not null,
          availability text not null,
          s3_key text,
          note text,
          created_at timestamptz not null default now(),
          unique (project_id, output_type)
        );
      `,
      );
    },
  },
};
