// Schema `inspection`: owned by the inspection service alone.
// Past 350 lines: the append-only list of the schema's migrations, in order.
import { sql, type Kysely } from 'kysely';
import { cameraListJsonDdl } from './inspections/camera-list-json.ts';
import { serverSecretsTableDdl } from '../infra/secrets/server-secrets.ts';
import { runStatements, type MigrationSet } from '../infra/database/migrate.ts';

export const inspectionMigrations: MigrationSet = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        create table inspection.organizations (
          id serial primary key,
          uuid uuid not null unique,
          name text not null,
          created_at timestamptz not null default now()
        );
        create table inspection.users (
          id serial primary key,
          username text not null unique,
          email text not null,
          password_hash text not null,
          created_at timestamptz not null default now()
        );
        create table inspection.memberships (
          user_id integer not null references inspection.users(id) on delete cascade,
          organization_id integer not null references inspection.organizations(id) on delete cascade,
          primary key (user_id, organization_id)
        );
        create table inspection.api_keys (
          id serial primary key,
          name text not null,
          key_hash text not null unique,
          created_at timestamptz not null default now(),
          revoked_at timestamptz
        );
        create table inspection.allowance_types (
          id integer primary key,
          code text not null unique,
          name text not null
        );
        insert into inspection.allowance_types (id, code, name) values (1, 'projects', 'Projects'), (2, 'tower_inventory', 'Tower inventory');
        create table inspection.assets (
          id serial primary key,
          name text not null,
          type integer not null,
          latitude numeric(11, 8),
          longitude numeric(11, 8),
          description text,
          user_id integer not null references inspection.users(id),
          organization_id integer references inspection.organizations(id),
          project_group_id integer,
          project_group_uuid uuid,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now(),
          deleted_at timestamptz
        );
        create index assets_owner on inspection.assets (user_id, organization_id) where deleted_at is null;
        create table inspection.inspections (
          id serial primary key,
          asset_id integer not null references inspection.assets(id),
          user_id integer not null references inspection.users(id),
          organization_id integer references inspection.organizations(id),
          project_id integer,
          project_uuid uuid,
          storage_prefix text,
          status integer not null default 1,
          additional_statuses jsonb not null default '{"inventory": null, "rust": null}',
          report_status text not null default 'not available',
          app_source text not null default 'api',
          retry_of integer references inspection.inspections(id),
          pcs_task_uuid uuid,
          inspection_date timestamptz,
          description text,
          name text,
          base_plate_location jsonb,
          top_point_location jsonb,
          base_plate_size numeric,
          ground_reference_altitude numeric not null default 0,
          processing_parameters jsonb not null,
          processing_backend text not null default 'mapper',
          processing_started_at timestamptz,
          processing_ended_at timestamptz,
          images_valid integer,
          images_invalid integer,
          processing_error text,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now(),
          deleted_at timestamptz
        );
        create index inspections_owner on inspection.inspections (user_id, organization_id) where deleted_at is null;
        create index inspections_asset on inspection.inspections (asset_id) where deleted_at is null;
        create table inspection.inspection_images (
          inspection_id integer not null references inspection.inspections(id) on delete cascade,
          key text not null,
          registered_at timestamptz not null default now(),
          primary key (inspection_id, key)
        );
        create table inspection.cameras (
          id serial primary key,
          inspection_id integer not null references inspection.inspections(id) on delete cascade,
          image_key text not null,
          filename text not null,
          latitude double precision,
          longitude double precision,
          elevation double precision,
          width integer not null,
          height integer not null,
          quaternion jsonb,
          make text,
          model text,
          mission text not null default '',
          is_master boolean not null default false,
          is_reviewed boolean not null default false,
          is_visible boolean not null default true,
          unique (inspection_id, image_key)
        );
        create table inspection.allowance_transactions (
          id serial primary key,
          organization_id integer references inspection.organizations(id),
          user_id integer references inspection.users(id),
          allowance_type_id integer not null references inspection.allowance_types(id),
          direction text not null check (direction in ('ingress', 'egress')),
          amount integer not null check (amount > 0),
          reason text not null,
          inspection_id integer references inspection.inspections(id) on delete set null,
          created_at timestamptz not null default now(),
          check ((organization_id is null) <> (user_id is null))
        );
        create index allowance_account on inspection.allowance_transactions (organization_id, user_id, allowance_type_id);
        create unique index allowance_charged_once on inspection.allowance_transactions (inspection_id, allowance_type_id) where direction = 'egress'
      `,
      );
    },
  },
  // Issue 4: annotations, measurements, inventory items, inputs ZIP and report state, retries.
  '0002_annotations_measurements_reports': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        alter table inspection.inspections add column annotation_seq integer not null default 0;
        alter table inspection.inspections add column inputs_zip_status text not null default 'none';
        alter table inspection.inspections add column inputs_zip_key text;
        alter table inspection.inspections add column inputs_zip_requested_at timestamptz;
        alter table inspection.inspections add column report_options jsonb;
        alter table inspection.inspections add column report_pdf_key text;
        alter table inspection.inspections add column report_json_key text;
        alter table inspection.inspections add column report_requested_at timestamptz;
        alter table inspection.inspections add column report_error text;
        create index inspections_retry_of on inspection.inspections (retry_of) where deleted_at is null;
        create table inspection.annotations (
          id serial primary key,
          inspection_id integer not null references inspection.inspections(id) on delete cascade,
          user_id integer not null references inspection.users(id),
          number integer not null,
          type text not null,
          name text,
          data jsonb not null,
          severity_level integer not null default 0 check (severity_level between 0 and 5),
          description text,
          photo_id integer not null,
          coords_3d jsonb,
          public boolean not null default false,
          is_visible boolean not null default true,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now(),
          unique (inspection_id, number)
        );
        create index annotations_user_type on inspection.annotations (user_id, type);
        create table inspection.measurements (
          id uuid primary key,
          seq serial not null,
          inspection_id integer not null references inspection.inspections(id) on delete cascade,
          user_id integer not null references inspection.users(id),
          properties jsonb not null,
          tags jsonb not null,
          geometry jsonb not null,
          extension jsonb not null default '{}',
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create index measurements_inspection on inspection.measurements (inspection_id, seq);
        create table inspection.inventory_items (
          id serial primary key,
          inspection_id integer not null references inspection.inspections(id) on delete cascade,
          number integer not null,
          name text not null default '',
          model_name text not null default '',
          weight text not null default '',
          urls jsonb not null default '{}',
          photo_id integer,
          point_of_view jsonb not null default '[]',
          coords_2d jsonb not null default '{}',
          photo_projection jsonb not null default '{}',
          coords_3d jsonb not null default '[]',
          public boolean not null default false,
          visible boolean not null default true,
          device_status text not null default '',
          source text not null default '',
          model_type text not null,
          offset_xyz jsonb not null default '{}',
          plumb double precision,
          azimuth double precision,
          downtilt double precision,
          height double precision,
          width double precision,
          depth double precision,
          custom_fields jsonb not null default '[]',
          template integer,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create index inventory_items_inspection on inspection.inventory_items (inspection_id)
      `,
      );
    },
  },
  // Issue 5: what photogrammetry reconstructed (reconstruction.ts), per inspection and per camera.
  '0003_reconstruction': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        alter table inspection.inspections add column reconstruction jsonb;
        alter table inspection.cameras add column calibration jsonb
      `,
      );
    },
  },
  // Issue 12: read-only share tokens of an inspection (auth/share-tokens.ts). The token itself is
  // never stored: its selector (a lookup key, not secret) and the SHA-256 of the whole token.
  '0004_share_tokens': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        create table inspection.share_tokens (
          id serial primary key,
          inspection_id integer not null references inspection.inspections(id) on delete cascade,
          selector text not null unique,
          token_hash text not null,
          label text not null default '',
          created_by integer not null references inspection.users(id),
          created_at timestamptz not null default now(),
          revoked_at timestamptz
        );
        create index share_tokens_inspection on inspection.share_tokens (inspection_id)
      `,
      );
    },
  },
  // Issue 12: frames taken from an is_video inspection's videos are its images too (video/).
  '0005_video_input': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `alter table inspection.inspection_images add column source text not null default 'upload' check (source in ('upload', 'video_frame'))`);
    },
  },
  // Issue 13: server secrets in the database, shared by every process (infra/secrets/server-secrets.ts).
  '0006_server_secrets': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, serverSecretsTableDdl('inspection'));
    },
  },
  // Issue 14: the cameras list is read in keyset pages by id (inspections/camera-list.ts).
  '0007_cameras_by_inspection_id': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `create index cameras_inspection_id_id on inspection.cameras (inspection_id, id)`);
    },
  },
  // Issue 14: each camera keeps its record of the cameras list as JSON text, written by a trigger
  // on every insert and update, so that the list is the database's concatenation of stored texts
  // (inspections/camera-list.ts, camera-list-json.ts).
  '0008_camera_list_json': {
    async up(db: Kysely<unknown>) {
      // The function bodies contain semicolons: one statement each, not split by runStatements.
      for (const statement of cameraListJsonDdl) await sql.raw(statement).execute(db);
      await runStatements(
        db,
        `
        alter table inspection.cameras add column list_json text;
        create trigger cameras_list_json before insert or update on inspection.cameras for each row execute function inspection.camera_list_json();
        update inspection.cameras set list_json = null;
        alter table inspection.cameras alter column list_json set not null
      `,
      ); // the update makes the trigger write every existing row's text
    },
  },
  // Issue 14: a main inspection says whether it ever had a retry, so that reading one without any
  // skips the search for its retries (inspections/inspection-records.ts).
  '0009_inspection_has_retries': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        alter table inspection.inspections add column has_retries boolean not null default false;
        update inspection.inspections as m set has_retries = true where exists (select 1 from inspection.inspections as r where r.retry_of = m.id)
      `,
      );
    },
  },
  // Issue 27: a share token ends (auth/share-tokens.ts): tokens made before get 30 days from their
  // making (SHARE_TOKEN_TTL_SECONDS' default); SHARE_TOKEN_MAX_TTL_SECONDS caps them all at use.
  '0010_share_token_expiry': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        alter table inspection.share_tokens add column expires_at timestamptz;
        update inspection.share_tokens set expires_at = created_at + interval '30 days';
        alter table inspection.share_tokens alter column expires_at set not null
      `,
      );
    },
  },
  // Issue 27: an API key may belong to an organization (admin create-api-key --org): with it and
  // the right password, a member logs in however others' failures throttle the account
  // (infra/http/login-throttle.ts). Keys of no organization (the web console's) stay as they were.
  '0011_api_key_organization': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `alter table inspection.api_keys add column organization_id integer references inspection.organizations(id) on delete cascade`);
    },
  },
  // Issue 27: the size of each uploaded file, read when it is registered: an account's storage
  // quota counts its registered uploads (limits/storage-quota.ts). Files registered before count 0.
  '0012_image_sizes': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `alter table inspection.inspection_images add column size bigint`);
    },
  },
  // Issue 30 §2: webhooks (webhooks/): an account's subscriptions (secret sealed with a server
  // key: infra/webhooks/signing.ts), one message per event and subscription, one row per delivery
  // attempt (the delivery log).
  '0013_webhooks': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        create table inspection.webhooks (
          id serial primary key,
          organization_id integer references inspection.organizations(id) on delete cascade,
          user_id integer not null references inspection.users(id) on delete cascade,
          url text not null,
          events jsonb not null,
          secret_sealed text not null,
          created_at timestamptz not null default now(),
          failed_events integer not null default 0,
          disabled_at timestamptz,
          disabled_reason text
        );
        create index webhooks_organization on inspection.webhooks (organization_id);
        create table inspection.webhook_messages (
          id bigserial primary key,
          uid text not null unique,
          webhook_id integer not null references inspection.webhooks(id) on delete cascade,
          event text not null,
          body text not null,
          created_at timestamptz not null default now(),
          state text not null default 'pending',
          attempts integer not null default 0
        );
        create table inspection.webhook_attempts (
          id bigserial primary key,
          message_id bigint not null references inspection.webhook_messages(id) on delete cascade,
          webhook_id integer not null references inspection.webhooks(id) on delete cascade,
          attempt integer not null,
          at timestamptz not null default now(),
          status_code integer,
          error text
        );
        create index webhook_attempts_webhook on inspection.webhook_attempts (webhook_id, id)
      `,
      );
    },
  },
  // Issue 30 §3: retention (retention/retention.service.ts). An organization's own period in days
  // (null: RETENTION_DAYS), and when an inspection's data was given up for purging (by the daily
  // sweep or a client's status 24): from then on the routes serving it answer 410.
  '0014_retention': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        alter table inspection.organizations add column retention_days integer check (retention_days >= 0);
        alter table inspection.inspections add column purged_at timestamptz;
        create index inspections_retention on inspection.inspections (created_at) where deleted_at is null and purged_at is null
      `,
      );
    },
  },
  // Issue 30 §4: inventory items entered by hand (inventory/inventory.service.ts): how an item's
  // position and orientation were computed from its marks (inventory-geometry.ts); null for items
  // stored before.
  '0015_inventory_by_hand': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `alter table inspection.inventory_items add column computation jsonb`);
    },
  },
  // Issue 40 §1: removing a member (auth/membership-removal.ts). A member's role in their
  // organization (an `admin` removes members over the API), and the storage credentials handed to
  // each user, so that those of a removed member are refused by the embedded store at once.
  '0016_member_removal': {
    async up(db: Kysely<unknown>) {
      await runStatements(
        db,
        `
        alter table inspection.memberships add column role text not null default 'member' check (role in ('member', 'admin'));
        create table inspection.storage_credential_grants (
          access_key text primary key,
          user_id integer not null references inspection.users(id) on delete cascade,
          organization_id integer references inspection.organizations(id) on delete cascade,
          inspection_id integer not null,
          expires_at timestamptz not null,
          revoked_at timestamptz
        );
        create index storage_credential_grants_member on inspection.storage_credential_grants (organization_id, user_id);
        create index storage_credential_grants_expiry on inspection.storage_credential_grants (expires_at)
      `,
      );
    },
  },
  // Issue 40 §3: the waiting events of a subscription, found by its bounded backlog and by the
  // delivery's "older event first" rule (infra/webhooks/webhook-core.ts) without reading every
  // message ever sent.
  '0018_webhook_pending_index': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `create index webhook_messages_pending on inspection.webhook_messages (webhook_id, id) where state = 'pending'`);
    },
  },
};
