// Extra files of a project (issue 30 §5): files a client uploaded with the project's storage
// credentials that are not images (a processing template, a GCP file...), registered with
// POST …/extras/ as the real API's clients do ({"file_key": key}), with the same key checks as
// images (uploaded-keys.ts), and listed by GET …/extras/. A processing template given to
// start_processing must be one of them (templateOutputsOf, below).
import type { Kysely } from 'kysely';
import type { CloudTables, ProjectRow } from '../cloud.tables.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import { StorageError, type ObjectStore } from '../../infra/storage/object-store.ts';
import { notFound, ValidationError } from '../../infra/http/errors.ts';
import type { ProjectRepository } from './project.repository.ts';
import { requireNotStarted } from './project-state.ts';
import { checkUploadedKeys } from './uploaded-keys.ts';
import { TEMPLATE_MAX_BYTES, TemplateError, templateOutputs } from '../processing/processing-template.ts';
import type { RequestedOutputs } from '../processing/requested-outputs.ts';

/** Extras a project may hold: they are a handful of small files, not a second set of inputs. */
export const MAX_EXTRAS_PER_PROJECT = 100;

export interface RegisterExtrasBody {
  file_key?: string;
  file_keys?: string[];
}

export interface ExtrasList {
  extras: { file_key: string; size: number; created_at: string }[];
}

export class ProjectExtrasService {
  private readonly db: Kysely<CloudTables>;

  constructor(
    private readonly projects: ProjectRepository,
    private readonly store: ObjectStore,
  ) {
    this.db = projects.db;
  }

  /** Registers the keys (all or nothing) before processing starts; 201 with every extra of the project. */
  async register(principal: CloudPrincipal, id: number, body: RegisterExtrasBody): Promise<ExtrasList> {
    const field = body.file_keys !== undefined ? 'file_keys' : 'file_key';
    const keys = [...(body.file_key !== undefined ? [body.file_key] : []), ...(body.file_keys ?? [])];
    if (keys.length === 0) throw ValidationError.field('file_key', 'Give the key of an uploaded file (file_key), or a list of keys (file_keys).');
    const project = await this.requireProject(principal.organizationId, id);
    requireNotStarted(project, 'Extras');
    const files = await checkUploadedKeys(this.store, project, keys, field);
    await this.db.transaction().execute(async (trx) => {
      const locked = await this.projects.find(project.id, principal.organizationId, trx, true);
      if (!locked) throw notFound('Project');
      requireNotStarted(locked, 'Extras');
      const registered = await trx.selectFrom('cloud.project_extras').select('key').where('project_id', '=', project.id).execute();
      const known = new Set(registered.map((r) => r.key));
      const total = known.size + files.filter((f) => !known.has(f.key)).length;
      if (total > MAX_EXTRAS_PER_PROJECT) {
        throw ValidationError.field(field, `A project holds at most ${MAX_EXTRAS_PER_PROJECT} extra files; ${known.size} are registered and this would make ${total}.`);
      }
      await trx
        .insertInto('cloud.project_extras')
        .values(files.map((f) => ({ project_id: project.id, key: f.key, size: f.size })))
        // Registered again after a new upload under the same key: its size now.
        .onConflict((oc) => oc.columns(['project_id', 'key']).doUpdateSet((eb) => ({ size: eb.ref('excluded.size') })))
        .execute();
    });
    return this.listOf(project.id);
  }

  async list(organizationId: number, id: number): Promise<ExtrasList> {
    const project = await this.requireProject(organizationId, id);
    return this.listOf(project.id);
  }

  /**
   * The outputs asked for by the processing template `key` (start_processing's
   * custom_template_s3_key): a registered extra of the project, in its bucket, present and small
   * enough, that templateOutputs can honour. A 400 naming the field and the reason otherwise.
   */
  async templateOutputsOf(project: ProjectRow, key: unknown, bucket: unknown): Promise<RequestedOutputs> {
    const fail = (message: string, field = 'custom_template_s3_key') => ValidationError.field(field, message);
    if (bucket !== undefined && bucket !== '' && bucket !== project.bucket_name) {
      throw fail(`The project's files are in bucket "${project.bucket_name}", not "${String(bucket)}".`, 'custom_template_s3_bucket');
    }
    if (typeof key !== 'string' || key === '') throw fail('The key of the processing template, registered with POST …/extras/, is required with custom_template_s3_bucket.');
    const extra = await this.db.selectFrom('cloud.project_extras').select('key').where('project_id', '=', project.id).where('key', '=', key).executeTakeFirst();
    if (!extra) throw fail(`"${key}" is not a registered extra file of the project: upload it, then register it with POST /project/api/v3/projects/${project.id}/extras/.`);
    const gone = () => fail(`"${key}" is registered but no longer in storage.`);
    const head = await this.store.headObject(project.bucket_name, key);
    if (!head) throw gone();
    if (head.size > TEMPLATE_MAX_BYTES) throw fail(`The template is ${head.size} bytes; at most ${TEMPLATE_MAX_BYTES} are read.`);
    const data = await readSmallObject(this.store, project.bucket_name, key).catch((err: unknown) => {
      throw err instanceof StorageError && err.code === 'NoSuchKey' ? gone() : err;
    });
    const text = data.toString('utf8');
    try {
      return templateOutputs(text);
    } catch (err) {
      if (err instanceof TemplateError) throw fail(`The template "${key}" cannot be applied: ${err.message}.`);
      throw err;
    }
  }

  private async listOf(projectId: number): Promise<ExtrasList> {
    const rows = await this.db.selectFrom('cloud.project_extras').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('key').execute();
    return { extras: rows.map((r) => ({ file_key: r.key, size: Number(r.size), created_at: new Date(r.created_at).toISOString() })) };
  }

  private async requireProject(organizationId: number, id: number): Promise<ProjectRow> {
    const project = await this.projects.find(id, organizationId);
    if (!project) throw notFound('Project');
    return project;
  }
}

/** An object checked to be at most TEMPLATE_MAX_BYTES, read whole (never more than that, were it replaced meanwhile). */
async function readSmallObject(store: ObjectStore, bucket: string, key: string): Promise<Buffer> {
  const { body } = await store.getObject(bucket, key);
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (length > TEMPLATE_MAX_BYTES) throw ValidationError.field('custom_template_s3_key', `The template is larger than ${TEMPLATE_MAX_BYTES} bytes.`);
      chunks.push(chunk);
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks);
}
