// The inputs bundle (cloud spec: `outputs.bundles.inputs`, "request the inputs ZIP through the
// bundle's request_url"; CONTRACT §3: POST requests it with 202, GET reads its state).
//
// States: `requestable` (never requested, or the inputs changed since) -> `in_progress` (a durable
// job streams a ZIP of the registered inputs, named by their key relative to the project's prefix
// and stored uncompressed, from object storage back into object storage) -> `done` (the bundle
// carries `url`, a presigned GET). Registering more inputs makes a built or building bundle
// requestable again. The bundle is the `input_zip` row of the project's outputs, so it is listed by
// GET …/outputs/ too. Inputs deleted from storage after registration are left out of the ZIP and
// named in the bundle's `note`.
import { PassThrough, type Readable } from 'node:stream';
import yazl from 'yazl';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { CloudTables, ProjectRow } from '../cloud.tables.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import { conflict, notFound } from '../../infra/http/errors.ts';
import type { CloudJobs } from '../cloud.jobs.ts';
import type { OutputRow, ProjectRepository } from '../projects/project.repository.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';
import { resultTypeOf } from '../processing/result-types.ts';

export const INPUT_ZIP = 'input_zip';

/** Hard limit of one build (the job's expiry); a bundle in progress for longer may be requested again. */
export const BUILD_EXPIRY_SECONDS = 6 * 3600;

export interface BundleState {
  status: 'requestable' | 'in_progress' | 'done';
  request_url: string;
  /** Presigned download URL once `done`; null before. */
  url: string | null;
  /** When `url` stops working. */
  url_expires_at: string | null;
  size: number | null;
  note: string | null;
}

export interface InputsBundleOptions {
  publicUrl: () => string;
  /** Lifetime of download URLs, seconds. */
  urlTtlSeconds: number;
}

export class InputsBundleService {
  constructor(
    private readonly projects: ProjectRepository,
    private readonly store: ObjectStore,
    private readonly jobs: JobQueue,
    private readonly logger: Logger,
    private readonly options: InputsBundleOptions,
  ) {}

  private get db(): Kysely<CloudTables> {
    return this.projects.db;
  }

  /** POST …/inputs/zip/: queues the ZIP unless it is already building or built. */
  async request(principal: CloudPrincipal, id: number): Promise<BundleState> {
    const row = await this.db.transaction().execute(async (trx) => {
      const project = await this.projects.find(id, principal.organizationId, trx, true);
      if (!project) throw notFound('Project');
      if (project.image_count === 0) throw conflict('No inputs are registered: there is nothing to bundle yet.');
      const existing = await this.bundleRow(project.id, trx);
      const stale = existing?.availability === 'in_progress' && Date.now() - existing.updated_at.getTime() > BUILD_EXPIRY_SECONDS * 1000;
      if (existing && !stale && (existing.availability === 'in_progress' || existing.availability === 'done')) return { project, bundle: existing };
      if (existing) await trx.deleteFrom('cloud.project_outputs').where('id', '=', existing.id).execute();
      const bundle = await trx
        .insertInto('cloud.project_outputs')
        .values({ project_id: project.id, output_type: INPUT_ZIP, result_type: resultTypeOf(INPUT_ZIP), availability: 'in_progress', s3_key: null, note: null })
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.jobs.send<CloudJobs, 'cloud.build-inputs-zip'>('cloud.build-inputs-zip', { projectId: project.id, outputId: bundle.id }, { trx });
      return { project, bundle };
    });
    return this.stateOf(row.project, row.bundle);
  }

  /** GET …/inputs/zip/. */
  async get(principal: CloudPrincipal, id: number): Promise<BundleState> {
    const project = await this.projects.find(id, principal.organizationId);
    if (!project) throw notFound('Project');
    return this.stateOf(project, await this.bundleRow(project.id));
  }

