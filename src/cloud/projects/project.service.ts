// The rules of cloud projects: creation, storage credentials, input registration, processing start,
// deletion. Access is always scoped to the caller's organization: another organization's project
// is "not found".
// Past 350 lines: one service for the project's life cycle, whose rules read the same project row;
// share links, extras and control points already live in their own modules.
import crypto from 'node:crypto';
import type { ProjectRow } from '../cloud.tables.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import { mayWrite } from '../auth/cloud-scopes.ts';
import type { CredentialIssuer, ObjectStore } from '../../infra/storage/object-store.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import { conflict, notFound, ValidationError, type FieldErrors } from '../../infra/http/errors.ts';
import type { OutputRow, ProjectRepository } from './project.repository.ts';
import { mapProject, type ProjectDetails } from './project.mapper.ts';
import { acceptsInputs, requireNotStarted } from './project-state.ts';
import { resolveTags } from '../processing/tags.ts';
import { resolveEngine, type OfferedEngines } from '../processing/engine-choice.ts';
import { resolveRequestedOutputs } from '../processing/requested-outputs.ts';
import type { CloudJobs } from '../cloud.jobs.ts';
import { checkUploadedKeys } from './uploaded-keys.ts';
import type { ProjectExtrasService } from './project-extras.ts';
import { isShareGrant, SHARE_URL_TTL_SECONDS, type ProjectReader } from './share-links.ts';
import { CrsDefinitionError, parseCoordinateSystem } from '../coordinate-systems/crs.ts';
import { INPUT_ZIP, type InputsBundleService } from '../bundles/inputs-bundle.ts';
import type { ControlPointService } from '../control-points/control-point.service.ts';
import { envelope, isPaged, pageWindow, type Page, type PageRequest } from '../common/pagination.ts';

/**
 * The longest life of storage credentials given to a share link's holder: revoking the link stops
 * new ones at once, but those already given work until they expire (nothing in them can be
 * revoked), so this bounds how long a revoked holder keeps downloading.
 */
export const SHARE_CREDENTIALS_TTL_SECONDS = 900; // the shortest AWS STS gives (AssumeRole's DurationSeconds)

export interface ProjectServiceOptions {
  bucket: string;
  region: string;
  credentialsTtlSeconds: number;
  publicUrl: () => string;
  /** The engines a start_processing request may choose. */
  engines: OfferedEngines;
}

/**
 * Storage layout: clients upload under `uploads/…/`; results (outputs of each run, the inputs
 * bundle) go under `results/<project uuid>/`, which the project's storage credentials may read
 * and list but never write (credentials(), below).
 */
export const projectPaths = {
  uploads: (organizationUuid: string, projectId: number) => `uploads/org-${organizationUuid}/project-${projectId}`,
  results: (projectUuid: string) => `results/${projectUuid}/`,
  outputs: (projectUuid: string, run: string) => `${projectPaths.results(projectUuid)}${run}/`,
};

export interface CreateProjectInput {
  name: string;
  coordinate_system?: string | null;
  geoid_model?: string | null;
  geoid_height?: number | null;
  project_group_id?: number | null;
}

export interface ProjectServiceDeps {
  projects: ProjectRepository;
  store: ObjectStore;
  issuer: CredentialIssuer;
  jobs: JobQueue;
  controlPoints: ControlPointService;
  bundles: InputsBundleService;
  extras: ProjectExtrasService;
}

/** start_processing's `custom_template_s3_key` and `custom_template_s3_bucket` (project-extras.ts). */
export interface ProcessingTemplateFields {
  key?: unknown;
  bucket?: unknown;
}

export class ProjectService {
  readonly projects: ProjectRepository;
  private readonly store: ObjectStore;
  private readonly issuer: CredentialIssuer;
  private readonly jobs: JobQueue;
  private readonly controlPoints: ControlPointService;
  private readonly bundles: InputsBundleService;
  private readonly extras: ProjectExtrasService;

  constructor(
    deps: ProjectServiceDeps,
    private readonly options: ProjectServiceOptions,
  ) {
    ({ projects: this.projects, store: this.store, issuer: this.issuer, jobs: this.jobs, controlPoints: this.controlPoints, bundles: this.bundles, extras: this.extras } = deps);
  }

