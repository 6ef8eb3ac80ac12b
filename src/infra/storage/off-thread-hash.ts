// Incremental hashes computed on worker threads, so that the main thread of the S3 endpoint does
// the I/O while another core hashes. The disk store computes each object's MD5 (its ETag) here:
// on this 2-core machine MD5 costs ~8 ms of CPU per 4 MiB against ~5 ms for the payload SHA-256
// the request verifier checks on the main thread, and moving the MD5 alone took 100 x 4 MiB
// uploads from ~0.51x to ~0.59x the bare sink; moving both hashes made it worse (0.40x: three busy
// threads on two cores, with the client's). bench/README.md, "Upload".
//
// A hash is a session pinned to one worker (its state lives there); the worker handles messages
// in order, so updates land before the digest. Chunks are copied into slots, buffers of SLOT_BYTES
// that travel to the worker and back (transferred, not copied) and are reused: the caller keeps its
// chunk and passes it on unchanged, and at most SLOTS_PER_WORKER are out at once, so a worker that
// falls behind slows its callers down (update waits for a slot) instead of queueing their bodies in
// memory. (A first version transferred a fresh copy of every chunk: a 1 GiB multipart upload then
// grew the server by ~160 MB of queued and not yet collected copies, against ~30 MB without it.)
// Workers are started on first use (at most HASH_WORKERS, round robin) and keep the process alive
// only while they hold slots or owe digests. A worker with no session for IDLE_RELEASE_MS is
// terminated: a worker thread holds ~16 MB of resident memory (a V8 isolate and Node's own
// start-up), which a server that took one burst of uploads kept for the rest of its life; the next
// upload starts another (~30 ms).
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/** Hash workers: one per core beyond the main thread's, at least one, at most four. */
export const HASH_WORKERS = Math.max(1, Math.min(4, os.availableParallelism() - 1));
export const SLOT_BYTES = 64 * 1024;
/** Slots per worker: at most 4 MiB of chunks waiting for one worker. */
export const SLOTS_PER_WORKER = 64;
/** A worker with no open session for this long is terminated (started again on the next hash). */
export const IDLE_RELEASE_MS = 30_000;

