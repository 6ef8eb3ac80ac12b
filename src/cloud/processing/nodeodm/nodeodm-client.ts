// A small client of the NodeODM HTTP API (shared/reference/nodeodm-api.md); ClusterODM answers the
// same API. Conventions it handles:
// - the optional token is the `token` query parameter of every call;
// - errors usually come back as HTTP 200 with `{"error": "..."}` (or `{"success": false}`): any
//   body with `error` is a refusal (NodeOdmRefusal), whatever the status code;
// - a 5xx, a non-JSON answer or a dropped connection is a transport failure (NodeOdmTransportError),
//   which the caller may retry.
import { openAsBlob } from 'node:fs';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class NodeOdmTransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeOdmTransportError';
  }
}

export class NodeOdmRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeOdmRefusal';
  }
}

export interface NodeOdmInfo {
  version?: string;
  taskQueueCount?: number;
  maxImages?: number | null;
  maxParallelTasks?: number;
  engine?: string;
  engineVersion?: string;
}

export interface NodeOdmOption {
  name: string;
  type: string;
  value: string;
  domain?: unknown;
  help?: string;
}

export interface NodeOdmTaskInfo {
  uuid: string;
  name?: string;
  processingTime?: number;
  status: { code: number; errorMessage?: string };
  imagesCount?: number;
  progress?: number;
}

const UPLOAD_TIMEOUT_MS = 30 * 60_000;

export const TASK_STATUS = { QUEUED: 10, RUNNING: 20, FAILED: 30, COMPLETED: 40, CANCELED: 50 } as const;

export class NodeOdmClient {
  private readonly base: string;

  constructor(
    baseUrl: string,
    private readonly token?: string,
    private readonly requestTimeoutMs = 120_000,
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
  }

  url(path: string, query: Record<string, string> = {}): string {
    const u = new URL(this.base + path);
    for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
    if (this.token) u.searchParams.set('token', this.token);
    return u.toString();
  }

  info(signal?: AbortSignal): Promise<NodeOdmInfo> {
    return this.json('GET', '/info', undefined, signal);
  }

  options(signal?: AbortSignal): Promise<NodeOdmOption[]> {
    return this.json('GET', '/options', undefined, signal);
  }

  /** Starts a multi-request upload under the UUID we chose (`set-uuid`), so that a retry is safe. */
  async init(uuid: string, fields: { name: string; options: { name: string; value: unknown }[]; skipPostProcessing?: boolean }, signal?: AbortSignal): Promise<{ uuid: string }> {
    const form = new FormData();
    form.append('name', fields.name);
    form.append('options', JSON.stringify(fields.options));
    if (fields.skipPostProcessing) form.append('skipPostProcessing', 'true');
    return this.json('POST', '/task/new/init', form, signal, { 'set-uuid': uuid });
  }

  /** Adds files (form field `images`) to the task being uploaded. */
  async upload(uuid: string, files: { path: string; name: string }[], signal?: AbortSignal): Promise<void> {
    const form = new FormData();
    for (const file of files) form.append('images', await openAsBlob(file.path), file.name);
    const body = await this.json<{ success?: boolean; error?: string }>('POST', `/task/new/upload/${encodeURIComponent(uuid)}`, form, signal, {}, {}, UPLOAD_TIMEOUT_MS);
    if (body.success !== true) throw new NodeOdmRefusal(body.error ?? 'upload not acknowledged');
  }

  commit(uuid: string, signal?: AbortSignal): Promise<{ uuid: string }> {
    return this.json('POST', `/task/new/commit/${encodeURIComponent(uuid)}`, new FormData(), signal);
  }

  taskInfo(uuid: string, signal?: AbortSignal): Promise<NodeOdmTaskInfo> {
    return this.json('GET', `/task/${encodeURIComponent(uuid)}/info`, undefined, signal);
  }

  /** The console output from `line` (negative: the last -line lines). */
  output(uuid: string, line: number, signal?: AbortSignal): Promise<string[]> {
    return this.json('GET', `/task/${encodeURIComponent(uuid)}/output`, undefined, signal, {}, { line: String(line) });
  }

  async command(action: 'cancel' | 'remove' | 'restart', uuid: string, signal?: AbortSignal): Promise<void> {
    const body = await this.json<{ success?: boolean; error?: string }>('POST', `/task/${action}`, new URLSearchParams({ uuid }), signal);
    if (body.success !== true) throw new NodeOdmRefusal(body.error ?? `${action} not acknowledged`);
  }

  /** Streams all.zip to a file. */
  async downloadAll(uuid: string, file: string, signal?: AbortSignal): Promise<void> {
    const response = await this.fetch('GET', `/task/${encodeURIComponent(uuid)}/download/all.zip`, undefined, signal, {}, {}, 0);
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('json')) {
      const body = (await response.json().catch(() => ({}))) as { error?: string };
      throw new NodeOdmRefusal(body.error ?? 'all.zip not available');
    }
    if (!response.ok || !response.body) throw new NodeOdmTransportError(`GET all.zip: HTTP ${response.status}`);
    await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), fs.createWriteStream(file), { signal });
  }

  private async json<T>(method: string, path: string, body: FormData | URLSearchParams | undefined, signal?: AbortSignal, headers: Record<string, string> = {}, query: Record<string, string> = {}, timeoutMs?: number): Promise<T> {
    const response = await this.fetch(method, path, body, signal, headers, query, timeoutMs);
    const text = await response.text().catch((err: Error) => {
      throw new NodeOdmTransportError(`${method} ${path}: ${err.message}`);
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new NodeOdmTransportError(`${method} ${path}: HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && 'error' in parsed && (parsed as { error: unknown }).error) {
      throw new NodeOdmRefusal(String((parsed as { error: unknown }).error));
    }
    if (response.status >= 500) throw new NodeOdmTransportError(`${method} ${path}: HTTP ${response.status}`);
    if (response.status >= 400) throw new NodeOdmRefusal(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 200)}`);
    return parsed as T;
  }

  /** timeoutMs: of the whole exchange, body included (0: none; default requestTimeoutMs). */
  private async fetch(method: string, path: string, body: FormData | URLSearchParams | undefined, signal?: AbortSignal, headers: Record<string, string> = {}, query: Record<string, string> = {}, timeoutMs = this.requestTimeoutMs): Promise<Response> {
    const signals = [signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter((s): s is AbortSignal => s !== undefined);
    try {
      return await fetch(this.url(path, query), { method, body, headers, signal: signals.length ? AbortSignal.any(signals) : undefined });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw new NodeOdmTransportError(`${method} ${path}: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`);
    }
  }
}
