// One job on a worker thread, one reply: the file's bytes handed over (transferred, not copied,
// when they own their whole ArrayBuffer: the caller's Buffer is then detached; a slice of Node's
// pool for small buffers is copied into one of its own first), the first message as the answer,
// and the worker terminated once it has answered, failed, exited or run past the time limit.
// Used where CPU-heavy work on a file would otherwise stall the event loop: the mesh loader
// (mesh/mesh-loader.ts) and the antenna detection (inventory/detection-runner.ts). Each caller
// words the failures for its own readers from WorkerOnceError's `kind` and message.
import { Worker } from 'node:worker_threads';

export type WorkerFailure = 'start' | 'timeout' | 'error' | 'exit';

export class WorkerOnceError extends Error {
  constructor(
    readonly kind: WorkerFailure,
    message: string,
  ) {
    super(message);
  }
}

/** `bytes` owning their whole ArrayBuffer, so they can be transferred (copied when they do not). */
export function transferableBytes(data: Buffer): Uint8Array<ArrayBuffer> {
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && !(data.buffer instanceof SharedArrayBuffer);
  return whole ? new Uint8Array(data.buffer as ArrayBuffer) : new Uint8Array(data);
}

/**
 * Starts `entry` with `workerData` (transferring `transfer`), resolves with its first message;
 * rejects with WorkerOnceError: 'start' (did not start), 'timeout', 'error' (threw), 'exit' (exited
 * without answering, e.g. past its heap limit).
 */
export function runWorkerOnce<Reply>(entry: URL, workerData: unknown, transfer: ArrayBuffer[], timeoutMs: number): Promise<Reply> {
  return new Promise<Reply>((resolve, reject) => {
    let worker: Worker;
    try {
      worker = new Worker(entry, { workerData, transferList: transfer });
    } catch (err) {
      reject(new WorkerOnceError('start', err instanceof Error ? err.message : String(err)));
      return;
    }
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(() => settle(() => reject(new WorkerOnceError('timeout', `no answer within ${Math.round(timeoutMs / 1000)} s`))), timeoutMs);
    worker.once('message', (reply: Reply) => settle(() => resolve(reply)));
    worker.once('error', (err) => settle(() => reject(new WorkerOnceError('error', err.message))));
    worker.once('exit', (code) => settle(() => reject(new WorkerOnceError('exit', `exited with code ${code}`))));
  });
}