// The worker, as CommonJS source (eval): no loader or build step needed to start it. It gets no
// execArgv of ours (a parent's --input-type=module would make it an ES module, --import tsx would
// load a loader it does not need). Every slot goes back to the main thread once hashed.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const sessions = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'start') sessions.set(m.id, createHash(m.algorithm));
  else if (m.op === 'update') {
    sessions.get(m.id)?.update(new Uint8Array(m.slot, 0, m.length));
    parentPort.postMessage({ slot: m.slot }, [m.slot]);
  } else if (m.op === 'drop') sessions.delete(m.id);
  else if (m.op === 'digest') {
    const hash = sessions.get(m.id);
    sessions.delete(m.id);
    parentPort.postMessage({ id: m.id, digest: hash ? hash.digest() : null });
  }
});
`;

interface PoolWorker {
  worker: Worker;
  /** Set when the worker failed or exited: its sessions are lost. */
  failure?: Error;
  pending: Map<number, { resolve: (digest: Buffer) => void; reject: (err: Error) => void }>;
  /** Slots back from the worker, ready for reuse. */
  free: ArrayBuffer[];
  /** Slots created (at most SLOTS_PER_WORKER); those not free are at the worker. */
  created: number;
  /** Updates waiting for a slot, first come first served. */
  waiting: (() => void)[];
  /** Sessions started and neither digested nor dropped. */
  open: number;
  /** Armed while no session is open (armIdleRelease). */
  idleTimer?: NodeJS.Timeout;
}

const workers: (PoolWorker | undefined)[] = [];
let nextWorker = 0;
let nextId = 0;
let idleReleaseMs = IDLE_RELEASE_MS;
let started = 0;

/** Workers started so far, and a shorter idle release (tests). */
export const hashWorkerPool = {
  get started(): number {
    return started;
  },
  get running(): number {
    return workers.filter(Boolean).length;
  },
  setIdleReleaseMs(ms: number): void {
    idleReleaseMs = ms;
  },
};

/** Whether the worker holds slots or owes digests. */
function holdsWork(entry: PoolWorker): boolean {
  return entry.pending.size > 0 || entry.free.length < entry.created;
}

/** Refs the worker while it holds work, so that the process waits for it. */
function updateRef(entry: PoolWorker): void {
  if (holdsWork(entry)) entry.worker.ref();
  else entry.worker.unref();
}

/** Session bookkeeping: a worker left with no open session is terminated after idleReleaseMs. */
function sessionOpened(entry: PoolWorker): void {
  entry.open++;
  clearTimeout(entry.idleTimer);
  entry.idleTimer = undefined;
}

function sessionClosed(entry: PoolWorker, index: number): void {
  entry.open--;
  if (entry.open === 0 && !entry.failure) armIdleRelease(entry, index);
}

function armIdleRelease(entry: PoolWorker, index: number): void {
  clearTimeout(entry.idleTimer);
  // A session opened meanwhile clears this timer (sessionOpened).
  entry.idleTimer = setTimeout(() => {
    // Slots of a dropped session still on their way back: try again after another idle period.
    if (holdsWork(entry)) return armIdleRelease(entry, index);
    if (workers[index] === entry) workers[index] = undefined;
    entry.failure ??= new Error('hash worker released when idle');
    void entry.worker.terminate();
  }, idleReleaseMs);
  entry.idleTimer.unref();
}

function startWorker(index: number): PoolWorker {
  started++;
  const entry: PoolWorker = { worker: new Worker(WORKER_SOURCE, { eval: true, execArgv: [] }), pending: new Map(), free: [], created: 0, waiting: [], open: 0 };
  entry.worker.on('message', (m: { slot?: ArrayBuffer; id?: number; digest?: Uint8Array | null }) => {
    if (m.slot) {
      entry.free.push(m.slot);
      entry.waiting.shift()?.();
    } else if (m.id !== undefined) {
      const waiter = entry.pending.get(m.id);
      entry.pending.delete(m.id);
      if (m.digest) waiter?.resolve(Buffer.from(m.digest));
      else waiter?.reject(new Error('hash session unknown to its worker'));
    }
    updateRef(entry);
  });
  const fail = (err: Error) => {
    entry.failure ??= err;
    for (const waiter of entry.pending.values()) waiter.reject(err);
    entry.pending.clear();
    for (const wake of entry.waiting.splice(0)) wake(); // they see the failure
    if (workers[index] === entry) workers[index] = undefined; // replaced on next use
  };
  entry.worker.on('error', fail);
  entry.worker.on('exit', (code) => fail(new Error(`hash worker exited (${code})`)));
  updateRef(entry); // after the listeners: adding a 'message' listener refs the worker again
  return entry;
}

function pickWorker(): { entry: PoolWorker; index: number } {
  const index = nextWorker++ % HASH_WORKERS;
  return { entry: (workers[index] ??= startWorker(index)), index };
}

async function takeSlot(entry: PoolWorker): Promise<ArrayBuffer | null> {
  for (;;) {
    if (entry.failure) return null;
    const slot = entry.free.pop();
    if (slot) return slot;
    if (entry.created < SLOTS_PER_WORKER) {
      entry.created++;
      return new ArrayBuffer(SLOT_BYTES);
    }
    await new Promise<void>((resolve) => entry.waiting.push(resolve));
  }
}

export class OffThreadHash {
  private readonly entry: PoolWorker;
  private readonly index: number;
  private readonly id = ++nextId;
  private finished = false;

  constructor(algorithm: 'md5' | 'sha256') {
    ({ entry: this.entry, index: this.index } = pickWorker());
    sessionOpened(this.entry);
    this.entry.worker.postMessage({ op: 'start', id: this.id, algorithm });
  }

  /**
   * Adds a chunk (copied: the caller may reuse it at once). Resolves when the chunk is handed to
   * the worker: wait for it before the next update of this hash. A worker that failed loses the
   * chunk, and the digest rejects.
   */
  async update(chunk: Uint8Array): Promise<void> {
    for (let offset = 0; offset < chunk.byteLength && !this.finished; offset += SLOT_BYTES) {
      const slot = await takeSlot(this.entry);
      if (!slot) return;
      const length = Math.min(SLOT_BYTES, chunk.byteLength - offset);
      new Uint8Array(slot).set(chunk.subarray(offset, offset + length));
      this.entry.worker.postMessage({ op: 'update', id: this.id, slot, length }, [slot]);
      updateRef(this.entry);
    }
  }

  /** The digest of everything updated so far; the session ends. */
  digest(): Promise<Buffer> {
    if (this.finished) return Promise.reject(new Error('hash session already ended'));
    this.finished = true;
    const digest = new Promise<Buffer>((resolve, reject) => {
      if (this.entry.failure) return reject(this.entry.failure);
      this.entry.pending.set(this.id, { resolve, reject });
      this.entry.worker.postMessage({ op: 'digest', id: this.id });
      updateRef(this.entry);
    });
    return digest.finally(() => sessionClosed(this.entry, this.index));
  }

  /** Ends the session without a digest (an upload that failed or was aborted). */
  drop(): void {
    if (this.finished) return;
    this.finished = true;
    this.entry.worker.postMessage({ op: 'drop', id: this.id });
    sessionClosed(this.entry, this.index);
  }
}
