// Durable background jobs on pg-boss, in the same database as the data they act on.
//
// Each service declares a typed catalogue (job name -> payload type) and one handler per job
// (see `JobHandlers`): a job without a handler is a compile error. Jobs can be queued inside a
// database transaction (`send(..., { trx })`), so a state change and the work it triggers are
// committed together or not at all. Workers send heartbeats: when a worker process dies
// (SIGKILL, crash), its job is retried after about `heartbeatSeconds`, so handlers must be
// idempotent: each one re-reads the state and continues from where it is. A handler that fails
// because the database connection was lost (connection-errors.ts) is retried the same way, with
// backoff (default 5 retries, 2 s doubling: about 1-2 minutes in all, enough for a restarted
// database or a dropped connection; a longer outage leaves the job failed in pg-boss).
import { PgBoss, fromKysely, type Job, type SendOptions } from 'pg-boss';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../database/database.ts';
import { isDatabaseUnavailable } from '../database/connection-errors.ts';

export type JobCatalogue = Record<string, object>;

/** How often each worker looks for jobs when NOTIFY is unavailable (pg-boss's minimum). */
export const POLLING_SECONDS = 0.5;
/**
 * How often each worker looks for jobs while NOTIFY wakes it for every job sent runnable at once.
 * What NOTIFY does not announce waits for this poll: a retry's backoff, jobs of a worker that died
 * (re-queued by pg-boss's supervision), and delayed jobs (startAfter) sent from a process that
 * runs no worker of their queue (a delayed job sent where its worker runs wakes it on time: see
 * `send`).
 * Why not poll every 0.5 s as before (bench/README.md, "API"): the 20 workers of the 12 queues,
 * fetching twice a second each, were 7.7 % of a core of an idle PGlite server (now 3.1 %; on
 * PostgreSQL 3.0 → 0.8 %), and under load that work shares PGlite's one connection with every
 * request.
 */
export const NOTIFY_BACKSTOP_SECONDS = 5;
/** A delayed job's local wake-up comes this long after it is due (the send's own round trip). */
const WAKE_MARGIN_MS = 50;

/** Which run of a job this is: a handler whose failures are retried can settle for good on the last one. */
export interface JobAttempt {
  /** 0 on the first run, then one more each time pg-boss runs the job again. */
  retryCount: number;
  /** A failure of this run is not retried (the job's retryLimit is reached). */
  last: boolean;
}

export type JobHandlers<C extends JobCatalogue> = {
  [N in keyof C]: {
    handler: (data: C[N], attempt: JobAttempt) => Promise<void>;
    /** Parallel jobs of this kind per process. */
    concurrency?: number;
    /**
     * Jobs of one group (`QueueSendOptions.group`) running at once, across every process: the
     * others of that group stay queued and the workers take other groups' jobs (pg-boss's
     * groupConcurrency, checked when a job is fetched), so one group cannot hold every worker.
     */
    groupConcurrency?: number;
    retryLimit?: number;
    retryDelaySeconds?: number;
    /** Hard limit of one run. */
    expireInSeconds?: number;
  };
};

export interface QueueSendOptions {
  /** Queue within this transaction: the job exists only if the transaction commits. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  trx?: Transaction<any> | Kysely<any>;
  /** At most one queued-or-active job with this key. */
  singletonKey?: string;
  startAfterSeconds?: number;
  /** The group the job counts against (JobHandlers' groupConcurrency), e.g. a tenant. */
  group?: string;
}

export interface JobQueueOptions {
  heartbeatSeconds: number;
  logger: Logger;
}

export class JobQueue {
  private readonly boss: PgBoss;
  private readonly handlers = new Map<string, JobHandlers<JobCatalogue>[string]>();
  /** pg-boss worker id of each queue this process works on. */
  private readonly workerIds = new Map<string, string>();
  /** Wake-ups of local workers for delayed jobs (see `send`), cleared on stop. */
  private readonly wakeTimers = new Set<NodeJS.Timeout>();
  private started = false;
  /** Recurring jobs (`schedule`), written to pg-boss at start. */
  private readonly schedules = new Map<string, { cron: string; data: object }>();

