// Incremental hashes computed on worker threads, so that the main thread of the S3 endpoint does
// the I/O while another core hashes. The disk store computes each object's MD5 (its ETag) here:
// on this 2-core machine MD5 costs ~8 ms of CPU per 4 MiB against ~5 ms for the payload SHA-256
// the request verifier checks on the main thread, and moving the MD5 alone took 100 x 4 MiB
// uploads from ~0.51x to ~0.59x the bare sink; moving both hashes made it worse (0.40x: three busy
// threads on two cores, with the client's). bench/README.md, "Upload".
//
// A hash is a session pinned to one worker (its state lives there); the worker handles messages
// in order, so updates land before the digest. Each chunk is copied once into a transferable
// buffer: the caller keeps its chunk and passes it on unchanged. Workers are started on first use
// (at most HASH_WORKERS, round robin) and do not keep the process alive.
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/** Hash workers: one per core beyond the main thread's, at least one, at most four. */
export const HASH_WORKERS = Math.max(1, Math.min(4, os.availableParallelism() - 1));

// The worker, as CommonJS source (eval): no loader or build step needed to start it. It gets no
// execArgv of ours (a parent's --input-type=module would make it an ES module, --import tsx would
// load a loader it does not need).
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const sessions = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'start') sessions.set(m.id, createHash(m.algorithm));
  else if (m.op === 'update') sessions.get(m.id)?.update(new Uint8Array(m.data));
  else if (m.op === 'drop') sessions.delete(m.id);
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
}

const workers: (PoolWorker | undefined)[] = [];
let nextWorker = 0;
let nextId = 0;

function startWorker(index: number): PoolWorker {
  const entry: PoolWorker = { worker: new Worker(WORKER_SOURCE, { eval: true, execArgv: [] }), pending: new Map() };
  entry.worker.on('message', (m: { id: number; digest: Uint8Array | null }) => {
    const waiter = entry.pending.get(m.id);
    entry.pending.delete(m.id);
    if (entry.pending.size === 0) entry.worker.unref();
    if (!waiter) return;
    if (m.digest) waiter.resolve(Buffer.from(m.digest));
    else waiter.reject(new Error('hash session unknown to its worker'));
  });
  const fail = (err: Error) => {
    entry.failure ??= err;
    for (const waiter of entry.pending.values()) waiter.reject(err);
    entry.pending.clear();
    if (workers[index] === entry) workers[index] = undefined; // replaced on next use
  };
  entry.worker.on('error', fail);
  entry.worker.on('exit', (code) => fail(new Error(`hash worker exited (${code})`)));
  entry.worker.unref(); // after the listeners: adding a 'message' listener refs the worker again
  return entry;
}

function pickWorker(): PoolWorker {
  const index = nextWorker++ % HASH_WORKERS;
  return (workers[index] ??= startWorker(index));
}

export class OffThreadHash {
  private readonly entry = pickWorker();
  private readonly id = ++nextId;
  private finished = false;

  constructor(algorithm: 'md5' | 'sha256') {
    this.entry.worker.postMessage({ op: 'start', id: this.id, algorithm });
  }

  update(chunk: Uint8Array): void {
    if (this.finished || chunk.byteLength === 0) return;
    const copy = chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength) as ArrayBuffer;
    this.entry.worker.postMessage({ op: 'update', id: this.id, data: copy }, [copy]);
  }

  /** The digest of everything updated so far; the session ends. */
  digest(): Promise<Buffer> {
    this.finished = true;
    return new Promise((resolve, reject) => {
      if (this.entry.failure) return reject(this.entry.failure);
      // A digest awaited keeps the process alive (the worker is unref'd when none is).
      if (this.entry.pending.size === 0) this.entry.worker.ref();
      this.entry.pending.set(this.id, { resolve, reject });
      this.entry.worker.postMessage({ op: 'digest', id: this.id });
    });
  }

  /** Ends the session without a digest (an upload that failed or was aborted). */
  drop(): void {
    if (this.finished) return;
    this.finished = true;
    this.entry.worker.postMessage({ op: 'drop', id: this.id });
  }
}
