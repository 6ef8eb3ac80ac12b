// The job queue (infra/jobs/job-queue.ts) on this run's database: every queue is NOTIFY-enabled,
// also one made before NOTIFY was used, and a job sent runnable at once is picked up on the
// NOTIFY, not at the next backstop poll (NOTIFY_BACKSTOP_SECONDS apart); a delayed job is picked
// up once due, not at the first backstop poll after that.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { sql } from 'kysely';
import { openTestDatabase } from './helpers/test-system.ts';
import type { Database } from '../src/infra/database/database.ts';
import { JobQueue, NOTIFY_BACKSTOP_SECONDS } from '../src/infra/jobs/job-queue.ts';

type Catalogue = { 'test.echo': { n: number } };

describe('job queue', () => {
  let database: Database;
  const logger = pino({ level: 'silent' });
  before(async () => {
    database = await openTestDatabase('job-queue');
  });
  after(() => database.close());

  it('wakes its workers by NOTIFY, on queues made before it too', async () => {
    // A queue as an earlier version made it: without notify.
    const earlier = new JobQueue(database, { heartbeatSeconds: 10, logger });
    earlier.register<Catalogue>({ 'test.echo': { handler: async () => {} } });
    await earlier.start(false);
    await sql`update pgboss.queue set notify = false where name = 'test.echo'`.execute(database.db);
    await earlier.stop();

    const handled: { n: number; at: number }[] = [];
    const queue = new JobQueue(database, { heartbeatSeconds: 10, logger });
    queue.register<Catalogue>({ 'test.echo': { handler: async ({ n }) => void handled.push({ n, at: performance.now() }) } });
    await queue.start(true);
    try {
      const { rows } = await sql<{ notify: boolean }>`select notify from pgboss.queue where name = 'test.echo'`.execute(database.db);
      assert.deepEqual(rows, [{ notify: true }]);
      // Three jobs one after the other: by polling alone each would wait up to the backstop.
      const waits: number[] = [];
      for (let n = 1; n <= 3; n++) {
        const sent = performance.now();
        await queue.send<Catalogue, 'test.echo'>('test.echo', { n });
        while (handled.length < n) await new Promise((resolve) => setTimeout(resolve, 10));
        waits.push(handled[n - 1].at - sent);
      }
      console.log(`# picked up after ${waits.map((w) => `${Math.round(w)} ms`).join(', ')} (backstop poll every ${NOTIFY_BACKSTOP_SECONDS} s)`);
      assert.ok(
        waits.reduce((a, b) => a + b, 0) < NOTIFY_BACKSTOP_SECONDS * 1000,
        `three jobs picked up in ${waits.map(Math.round).join(' + ')} ms: not woken by NOTIFY`,
      );
    } finally {
      await queue.stop();
    }
  });

  it('wakes its own worker when a delayed job becomes due', async () => {
    const handled: { n: number; at: number }[] = [];
    const queue = new JobQueue(database, { heartbeatSeconds: 10, logger });
    queue.register<Catalogue>({ 'test.echo': { handler: async ({ n }) => void handled.push({ n, at: performance.now() }) } });
    await queue.start(true);
    try {
      const delaySeconds = 1;
      const lateness: number[] = [];
      for (let n = 1; n <= 3; n++) {
        const sent = performance.now();
        await queue.send<Catalogue, 'test.echo'>('test.echo', { n }, { startAfterSeconds: delaySeconds });
        while (handled.length < n) await new Promise((resolve) => setTimeout(resolve, 10));
        lateness.push(handled[n - 1].at - sent - delaySeconds * 1000);
      }
      console.log(`# delayed jobs picked up ${lateness.map((l) => `${Math.round(l)} ms`).join(', ')} after they were due (backstop poll every ${NOTIFY_BACKSTOP_SECONDS} s)`);
      // Not before it is due (pg-boss keeps the delay; a little clock granularity allowed).
      for (const late of lateness) assert.ok(late > -100, `a job delayed by ${delaySeconds} s ran ${Math.round(-late)} ms early`);
      // By the backstop poll alone, three would be ~7 s late in all (each 0-5 s).
      assert.ok(
        lateness.reduce((a, b) => a + b, 0) < 1500,
        `three delayed jobs ${lateness.map(Math.round).join(' + ')} ms late: not woken when due`,
      );
    } finally {
      await queue.stop();
    }
  });
});