  /** The bundle's state as shown in project details and by GET …/inputs/zip/; `urlTtlSeconds` shortens its URL's life (a share-link holder's). */
  async stateOf(project: Pick<ProjectRow, 'id' | 'bucket_name'>, row: OutputRow | undefined, urlTtlSeconds = this.options.urlTtlSeconds): Promise<BundleState> {
    const requestUrl = `${this.options.publicUrl()}/project/api/v3/projects/${project.id}/inputs/zip/`;
    if (!row || (row.availability !== 'in_progress' && row.availability !== 'done')) {
      return { status: 'requestable', request_url: requestUrl, url: null, url_expires_at: null, size: null, note: null };
    }
    if (row.availability === 'in_progress' || !row.s3_key) {
      return { status: 'in_progress', request_url: requestUrl, url: null, url_expires_at: null, size: null, note: null };
    }
    const info = await this.store.headObject(project.bucket_name, row.s3_key);
    return {
      status: 'done',
      request_url: requestUrl,
      url: await this.store.presignGetUrl(project.bucket_name, row.s3_key, urlTtlSeconds),
      url_expires_at: new Date(Date.now() + urlTtlSeconds * 1000).toISOString(),
      size: info?.size ?? null,
      note: row.note,
    };
  }

  /** Registering inputs makes the bundle stale: forget it (its object goes too, best effort). */
  async invalidate(projectId: number, trx: Transaction<CloudTables>): Promise<string | null> {
    const removed = await trx
      .deleteFrom('cloud.project_outputs')
      .where('project_id', '=', projectId)
      .where('output_type', '=', INPUT_ZIP)
      .returning('s3_key')
      .executeTakeFirst();
    return removed?.s3_key ?? null;
  }

  /** Job `cloud.build-inputs-zip`. Idempotent: acts only while its bundle row is still in progress. */
  async build(projectId: number, outputId: number): Promise<void> {
    const project = await this.projects.findById(projectId);
    const row = await this.db.selectFrom('cloud.project_outputs').selectAll().where('id', '=', outputId).executeTakeFirst();
    if (!project || !row || row.availability !== 'in_progress') return;
    const prefix = `${project.s3_base_path}/`;
    const key = `results/${project.uuid}/bundles/inputs-${outputId}.zip`;
    const inputs = await this.projects.listInputs(projectId);
    const infos = await mapConcurrently(inputs, 16, (input) => this.store.headObject(project.bucket_name, input.key));
    const present: { name: string; key: string; size: number; mtime: Date }[] = [];
    const missing: string[] = [];
    inputs.forEach((input, i) => {
      const info = infos[i];
      if (info) present.push({ name: input.key.slice(prefix.length), key: input.key, size: info.size, mtime: info.lastModified });
      else missing.push(input.key.slice(prefix.length));
    });

    const zip = new yazl.ZipFile();
    const output = new PassThrough();
    zip.outputStream.pipe(output);
    zip.on('error', (err: Error) => output.destroy(err));
    for (const file of present) {
      zip.addReadStreamLazy(file.name, { compress: false, size: file.size, mtime: file.mtime }, (cb) => {
        this.store.getObject(project.bucket_name, file.key).then(
          ({ body }) => cb(null, body),
          (err: unknown) => cb(err, undefined as unknown as Readable),
        );
      });
    }
    zip.end();
    await this.store.putObject(project.bucket_name, key, output, { contentType: 'application/zip' });

    const note = missing.length > 0 ? `Left out, missing from storage: ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ` and ${missing.length - 20} more` : ''}.` : null;
    const updated = await this.db
      .updateTable('cloud.project_outputs')
      .set({ availability: 'done', s3_key: key, note, updated_at: new Date() })
      .where('id', '=', outputId)
      .where('availability', '=', 'in_progress')
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      // Invalidated while building: this ZIP is stale.
      await this.store.deleteObject(project.bucket_name, key);
      return;
    }
    this.logger.info({ projectId, files: present.length, missing: missing.length }, 'inputs bundle built');
  }

  private bundleRow(projectId: number, db: Kysely<CloudTables> | Transaction<CloudTables> = this.db): Promise<OutputRow | undefined> {
    return db.selectFrom('cloud.project_outputs').selectAll().where('project_id', '=', projectId).where('output_type', '=', INPUT_ZIP).executeTakeFirst();
  }
}