  async create(principal: CloudPrincipal, body: CreateProjectInput, userAgent: string | undefined): Promise<ProjectDetails> {
    const coordinateSystem = body.coordinate_system?.trim() ? body.coordinate_system.trim() : null;
    if (coordinateSystem) {
      try {
        parseCoordinateSystem(coordinateSystem);
      } catch (err) {
        if (err instanceof CrsDefinitionError) throw ValidationError.field('coordinate_system', err.message);
        throw err;
      }
    }
    if (body.project_group_id != null) await this.requireGroup(principal, body.project_group_id);
    const row = await this.projects.create({
      uuid: crypto.randomUUID(),
      name: body.name,
      organizationId: principal.organizationId,
      clientId: principal.clientRowId,
      userAgent: userAgent ?? null,
      coordinateSystem,
      geoidModel: body.geoid_model?.trim() || null,
      geoidHeight: body.geoid_height ?? null,
      projectGroupId: body.project_group_id ?? null,
      bucket: this.options.bucket,
      basePath: (id) => projectPaths.uploads(principal.organizationUuid, id),
    });
    return this.details(row);
  }

  async get(reader: ProjectReader, id: number): Promise<ProjectDetails> {
    return this.details(await this.require(reader, id), undefined, undefined, undefined, this.urlTtlFor(reader));
  }

  /** How long the presigned URLs handed to `reader` last: a share-link holder's, minutes (share-links.ts). */
  private urlTtlFor(reader: ProjectReader): number {
    return isShareGrant(reader) ? Math.min(this.options.credentialsTtlSeconds, SHARE_URL_TTL_SECONDS) : this.options.credentialsTtlSeconds;
  }

  async list(principal: CloudPrincipal, query: PageRequest = {}, url = ''): Promise<ProjectDetails[] | Page<ProjectDetails>> {
    if (!isPaged(query)) return this.detailsOf(await this.projects.list(principal.organizationId));
    const { limit, offset } = pageWindow(query);
    const [rows, count] = await Promise.all([this.projects.list(principal.organizationId, { limit, offset }), this.projects.count(principal.organizationId)]);
    return envelope(await this.detailsOf(rows), count, query, url);
  }

  /**
   * Deletes a project. One that is queued or processing is canceled too: the row becomes CANCELED
   * (never seen by clients: the project answers 404 from now on), which the processing run, in
   * this process or in a worker process, notices within about a second (cancellation.ts).
   */
  async remove(principal: CloudPrincipal, id: number): Promise<void> {
    const project = await this.projects.db.transaction().execute(async (trx) => {
      const locked = await this.projects.find(id, principal.organizationId, trx, true);
      if (!locked) throw notFound('Project');
      const interrupted = locked.public_status === 'WAITING' || locked.public_status === 'PROCESSING';
      // Guarded by `deleted_at is null` and checked: of concurrent deletions, one 204, the others 404.
      const deleted = await this.projects.markDeleted(
        locked.id,
        interrupted ? { public_status: 'CANCELED', detailed_status: 'Canceled: the project was deleted', processing_ended_at: new Date() } : {},
        trx,
      );
      if (!deleted) throw notFound('Project');
      return locked;
    });
    // Objects go after the row: a failure here leaves orphaned objects, never a project without data.
    await this.store.deletePrefix(project.bucket_name, `${project.s3_base_path}/`);
    await this.store.deletePrefix(project.bucket_name, projectPaths.results(project.uuid));
  }

  async credentials(reader: ProjectReader, id: number) {
    const project = await this.require(reader, id);
    const prefix = `${project.s3_base_path}/`;
    // Write under the uploads prefix (the record's `key`), or only read it with a read-only token
    // or the project's share token; read the results, as the real API's clients do with an
    // output's s3_key (docs/cloud-service.md, "Downloading outputs"). The uploads folder stays the
    // main prefix for a share holder too: it is what the storage endpoint checks is still live
    // (isStoragePrefixLive), and the holder already downloads the photos in the inputs bundle.
    const shared = isShareGrant(reader);
    const ttl = shared ? Math.min(this.options.credentialsTtlSeconds, SHARE_CREDENTIALS_TTL_SECONDS) : this.options.credentialsTtlSeconds;
    const c = await this.issuer.issue(project.bucket_name, prefix, ttl, {
      readOnlyPrefixes: [projectPaths.results(project.uuid)],
      // Once processing has started the uploads are closed (spec rule 4): read-only credentials,
      // and the embedded store refuses writes with those handed out before (prefix-gate.ts).
      writable: !shared && mayWrite(reader) && acceptsInputs(project.public_status),
    });
    return {
      access_key: c.accessKeyId,
      secret_key: c.secretAccessKey,
      session_token: c.sessionToken,
      expiration: c.expiration.toISOString(),
      bucket: c.bucket,
      key: c.prefix,
      server_time: new Date().toISOString(),
      region: c.region,
      is_bucket_accelerated: false,
      endpoint_override: c.endpoint ?? '',
    };
  }

