// The rules of cloud projects: creation, storage credentials, input registration, processing start,
// deletion. Access is always scoped to the caller's organization: another organization's project
// is "not found".
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CloudTables, ProjectRow } from '../cloud.tables.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import type { CredentialIssuer, ObjectStore } from '../../infra/storage/object-store.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import { conflict, notFound, ValidationError } from '../../infra/http/errors.ts';
import { ProjectRepository } from './project.repository.ts';
import { mapProject, type ProjectDetails } from './project.mapper.ts';
import { resolveTags } from '../processing/tags.ts';
import type { CloudJobs } from '../cloud.jobs.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';

export interface ProjectServiceOptions {
  bucket: string;
  region: string;
  credentialsTtlSeconds: number;
  publicUrl: () => string;
}

/** Storage layout: clients upload under `uploads/…/`; results go elsewhere, out of clients' reach. */
export const projectPaths = {
  uploads: (organizationUuid: string, projectId: number) => `uploads/org-${organizationUuid}/project-${projectId}`,
  outputs: (projectUuid: string, run: string) => `results/${projectUuid}/${run}/`,
};

export class ProjectService {
  readonly projects: ProjectRepository;

  constructor(
    db: Kysely<CloudTables>,
    private readonly store: ObjectStore,
    private readonly issuer: CredentialIssuer,
    private readonly jobs: JobQueue,
    private readonly options: ProjectServiceOptions,
  ) {
    this.projects = new ProjectRepository(db);
  }

  async create(
    principal: CloudPrincipal,
    body: { name: string; coordinate_system?: string | null; project_group_id?: number | null },
    userAgent: string | undefined,
  ): Promise<ProjectDetails> {
    if (body.project_group_id != null) await this.requireGroup(principal, body.project_group_id);
    const row = await this.projects.create({
      uuid: crypto.randomUUID(),
      name: body.name,
      organizationId: principal.organizationId,
      clientId: principal.clientRowId,
      userAgent: userAgent ?? null,
      coordinateSystem: body.coordinate_system ?? null,
      projectGroupId: body.project_group_id ?? null,
      bucket: this.options.bucket,
      basePath: (id) => projectPaths.uploads(principal.organizationUuid, id),
    });
    return this.details(row);
  }

  async get(principal: CloudPrincipal, id: number): Promise<ProjectDetails> {
    return this.details(await this.require(principal, id));
  }

  async list(principal: CloudPrincipal): Promise<ProjectDetails[]> {
    const rows = await this.projects.list(principal.organizationId);
    return Promise.all(rows.map((row) => this.details(row)));
  }

  async remove(principal: CloudPrincipal, id: number): Promise<void> {
    const project = await this.require(principal, id);
    if (project.public_status === 'WAITING' || project.public_status === 'PROCESSING') {
      throw conflict('The project is processing; it can be deleted once processing has ended.');
    }
    await this.projects.update(project.id, { deleted_at: new Date() });
    // Objects go after the row: a failure here leaves orphaned objects, never a project without data.
    await this.store.deletePrefix(project.bucket_name, `${project.s3_base_path}/`);
    await this.store.deletePrefix(project.bucket_name, `results/${project.uuid}/`);
  }

  async credentials(principal: CloudPrincipal, id: number) {
    const project = await this.require(principal, id);
    const prefix = `${project.s3_base_path}/`;
    const c = await this.issuer.issue(project.bucket_name, prefix, this.options.credentialsTtlSeconds);
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
    this.requireNotStarted(project);
    const prefix = `${project.s3_base_path}/`;
    const unique = [...new Set(keys)];
    const outside = unique.filter((key) => !key.startsWith(prefix) || key.length === prefix.length);
    if (outside.length > 0) {
      throw ValidationError.field('input_file_keys', `Keys must begin with the project's prefix "${prefix}": ${preview(outside)}.`);
    }
    const sizes = await mapConcurrently(unique, 16, (key) => this.store.headObject(project.bucket_name, key));
    const missing = unique.filter((_, i) => !sizes[i]);
    if (missing.length > 0) throw ValidationError.field('input_file_keys', `Not found in storage: ${preview(missing)}.`);
    const count = await this.projects.db.transaction().execute(async (trx) => {
      const locked = await this.projects.find(project.id, principal.organizationId, trx, true);
      if (!locked) throw notFound('Project');
      this.requireNotStarted(locked);
      const total = await this.projects.addInputs(project.id, unique.map((key, i) => ({ key, size: sizes[i]!.size })), trx);
      await this.projects.update(project.id, { image_count: total, public_status: locked.public_status === 'NEW' ? 'UPLOADING' : locked.public_status }, trx);
      return total;
    });
    return { nb_images_registered: count };
  }

  async startProcessing(principal: CloudPrincipal, id: number, tags: unknown): Promise<ProjectDetails> {
    const resolved = resolveTags(tags);
    const row = await this.projects.db.transaction().execute(async (trx) => {
      const project = await this.projects.find(id, principal.organizationId, trx, true);
      if (!project) throw notFound('Project');
      this.requireNotStarted(project);
      if (project.image_count === 0) throw conflict('No inputs are registered: upload and register images first.');
      const updated = await this.projects.update(
        project.id,
        {
          public_status: 'WAITING',
          detailed_status: 'Waiting for processing',
          progress: 0,
          error_code: null,
          error_reason: '',
          tags: JSON.stringify(resolved),
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

  async outputs(principal: CloudPrincipal, id: number) {
    const project = await this.require(principal, id);
    const rows = await this.projects.listOutputs(project.id);
    return {
      outputs: rows.map((o) => ({
        output_id: o.id,
        result_type: o.result_type,
        output_type: o.output_type,
        availability: o.availability,
        s3_key: o.s3_key,
        s3_bucket: o.s3_key ? project.bucket_name : null,
        s3_region: o.s3_key ? this.options.region : null,
        note: o.note,
      })),
    };
  }

  private async details(row: ProjectRow): Promise<ProjectDetails> {
    const outputs = await this.projects.listOutputs(row.id);
    return mapProject(row, outputs, { baseUrl: this.options.publicUrl(), region: this.options.region });
  }

  async require(principal: CloudPrincipal, id: number): Promise<ProjectRow> {
    const project = await this.projects.find(id, principal.organizationId);
    if (!project) throw notFound('Project');
    return project;
  }

  private requireNotStarted(project: ProjectRow): void {
    if (!['NEW', 'UPLOADING'].includes(project.public_status)) {
      throw conflict(`Processing has already started (public_status ${project.public_status}); inputs and processing can no longer change.`);
    }
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

function preview(keys: string[]): string {
  return keys.slice(0, 5).join(', ') + (keys.length > 5 ? ` and ${keys.length - 5} more` : '');
}