  constructor(
    database: Database,
    private readonly options: JobQueueOptions,
  ) {
    const connection = 'connectionString' in database.boss ? { connectionString: database.boss.connectionString, max: 4 } : { db: database.boss.db };
    this.boss = new PgBoss({
      ...connection,
      ...(database.kind === 'pglite' ? { backend: 'pglite' as const } : {}),
      schema: 'pgboss',
      // Workers are woken by NOTIFY when a job is sent (runnable at once) and otherwise poll only
      // every NOTIFY_BACKSTOP_SECONDS; see there.
      useListenNotify: true,
      // Frequent enough that a job whose worker died is picked up again within seconds.
      monitorIntervalSeconds: Math.max(1, Math.floor(options.heartbeatSeconds / 2)),
      superviseIntervalSeconds: Math.max(1, Math.floor(options.heartbeatSeconds / 2)),
    });
    // pg-boss reports here what it recovers from by itself: a lost connection of its pool (dropped
    // by the pool), of its LISTEN connection (reconnected with backoff, missed jobs fetched), a
    // failed fetch or supervision pass (tried again at the next interval). Without a listener, the
    // 'error' event would end the process.
    this.boss.on('error', (err) =>
      isDatabaseUnavailable(err) ? options.logger.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'job queue: database connection lost; pg-boss recovers') : options.logger.error({ err }, 'job queue error'),
    );
  }

  /** Registers the handlers of one service's catalogue. */
  register<C extends JobCatalogue>(handlers: JobHandlers<C>): void {
    for (const [name, definition] of Object.entries(handlers)) {
      this.handlers.set(name, definition as JobHandlers<JobCatalogue>[string]);
    }
  }

  /** Starts pg-boss (creating its schema) and, when asked, the workers of every registered job. */
  async start(runWorkers: boolean): Promise<void> {
    await this.boss.start();
    this.started = true;
    for (const [name, definition] of this.handlers) {
      await this.boss.createQueue(name, {
        retryLimit: definition.retryLimit ?? 5,
        retryDelay: definition.retryDelaySeconds ?? 2,
        retryBackoff: true,
        expireInSeconds: definition.expireInSeconds ?? 3600,
        heartbeatSeconds: Math.max(10, this.options.heartbeatSeconds),
        notify: true,
      });
      // createQueue leaves an existing queue as it is: queues made before NOTIFY was used get it here.
      await this.boss.updateQueue(name, { notify: true });
      // pg-boss caches its queue list at start(), before the queues above existed on a first
      // start. An uncached queue is looked up on pg-boss's own connection the first time a job is
      // sent; inside one of our transactions on PGlite (one connection, held by the transaction)
      // that lookup would wait forever. A harmless read through the cache fills it now.
      await this.boss.previewRedrive(name);
    }
    for (const [name, { cron, data }] of this.schedules) {
      await this.boss.schedule(name, cron, data, { tz: 'UTC', missed: 'once' });
    }
    if (!runWorkers) return;
    for (const [name, definition] of this.handlers) {
      const workerId = await this.boss.work(
        name,
        {
          localConcurrency: definition.concurrency ?? 1,
          ...(definition.groupConcurrency ? { groupConcurrency: definition.groupConcurrency } : {}),
          pollingIntervalSeconds: POLLING_SECONDS,
          notifyPollingIntervalSeconds: NOTIFY_BACKSTOP_SECONDS,
          batchSize: 1,
        },
        async (jobs: Job<object>[]) => {
          for (const job of jobs) {
            const log = this.options.logger.child({ job: name, jobId: job.id });
            log.debug('job started');
            try {
              await definition.handler(job.data, { retryCount: job.retryCount, last: job.retryCount >= (definition.retryLimit ?? 5) });
              log.debug('job done');
            } catch (err) {
              log.warn({ err }, 'job failed; pg-boss retries it');
              throw err;
            }
          }
        },
      );
      this.workerIds.set(name, workerId);
    }
  }

  /**
   * Sends job `name` with `data` on a cron expression (UTC), through pg-boss's schedules (kept in
   * the database: one job per occurrence whichever processes run; an occurrence missed while no
   * process ran is sent once on the next start). Applied at start; a schedule of the same name is replaced.
   */
  schedule<C extends JobCatalogue, N extends keyof C & string>(name: N, cron: string, data: C[N]): void {
    this.schedules.set(name, { cron, data });
  }

  async send<C extends JobCatalogue, N extends keyof C & string>(name: N, data: C[N], options: QueueSendOptions = {}): Promise<void> {
    const sendOptions: SendOptions = {};
    if (options.singletonKey) sendOptions.singletonKey = options.singletonKey;
    if (options.group) sendOptions.group = { id: options.group };
    if (options.startAfterSeconds) sendOptions.startAfter = options.startAfterSeconds;
    if (options.trx) sendOptions.db = fromKysely(options.trx);
    await this.boss.send(name, data, sendOptions);
    if (options.startAfterSeconds) this.wakeWhenDue(name, options.startAfterSeconds);
  }

  /**
   * NOTIFY announces a job when it is sent, not when a delayed one becomes due, so a delayed job
   * would wait for the next backstop poll (up to NOTIFY_BACKSTOP_SECONDS late: the tracker's 2 s
   * re-check of a processing project took up to 7 s). When this process works on the queue, its
   * worker is woken once the job is due. A wake that comes early (the database's clock is ahead)
   * finds nothing and the backstop poll still picks the job up.
   */
  private wakeWhenDue(name: string, seconds: number): void {
    const workerId = this.workerIds.get(name);
    if (!workerId) return;
    const timer = setTimeout(() => {
      this.wakeTimers.delete(timer);
      if (this.started) this.boss.notifyWorker(workerId);
    }, seconds * 1000 + WAKE_MARGIN_MS);
    timer.unref();
    this.wakeTimers.add(timer);
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    for (const timer of this.wakeTimers) clearTimeout(timer);
    this.wakeTimers.clear();
    await this.boss.stop({ graceful: true, timeout: 5000, close: true });
  }
}
