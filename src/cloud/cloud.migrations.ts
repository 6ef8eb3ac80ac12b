// Schema `cloud`: owned by the cloud project-processing service alone.
import { sql, type Kysely } from 'kysely';
import { serverSecretsTableDdl } from '../infra/secrets/server-secrets.ts';
import { webhookTablesDdl } from '../infra/webhooks/webhook-core.ts';
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
  // Issue 3: folders and moves, GCPs/MTPs/marks, cached image metadata, output coordinate
  // system, pipeline, map bounds, inputs bundle bookkeeping.
  '0002_full_cloud_service': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        create table cloud.folders (
          id serial primary key,
          uuid uuid not null unique,
          name text not null,
          organization_id integer not null references cloud.organizations(id),
          parent_id integer references cloud.folders(id) on delete cascade,
          created_at timestamptz not null default now()
        );
        create index folders_organization on cloud.folders (organization_id);
        create index project_groups_organization on cloud.project_groups (organization_id);
        alter table cloud.projects add column folder_id integer references cloud.folders(id) on delete set null;
        alter table cloud.projects add column geoid_model text;
        alter table cloud.projects add column geoid_height double precision;
        alter table cloud.projects add column output_crs jsonb;
        alter table cloud.projects add column pipeline text;
        alter table cloud.projects add column is_geolocalized boolean not null default false;
        alter table cloud.projects add column map_bounds jsonb;
        alter table cloud.project_inputs add column analysis jsonb;
        alter table cloud.project_outputs add column updated_at timestamptz not null default now();
        create table cloud.project_gcps (
          project_id integer not null references cloud.projects(id) on delete cascade,
          name text not null,
          point_type text not null,
          x double precision not null,
          y double precision not null,
          z double precision not null,
          xy_accuracy double precision not null,
          z_accuracy double precision not null,
          created_at timestamptz not null default now(),
          primary key (project_id, name)
        );
        create table cloud.project_mtps (
          project_id integer not null references cloud.projects(id) on delete cascade,
          name text not null,
          is_checkpoint boolean not null default false,
          created_at timestamptz not null default now(),
          primary key (project_id, name)
        );
        create table cloud.project_marks (
          project_id integer not null,
          point_name text not null,
          photo text not null,
          x double precision not null,
          y double precision not null,
          created_at timestamptz not null default now(),
          primary key (project_id, point_name, photo),
          foreign key (project_id, photo) references cloud.project_inputs(project_id, key) on delete cascade
        );
      `,
      );
    },
  },
  // Issue 12: the outputs a start_processing request asks for (its `outputs` extension), kept
  // for the engine run (null: the engine's defaults).
  '0004_engine_outputs': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `alter table cloud.projects add column requested_outputs jsonb`);
    },
  },
  // Issue 12: outputs grouped by result_type as the real API groups them (processing/result-types.ts;
  // rows written before said "file" or "bundle"), and each raster's map-layer description
  // (processing/map-layers.ts).
  '0005_output_result_types': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `alter table cloud.project_outputs add column raster jsonb`);
      // The grouping of result-types.ts when this migration was written (a migration never changes).
      const groups: [string, string][] = [
        ['ortho_rgb', 'ortho'],
        ['dsm', 'dsm'],
        ['dtm', 'dtm'],
        ['point_cloud', 'point_cloud'],
        ['point_cloud_ply', 'point_cloud'],
        ['point_cloud_bundle', 'point_cloud'],
        ['3d_mesh_obj_zip', '3d_mesh_obj'],
        ['calibrated_camera_parameters_json', 'calibrated_camera_parameters'],
        ['quality_report', 'quality_report'],
        ['quality_report_pdf', 'quality_report'],
        ['processing_log', 'mapper_log'],
        ['input_zip', 'input_zip'],
        ['project_thumb', 'project_thumb'],
      ];
      for (const [outputType, resultType] of groups) {
        await sql`update cloud.project_outputs set result_type = ${resultType} where output_type = ${outputType}`.execute(db);
      }
    },
  },
  // Issue 13: server secrets in the database, shared by every process (infra/secrets/server-secrets.ts).
  '0006_server_secrets': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, serverSecretsTableDdl('cloud'));
    },
  },
  // Issue 30: a service client (the inspection service's) may act for an organization it names in
  // its token request, so the projects and project groups it makes belong to that organization
  // (auth/oauth.service.ts). The inspection service's existing client, in its service organization,
  // becomes one. The projects it made before stay in the service organization: only the inspection
  // service knows whose they are, and it moves them through the API on its next start
  // (inspection/cloud-client/legacy-projects.ts, docs/cloud-service.md "Service clients").
  '0007_project_organizations': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        alter table cloud.clients add column acts_for_organizations boolean not null default false;
        update cloud.clients set acts_for_organizations = true
          where name = 'inspection-service'
            and organization_id in (select id from cloud.organizations where uuid = '00000000-0000-4000-8000-000000000001');
      `,
      );
    },
  },
  // Issue 30 §2: webhooks of an organization's projects (webhooks/cloud-webhooks.ts; tables as the
  // inspection service's: infra/webhooks/webhook-core.ts). client_id: the client that subscribed.
  '0008_cloud_webhooks': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        webhookTablesDdl(
          'cloud',
          `organization_id integer not null references cloud.organizations(id) on delete cascade,
          client_id integer references cloud.clients(id) on delete set null`,
        ),
      );
    },
  },
  // Issue 30 §2, §5: a client's notification address (processing and webhook e-mails:
  // notifications/cloud-mail.ts); set by the admin CLI, null: no e-mail.
  '0009_client_email': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `alter table cloud.clients add column email text`);
    },
  },
  // Issue 30 §5: extra files registered with a project (a processing template, a GCP file...:
  // projects/project-extras.ts) and the project's share link (projects/share-links.ts; one per
  // project, its token stored as a SHA-256 hash).
  '0010_project_extras_and_share_links': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        create table cloud.project_extras (
          project_id integer not null references cloud.projects(id) on delete cascade,
          key text not null,
          size bigint not null,
          created_at timestamptz not null default now(),
          primary key (project_id, key)
        );
        create table cloud.project_share_links (
          project_id integer primary key references cloud.projects(id) on delete cascade,
          token_hash text not null unique,
          client_id integer references cloud.clients(id) on delete set null,
          created_at timestamptz not null default now()
        );
      `,
      );
    },
  },
  // Issue 40 §3: the waiting events of a subscription, found by its bounded backlog and by the
  // delivery's "older event first" rule (infra/webhooks/webhook-core.ts) without reading every
  // message ever sent.
  '0012_webhook_pending_index': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `create index webhook_messages_pending on cloud.webhook_messages (webhook_id, id) where state = 'pending'`);
    },
  },
  // Issue 40 §7: the inspection service's own organization was made with a fixed uuid, so the
  // storage prefixes of its projects (uploads/org-<uuid>/project-<n>/) and their per-prefix role
  // names could be guessed; new installations make it random (admin/bootstrap.ts), this gives
  // existing ones a random one. Projects keep their stored s3_base_path (their objects stay where
  // they are). Only tokens carry an organization's uuid: one naming the old uuid answers 401 once
  // and the inspection service's cloud client asks for a new token (cloud-client.ts).
  '0013_random_service_organization_uuid': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `update cloud.organizations set uuid = gen_random_uuid() where uuid = '00000000-0000-4000-8000-000000000001'`);
    },
  },
};
