// Ground control points, manual tie points and marks (cloud spec, "Ground control point",
// "Manual tie point", "Mark", processing-tag rules 3 and 4, limit 2).
//
// - GCPs and MTPs are registered after the project's creation and before processing starts
//   (409 otherwise); registering a name again replaces that point. GCP and MTP names share one
//   namespace, since a mark names its point by name alone.
// - `point_type` is GCP or CHECKPOINT, in any case on input, upper case on output. x, y, z are in
//   the project's coordinate system, x and y in the order of its axes; accuracies are metres (> 0,
//   default 0.02).
// - Marks come after their points: each names a registered GCP or MTP, a registered input (its
//   storage key, or the key relative to the project's prefix) that is a readable image, and pixel
//   coordinates inside that image: 0 <= x < width, 0 <= y < height, origin at the top-left corner
//   of the stored pixels (before any EXIF orientation). Marking a point again in the same photo
//   replaces the mark.
// - Processing starts only when every MTP is marked in at least two photos and every GCP in at
//   least two photos, or in none when the project was created with a `coordinate_system` (the
//   spec's automatic GCP marking, rule 4): see `assertReadyToProcess`.
import type { Transaction } from 'kysely';
import type { CloudTables, ProjectRow } from '../cloud.tables.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import { conflict, notFound, unavailable, ValidationError } from '../../infra/http/errors.ts';
import { ItemErrors } from '../common/field-errors.ts';
import type { ProjectRepository } from '../projects/project.repository.ts';
import { requireNotStarted } from '../projects/project-state.ts';
import type { InputAnalyzer } from '../processing/input-analysis.ts';
import { ControlPointRepository, type GcpValues, type MarkValues } from './control-point.repository.ts';

export const DEFAULT_ACCURACY = 0.02;

/**
 * What one project may hold: GCPs and MTPs together (one namespace), and marks. Each call was
 * bounded, their sum was not, and the GET lists answer everything at once: with these caps they
 * stay bounded. A call that would go beyond is a 400 on its list and stores nothing.
 */
export const MAX_POINTS_PER_PROJECT = 10_000;
export const MAX_MARKS_PER_PROJECT = 100_000;

export interface GcpInput {
  name: string;
  point_type?: string;
  x: number;
  y: number;
  z: number;
  xy_accuracy?: number;
  z_accuracy?: number;
}

export class ControlPointService {
  readonly points: ControlPointRepository;

  constructor(
    private readonly projects: ProjectRepository,
    private readonly analyzer: InputAnalyzer,
  ) {
    this.points = new ControlPointRepository(projects.db);
  }

  async registerGcps(principal: CloudPrincipal, id: number, input: GcpInput[]): Promise<{ gcps: GcpValues[] }> {
    await this.requireEditable(principal, id);
    const errors = new ItemErrors('gcps');
    const gcps: GcpValues[] = [];
    const seen = new Set<string>();
    input.forEach((g, i) => {
      const name = g.name.trim();
      if (seen.has(name)) errors.add(i, 'name', `"${name}" appears twice in this request.`);
      seen.add(name);
      const pointType = (g.point_type ?? 'GCP').trim().toUpperCase();
      if (pointType !== 'GCP' && pointType !== 'CHECKPOINT') errors.add(i, 'point_type', 'Must be GCP or CHECKPOINT.');
      gcps.push({
        name,
        point_type: pointType as GcpValues['point_type'],
        x: g.x,
        y: g.y,
        z: g.z,
        xy_accuracy: g.xy_accuracy ?? DEFAULT_ACCURACY,
        z_accuracy: g.z_accuracy ?? DEFAULT_ACCURACY,
      });
    });
    errors.throwIfAny();
    await this.inLockedProject(principal, id, 'GCPs', async (project, trx) => {
      const { mtps } = await this.points.names(project.id, trx);
      gcps.forEach((g, i) => {
        if (mtps.has(g.name)) errors.add(i, 'name', `"${g.name}" is already the name of an MTP of this project.`);
      });
      errors.throwIfAny();
      await this.points.upsertGcps(project.id, gcps, trx);
      await this.refuseBeyondCaps(project.id, 'gcps', trx);
    });
    return { gcps };
  }

  async registerMtps(principal: CloudPrincipal, id: number, input: { name: string; is_checkpoint?: boolean }[]) {
    await this.requireEditable(principal, id);
    const errors = new ItemErrors('mtps');
    const seen = new Set<string>();
    const mtps = input.map((m, i) => {
      const name = m.name.trim();
      if (seen.has(name)) errors.add(i, 'name', `"${name}" appears twice in this request.`);
      seen.add(name);
      return { name, is_checkpoint: m.is_checkpoint ?? false };
    });
    errors.throwIfAny();
    await this.inLockedProject(principal, id, 'MTPs', async (project, trx) => {
      const { gcps } = await this.points.names(project.id, trx);
      mtps.forEach((m, i) => {
        if (gcps.has(m.name)) errors.add(i, 'name', `"${m.name}" is already the name of a GCP of this project.`);
      });
      errors.throwIfAny();
      await this.points.upsertMtps(project.id, mtps, trx);
      await this.refuseBeyondCaps(project.id, 'mtps', trx);
    });
    return { mtps };
  }