  /** Registers uploaded keys: each under the project's prefix and present in storage. All or nothing. */
  async bulkRegister(principal: CloudPrincipal, id: number, keys: string[]): Promise<{ nb_images_registered: number }> {
    const project = await this.require(principal, id);
    requireNotStarted(project);
    const inputs = await checkUploadedKeys(this.store, project, keys, 'input_file_keys');
    const { count, staleBundle } = await this.projects.db.transaction().execute(async (trx) => {
      const locked = await this.projects.find(project.id, principal.organizationId, trx, true);
      if (!locked) throw notFound('Project');
      requireNotStarted(locked);
      const total = await this.projects.addInputs(project.id, inputs, trx);
      await this.projects.update(project.id, { image_count: total, public_status: locked.public_status === 'NEW' ? 'UPLOADING' : locked.public_status }, trx);
      // A bundle of the inputs no longer holds them all.
      const stale = total !== locked.image_count ? await this.bundles.invalidate(project.id, trx) : null;
      return { count: total, staleBundle: stale };
    });
    if (staleBundle) await this.store.deleteObject(project.bucket_name, staleBundle).catch(() => undefined);
    return { nb_images_registered: count };
  }

  async startProcessing(
    principal: CloudPrincipal,
    id: number,
    tags: unknown,
    engine?: unknown,
    outputs?: unknown,
    template: ProcessingTemplateFields = {},
  ): Promise<ProjectDetails> {
    // The fields are checked, and all reported, before anything else (as DRF validates a body).
    const [resolved, engineName, requestedOutputs] = validateFields(
      () => resolveTags(tags),
      () => resolveEngine(engine, this.options.engines),
      () => resolveRequestedOutputs(outputs),
    );
    const templateOutputs = await this.templateOutputs(principal, id, template, requestedOutputs !== null);
    const chosenOutputs = requestedOutputs ?? templateOutputs;
    const row = await this.projects.db.transaction().execute(async (trx) => {
      const project = await this.projects.find(id, principal.organizationId, trx, true);
      if (!project) throw notFound('Project');
      requireNotStarted(project);
      if (project.image_count === 0) throw conflict('No inputs are registered: upload and register images first.');
      await this.controlPoints.assertReadyToProcess(project, trx);
      const updated = await this.projects.update(
        project.id,
        {
          public_status: 'WAITING',
          detailed_status: 'Waiting for processing',
          progress: 0,
          error_code: null,
          error_reason: '',
          tags: JSON.stringify(resolved),
          engine: engineName,
          requested_outputs: chosenOutputs ? JSON.stringify(chosenOutputs) : null,
          processing_started_at: null,
          processing_ended_at: null,
        },
        trx,
      );
      await this.jobs.send<CloudJobs, 'cloud.process-project'>('cloud.process-project', { projectId: project.id }, { trx });
      return updated;
    });
    return this.details(row);
  }

  /** The outputs a processing template asks for (null without one); one way at a time: a template or `outputs`. */
  private async templateOutputs(principal: CloudPrincipal, id: number, template: ProcessingTemplateFields, withOutputs: boolean) {
    const given = (value: unknown) => value !== undefined && value !== null && value !== '';
    if (!given(template.key) && !given(template.bucket)) return null;
    if (withOutputs) throw ValidationError.field('custom_template_s3_key', 'Give either `outputs` or a processing template (custom_template_s3_key), not both.');
    return this.extras.templateOutputsOf(await this.require(principal, id), template.key, template.bucket);
  }

