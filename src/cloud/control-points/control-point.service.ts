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
// - Bounded work per call (issue 40 §5): a call may carry MAX_MARKS_PER_CALL marks (cloud.schemas.ts) (parsing and
//   checking the body of 100,000 in one call held the event loop ~220 ms before this code ran) and
//   a project hold MAX_MARKS_PER_PROJECT, registered over several calls. On the embedded database (PGlite, single connection, run inside this process) one
//   transaction writing them all held every other request of both APIs for seconds; there the
//   marks are written in chunks of MARKS_PER_WRITE, each its own short transaction, with a turn of
//   the event loop between them, after the cap has been checked for the whole call (registrations
//   of one project take turns in this process, which alone opens the data folder, so the check
//   stays exact). On a PostgreSQL server a transaction holds one pooled connection, not the
//   process: there the call stays one transaction, all or nothing. Lists and answers are written
//   page by page (infra/http/json-stream.ts).
import type { Transaction } from 'kysely';
import type { CloudTables, ProjectRow } from '../cloud.tables.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import { conflict, notFound, unavailable, ValidationError } from '../../infra/http/errors.ts';
import { ItemErrors } from '../common/field-errors.ts';
import type { ProjectRepository } from '../projects/project.repository.ts';
import { requireNotStarted } from '../projects/project-state.ts';
import type { InputAnalyzer } from '../processing/input-analysis.ts';
import { ControlPointRepository, MARK_PAGE_SIZE, type GcpValues, type MarkValues } from './control-point.repository.ts';
import { nextTurn } from '../../infra/http/json-stream.ts';

export const DEFAULT_ACCURACY = 0.02;

/**
 * What one project may hold: GCPs and MTPs together (one namespace), and marks. Each call was
 * bounded, their sum was not, and the GET lists answer everything at once: with these caps they
 * stay bounded. A call that would go beyond is a 400 on its list and stores nothing.
 */
export const MAX_POINTS_PER_PROJECT = 10_000;
export const MAX_MARKS_PER_PROJECT = 100_000;

/** Marks per transaction on the embedded database: tens of milliseconds of its time each. */
export const MARKS_PER_WRITE = 250;

/** Marks checked per turn of the event loop (a few milliseconds). */
const CHECKS_PER_TURN = 2000;

/** Keys looked up per query: registered inputs while checking marks' photos, stored marks before the cap's check (a call may name 100,000). */
const KEYS_PER_LOOKUP = 1000;