  async registerMarks(principal: CloudPrincipal, id: number, input: MarkValues[]): Promise<{ marks: MarkValues[] }> {
    const project = await this.requireEditable(principal, id);
    const errors = new ItemErrors('marks');
    const prefix = `${project.s3_base_path}/`;
    const photoKeys = [...new Set(input.flatMap((m) => (m.photo.startsWith(prefix) ? [m.photo] : [m.photo, `${prefix}${m.photo.replace(/^\/+/, '')}`])))];
    const inputs = new Map((await this.projects.listInputs(project.id, photoKeys)).map((row) => [row.key, row]));
    const resolveKey = (photo: string) => (inputs.has(photo) ? photo : inputs.has(`${prefix}${photo.replace(/^\/+/, '')}`) ? `${prefix}${photo.replace(/^\/+/, '')}` : null);
    // Image sizes: cached analyses, or read now from storage (outside any transaction).
    const toRead = [...new Set(input.map((m) => resolveKey(m.photo)).filter((k): k is string => k !== null))].map((k) => inputs.get(k)!);
    let analyses;
    try {
      analyses = await this.analyzer.analyze(project.id, project.bucket_name, toRead);
    } catch {
      throw unavailable('Object storage is unavailable: the images named by the marks cannot be read. Try again.');
    }
    const { gcps, mtps } = await this.points.names(project.id);
    const marks: MarkValues[] = [];
    const seen = new Set<string>();
    input.forEach((m, i) => {
      const name = m.gcp.trim();
      if (!gcps.has(name) && !mtps.has(name)) errors.add(i, 'gcp', `No GCP or MTP named "${name}": register GCPs and MTPs before their marks.`);
      const key = resolveKey(m.photo);
      if (key === null) {
        errors.add(i, 'photo', `"${m.photo}" is not a registered input of this project.`);
        return;
      }
      const analysis = analyses.get(key);
      if (!analysis?.ok) {
        errors.add(i, 'photo', `"${m.photo}" is not a readable image${analysis ? ` (${analysis.reason})` : ''}.`);
        return;
      }
      if (!(m.x >= 0 && m.x < analysis.width)) errors.add(i, 'x', `Must be within the image: 0 <= x < ${analysis.width}.`);
      if (!(m.y >= 0 && m.y < analysis.height)) errors.add(i, 'y', `Must be within the image: 0 <= y < ${analysis.height}.`);
      const pair = `${name}\u0000${key}`;
      if (seen.has(pair)) errors.add(i, 'photo', `"${name}" is marked twice in "${m.photo}" in this request.`);
      seen.add(pair);
      marks.push({ gcp: name, photo: key, x: m.x, y: m.y });
    });
    errors.throwIfAny();
    await this.inLockedProject(principal, id, 'marks', async (locked, trx) => {
      // Points cannot be deleted, so those checked above still exist; only the state can have moved on.
      await this.points.upsertMarks(locked.id, marks, trx);
      await this.refuseBeyondCaps(locked.id, 'marks', trx);
    });
    return { marks };
  }

  async list(principal: CloudPrincipal, id: number) {
    const project = await this.projects.find(id, principal.organizationId);
    if (!project) throw notFound('Project');
    return this.points.all(project.id);
  }

  /**
   * 409 unless each MTP is marked in >= 2 photos and each GCP in >= 2 photos (or in none, for
   * automatic marking, when the project has a coordinate_system). Called by start_processing with
   * the project row locked.
   */
  async assertReadyToProcess(project: ProjectRow, trx: Transaction<CloudTables>): Promise<void> {
    const problems: string[] = [];
    for (const point of await this.points.markCounts(project.id, trx)) {
      if (point.photos >= 2) continue;
      if (point.kind === 'GCP' && point.photos === 0 && project.coordinate_system) continue; // automatic marking
      problems.push(
        point.kind === 'GCP' && point.photos === 0
          ? `GCP "${point.name}" has no marks (automatic marking needs the project's coordinate_system)`
          : `${point.kind} "${point.name}" is marked in ${point.photos} photo(s)`,
      );
    }
    if (problems.length > 0) {
      throw conflict(
        `Each GCP or MTP must be marked in at least two photos: ${problems.slice(0, 10).join('; ')}${problems.length > 10 ? `; and ${problems.length - 10} more` : ''}.`,
      );
    }
  }

  /**
   * Counted after the upsert (a name registered again replaces its point, a point marked again in
   * a photo its mark), in the project-locked transaction: beyond a cap, the whole call rolls back.
   */
  private async refuseBeyondCaps(projectId: number, field: 'gcps' | 'mtps' | 'marks', trx: Transaction<CloudTables>): Promise<void> {
    const { points, marks } = await this.points.counts(projectId, trx);
    if (field !== 'marks' && points > MAX_POINTS_PER_PROJECT) {
      throw ValidationError.field(field, `A project holds at most ${MAX_POINTS_PER_PROJECT} GCPs and MTPs together; with these it would hold ${points}.`);
    }
    if (field === 'marks' && marks > MAX_MARKS_PER_PROJECT) {
      throw ValidationError.field(field, `A project holds at most ${MAX_MARKS_PER_PROJECT} marks; with these it would hold ${marks}.`);
    }
  }

  private async requireEditable(principal: CloudPrincipal, id: number): Promise<ProjectRow> {
    const project = await this.projects.find(id, principal.organizationId);
    if (!project) throw notFound('Project');
    requireNotStarted(project, 'GCPs, MTPs and marks');
    return project;
  }

  private async inLockedProject(
    principal: CloudPrincipal,
    id: number,
    what: string,
    fn: (project: ProjectRow, trx: Transaction<CloudTables>) => Promise<void>,
  ): Promise<void> {
    await this.projects.db.transaction().execute(async (trx) => {
      const project = await this.projects.find(id, principal.organizationId, trx, true);
      if (!project) throw notFound('Project');
      requireNotStarted(project, what);
      await fn(project, trx);
    });
  }
}