  async outputs(reader: ProjectReader, id: number) {
    const project = await this.require(reader, id);
    const rows = await this.projects.listOutputs(project.id);
    const urlTtl = this.urlTtlFor(reader);
    return {
      outputs: await Promise.all(
        rows.map(async (o) => {
          const done = o.availability === 'done' && o.s3_key !== null;
          return {
            output_id: o.id,
            result_type: o.result_type,
            output_type: o.output_type,
            availability: o.availability,
            s3_key: o.s3_key,
            s3_bucket: o.s3_key ? project.bucket_name : null,
            s3_region: o.s3_key ? this.options.region : null,
            url: done ? await this.store.presignGetUrl(project.bucket_name, o.s3_key!, urlTtl) : null,
            note: o.note,
          };
        }),
      ),
    };
  }

  async details(row: ProjectRow, outputs?: OutputRow[], folderUuid?: string | null, clientName?: string, urlTtl = this.options.credentialsTtlSeconds): Promise<ProjectDetails> {
    const rows = outputs ?? (await this.projects.listOutputs(row.id));
    const client = clientName ?? (row.client_id === null ? '' : ((await this.projects.clientNames([row.client_id])).get(row.client_id) ?? ''));
    const thumb = rows.find((o) => o.output_type === 'project_thumb' && o.availability === 'done' && o.s3_key);
    const bundle = await this.bundles.stateOf(row, rows.find((o) => o.output_type === INPUT_ZIP), urlTtl);
    const folder = folderUuid !== undefined ? folderUuid : await this.folderUuid(row.folder_id);
    return mapProject(row, rows, {
      baseUrl: this.options.publicUrl(),
      region: this.options.region,
      bundle,
      thumbUrl: thumb ? await this.store.presignGetUrl(row.bucket_name, thumb.s3_key!, urlTtl) : null,
      folderUuid: folder,
      clientName: client,
    });
  }

  private async detailsOf(rows: ProjectRow[]): Promise<ProjectDetails[]> {
    const outputs = await this.projects.outputsOf(rows.map((r) => r.id));
    const folderIds = [...new Set(rows.map((r) => r.folder_id).filter((f): f is number => f !== null))];
    const folders = new Map(
      folderIds.length
        ? (await this.projects.db.selectFrom('cloud.folders').select(['id', 'uuid']).where('id', 'in', folderIds).execute()).map((f) => [f.id, f.uuid])
        : [],
    );
    const clients = await this.projects.clientNames(rows.map((r) => r.client_id).filter((c): c is number => c !== null));
    return Promise.all(
      rows.map((row) =>
        this.details(row, outputs.get(row.id) ?? [], row.folder_id === null ? null : (folders.get(row.folder_id) ?? null), (row.client_id !== null && clients.get(row.client_id)) || ''),
      ),
    );
  }

  private async folderUuid(folderId: number | null): Promise<string | null> {
    if (folderId === null) return null;
    const folder = await this.projects.db.selectFrom('cloud.folders').select('uuid').where('id', '=', folderId).executeTakeFirst();
    return folder?.uuid ?? null;
  }

  /** The project, read by a client of its organization or with its share token (share-links.ts); 404 otherwise. */
  async require(reader: ProjectReader, id: number): Promise<ProjectRow> {
    if (isShareGrant(reader) && reader.shareProjectId !== id) throw notFound('Project');
    const project = await this.projects.find(id, reader.organizationId);
    if (!project) throw notFound('Project');
    return project;
  }

  private async requireGroup(principal: CloudPrincipal, groupId: number): Promise<void> {
    const group = await this.projects.db
      .selectFrom('cloud.project_groups')
      .select('id')
      .where('id', '=', groupId)
      .where('organization_id', '=', principal.organizationId)
      .executeTakeFirst();
    if (!group) throw ValidationError.field('project_group_id', 'No such project group in your organization.');
  }
}

/** The results of independent field checks, or one ValidationError with every field's errors. */
function validateFields<T extends unknown[]>(...checks: { [K in keyof T]: () => T[K] }): T {
  const fields: FieldErrors = {};
  const attempt = <T>(check: () => T): T | undefined => {
    try {
      return check();
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(fields, err.fields);
      return undefined;
    }
  };
  const results = checks.map((check) => attempt(check)) as T;
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  return results;
}