export interface ControlPointOptions {
  /** Whether a transaction holds the whole process (the embedded database): marks are then written in chunks. */
  chunkedMarkWrites: boolean;
}

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

  /** The registration of marks under way per project in this process (chunked writes take turns). */
  private readonly markRegistrations = new Map<number, Promise<unknown>>();

  constructor(
    private readonly projects: ProjectRepository,
    private readonly analyzer: InputAnalyzer,
    private readonly options: ControlPointOptions = { chunkedMarkWrites: false },
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
    // The embedded database answers without a turn of the event loop: each step below yields
    // before the next, so that a large call never holds the process for long at a stretch. Photos
    // are resolved once per distinct name (100,000 marks name a few hundred photos).
    const photos = [...new Set(input.map((m) => m.photo))];
    const fullKey = (photo: string) => (photo.startsWith(prefix) ? photo : `${prefix}${photo.replace(/^\/+/, '')}`);
    const photoKeys = [...new Set(photos.flatMap((photo) => [photo, fullKey(photo)]))];
    await nextTurn();
    const inputs = new Map<string, Awaited<ReturnType<ProjectRepository['listInputs']>>[number]>();
    for (let i = 0; i < photoKeys.length; i += KEYS_PER_LOOKUP) {
      await nextTurn();
      for (const row of await this.projects.listInputs(project.id, photoKeys.slice(i, i + KEYS_PER_LOOKUP))) inputs.set(row.key, row);
    }
    // A photo's registered key: as given, or relative to the project's prefix; null when neither is registered.
    const keyOf = new Map(photos.map((photo) => [photo, inputs.has(photo) ? photo : inputs.has(fullKey(photo)) ? fullKey(photo) : null]));
    // Image sizes: cached analyses, or read now from storage (outside any transaction).
    const toRead = [...new Set([...keyOf.values()].filter((k): k is string => k !== null))].map((k) => inputs.get(k)!);
    await nextTurn();
    let analyses;
    try {
      analyses = await this.analyzer.analyze(project.id, project.bucket_name, toRead);
    } catch {
      throw unavailable('Object storage is unavailable: the images named by the marks cannot be read. Try again.');
    }
    await nextTurn();
    const { gcps, mtps } = await this.points.names(project.id);
    await nextTurn();
    const marks: MarkValues[] = [];
    const seen = new Set<string>();
    const check = (m: MarkValues, i: number) => {
      const name = m.gcp.trim();
      if (!gcps.has(name) && !mtps.has(name)) errors.add(i, 'gcp', `No GCP or MTP named "${name}": register GCPs and MTPs before their marks.`);
      const key = keyOf.get(m.photo)!;
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
    };
    for (let i = 0; i < input.length; i++) {
      if (i > 0 && i % CHECKS_PER_TURN === 0) await nextTurn();
      check(input[i], i);
    }
    errors.throwIfAny();
    if (!this.options.chunkedMarkWrites) {
      await this.inLockedProject(principal, id, 'marks', async (locked, trx) => {
        // Points cannot be deleted, so those checked above still exist; only the state can have moved on.
        await this.points.upsertMarks(locked.id, marks, trx);
        await this.refuseBeyondCaps(locked.id, 'marks', trx);
      });
    } else {
      await this.oneRegistrationAtATime(project.id, () => this.writeMarksInChunks(principal, project.id, marks));
    }
    return { marks };
  }

  /**
   * The embedded database's way (see the head comment): the cap checked for the whole call first,
   * then chunks of MARKS_PER_WRITE, each in a transaction that locks the project and checks that
   * processing has not started. Processing started in between: 409, the chunks written before it
   * stay (a mark registered again replaces itself, so the call can be repeated).
   */
  private async writeMarksInChunks(principal: CloudPrincipal, id: number, marks: MarkValues[]): Promise<void> {
    let stored = await this.points.countMarks(id);
    for (let i = 0; i < marks.length; i += KEYS_PER_LOOKUP) {
      await nextTurn();
      stored -= await this.points.countStoredPairs(id, marks.slice(i, i + KEYS_PER_LOOKUP));
    }
    const total = stored + marks.length;
    if (total > MAX_MARKS_PER_PROJECT) {
      throw ValidationError.field('marks', `A project holds at most ${MAX_MARKS_PER_PROJECT} marks; with these it would hold ${total}.`);
    }
    for (let i = 0; i < marks.length; i += MARKS_PER_WRITE) {
      await nextTurn();
      await this.inLockedProject(principal, id, 'marks', (locked, trx) => this.points.upsertMarks(locked.id, marks.slice(i, i + MARKS_PER_WRITE), trx));
    }
  }

  /** Runs `fn` after the registrations of marks of the same project already under way in this process. */
  private async oneRegistrationAtATime<T>(projectId: number, fn: () => Promise<T>): Promise<T> {
    const before = this.markRegistrations.get(projectId) ?? Promise.resolve();
    const run = before.catch(() => undefined).then(fn);
    const settled = run.catch(() => undefined);
    this.markRegistrations.set(projectId, settled);
    try {
      return await run;
    } finally {
      if (this.markRegistrations.get(projectId) === settled) this.markRegistrations.delete(projectId);
    }
  }

  async listGcps(principal: CloudPrincipal, id: number): Promise<{ gcps: GcpValues[] }> {
    return { gcps: await this.points.gcps((await this.readable(principal, id)).id) };
  }

  async listMtps(principal: CloudPrincipal, id: number): Promise<{ mtps: { name: string; is_checkpoint: boolean }[] }> {
    return { mtps: await this.points.mtps((await this.readable(principal, id)).id) };
  }

  /** The project's marks page by page (checked for access before the first page is read). */
  async markPages(principal: CloudPrincipal, id: number): Promise<AsyncGenerator<MarkValues[]>> {
    return this.points.markPages((await this.readable(principal, id)).id, MARK_PAGE_SIZE);
  }

  private async readable(principal: CloudPrincipal, id: number): Promise<ProjectRow> {
    const project = await this.projects.find(id, principal.organizationId);
    if (!project) throw notFound('Project');
    return project;
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
