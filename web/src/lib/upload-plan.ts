// The rules of the Upload page, framework-free (unit-tested in test/web-upload-plan.test.ts):
// which dropped files are photos, the object key each gets under the credentials' prefix, how a
// file is split into parts, which failures are retried and after how long, progress and time
// left, and the batches of keys for register_images.
import { allowanceAmount, allowanceWords } from './plain-words.ts';

export const MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Which files: photos only

export const IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'tif', 'tiff', 'dng'] as const;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/tiff', 'image/x-adobe-dng', 'image/dng'];
// Files that operating systems and cameras leave in folders; skipped without fuss.
const SYSTEM_FILES = /^(\.ds_store|thumbs\.db|desktop\.ini|\._.*)$/i;

export interface Candidate {
  name: string;
  size: number;
  /** MIME type as the browser guessed it ('' when unknown). */
  type: string;
  /** Path inside a dropped folder ("flight-1/DJI_0001.JPG"); the name alone otherwise. */
  relativePath?: string;
}

export interface Skipped<T> {
  file: T;
  reason: string;
}

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** Why a file is not uploaded, or undefined when it is a photo we take. */
export function skipReason(file: Candidate): string | undefined {
  if (SYSTEM_FILES.test(file.name)) return 'a system file, not a photo';
  const ext = extensionOf(file.name);
  const known = (IMAGE_EXTENSIONS as readonly string[]).includes(ext);
  if (!known && !IMAGE_TYPES.includes(file.type.toLowerCase())) {
    return `not a photo (${ext ? `.${ext}` : file.type || 'unknown type'}): only JPEG, PNG, TIFF and DNG files are uploaded`;
  }
  if (file.size === 0) return 'the file is empty';
  return undefined;
}

export function selectImages<T extends Candidate>(files: readonly T[]): { accepted: T[]; skipped: Skipped<T>[] } {
  const accepted: T[] = [];
  const skipped: Skipped<T>[] = [];
  for (const file of files) {
    const reason = skipReason(file);
    if (reason) skipped.push({ file, reason });
    else accepted.push(file);
  }
  return { accepted, skipped };
}

// ---------------------------------------------------------------------------------------------
// Object keys

const MAX_SEGMENT = 120;

/** One path segment made safe for a key: letters, digits, '.', '_', '-'; no dot-only names. */
export function safeSegment(segment: string): string {
  const cleaned = segment
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents dropped: "é" → "e"
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^[._]+/, '')
    .replace(/_+$/, '');
  if (cleaned.length <= MAX_SEGMENT) return cleaned;
  const ext = extensionOf(cleaned);
  return ext && ext.length < 10 ? `${cleaned.slice(0, MAX_SEGMENT - ext.length - 1)}.${ext}` : cleaned.slice(0, MAX_SEGMENT);
}

/** The key's path below the prefix: folder drops keep their relative path, segment by segment. */
export function relativeKey(file: Pick<Candidate, 'name' | 'relativePath'>): string {
  const path = file.relativePath && file.relativePath.length > 0 ? file.relativePath : file.name;
  const segments = path
    .split(/[\\/]+/)
    .filter((s) => s !== '' && s !== '.' && s !== '..')
    .map(safeSegment)
    .filter((s) => s !== '');
  if (segments.length === 0) return `photo.${extensionOf(file.name) || 'jpg'}`;
  return segments.join('/');
}

/**
 * The object key for each file, in order, under `prefix` (the credentials' `key`, ending in
 * "/"). Keys already `taken` (uploaded earlier in this session) and earlier files of the same
 * call are not reused: "a.jpg", "a-2.jpg", "a-3.jpg". Case-insensitive, so that two names that
 * differ only by case stay distinct on case-insensitive file systems downloading the inputs.
 */
export function objectKeys(prefix: string, files: readonly Pick<Candidate, 'name' | 'relativePath'>[], taken: Iterable<string> = []): string[] {
  const used = new Set<string>();
  for (const key of taken) used.add(key.toLowerCase());
  return files.map((file) => {
    const rel = relativeKey(file);
    const dot = rel.lastIndexOf('.');
    const slash = rel.lastIndexOf('/');
    const [stem, ext] = dot > slash + 1 ? [rel.slice(0, dot), rel.slice(dot)] : [rel, ''];
    let key = `${prefix}${rel}`;
    for (let n = 2; used.has(key.toLowerCase()); n++) key = `${prefix}${stem}-${n}${ext}`;
    used.add(key.toLowerCase());
    return key;
  });
}

// ---------------------------------------------------------------------------------------------
// Parts

export interface PartPlan {
  number: number;
  start: number;
  /** Exclusive. */
  end: number;
}

export type UploadPlan = { kind: 'single'; size: number } | { kind: 'multipart'; size: number; partSize: number; parts: PartPlan[] };

export const SINGLE_PUT_MAX = 16 * MiB;
export const MIN_PART_SIZE = 5 * MiB;
export const MAX_PARTS = 10_000;

/**
 * One PutObject up to `singleMax`; above, a multipart upload whose parts are `partSize` (at least
 * S3's 5 MiB minimum, and large enough to stay within 10,000 parts; rounded up to a MiB).
 */
export function planUpload(size: number, options: { singleMax?: number; partSize?: number } = {}): UploadPlan {
  const singleMax = options.singleMax ?? SINGLE_PUT_MAX;
  if (size <= singleMax) return { kind: 'single', size };
  const wanted = Math.max(options.partSize ?? 8 * MiB, MIN_PART_SIZE, Math.ceil(size / MAX_PARTS));
  const partSize = Math.ceil(wanted / MiB) * MiB;
  const parts: PartPlan[] = [];
  for (let start = 0, number = 1; start < size; start += partSize, number++) {
    parts.push({ number, start, end: Math.min(size, start + partSize) });
  }
  return { kind: 'multipart', size, partSize, parts };
}

// ---------------------------------------------------------------------------------------------
// Retries

export const MAX_ATTEMPTS = 5;

/** What the page knows of a failed request (an S3 SDK error, a network error). */
export interface FailureInfo {
  /** Error name/code: 'AccessDenied', 'RequestTimeout', 'TypeError', 'NetworkError'… */
  name?: string;
  /** HTTP status; undefined when no answer came (network failure). */
  status?: number;
}

export type RetryDecision = { retry: false; reason: string } | { retry: true; refreshCredentials: boolean; delayMs: number };

const RETRYABLE_CODES = new Set(['RequestTimeout', 'RequestTimeoutException', 'SlowDown', 'InternalError', 'ServiceUnavailable', 'Throttling', 'ThrottlingException', 'IncompleteBody', 'TimeoutError', 'NetworkError', 'TypeError']);
const CREDENTIAL_CODES = new Set(['ExpiredToken', 'TokenRefreshRequired', 'RequestTimeTooSkewed', 'InvalidAccessKeyId']);

/**
 * Whether to try a failed PUT/part again. Retried: no answer at all (network), 5xx, 429 and
 * S3's transient codes; expired or rejected temporary credentials once refreshed. Not retried:
 * AccessDenied (the inspection no longer takes uploads), QuotaExceeded, other 4xx.
 */
export function retryDecision(failure: FailureInfo, attempt: number, options: { maxAttempts?: number; random?: () => number } = {}): RetryDecision {
  const maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
  const name = failure.name ?? '';
  const status = failure.status;
  let retryable: boolean;
  let refreshCredentials = false;
  if (name === 'AbortError') return { retry: false, reason: 'cancelled' };
  if (CREDENTIAL_CODES.has(name)) {
    retryable = true;
    refreshCredentials = true;
  } else if (status === undefined) retryable = true;
  else retryable = status >= 500 || status === 429 || RETRYABLE_CODES.has(name);
  if (!retryable) return { retry: false, reason: name || `HTTP ${status}` };
  if (attempt >= maxAttempts) return { retry: false, reason: `${name || `HTTP ${status ?? 'error'}`} after ${attempt} attempts` };
  return { retry: true, refreshCredentials, delayMs: backoffMs(attempt, options.random) };
}

/**
 * Delay before attempt `attempt + 1`: exponential from 500 ms, at most 20 s, with jitter (50 to
 * 100 % of the step) so that parallel parts failing together do not retry in lockstep.
 */
export function backoffMs(attempt: number, random: () => number = Math.random, base = 500, max = 20_000): number {
  const step = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(step * (0.5 + random() / 2));
}

// ---------------------------------------------------------------------------------------------
// Progress

export interface ProgressSnapshot {
  doneBytes: number;
  totalBytes: number;
  /** 0..1 */
  fraction: number;
  /** Bytes per second, moving average over the last `windowMs`; undefined until measurable. */
  bytesPerSecond: number | undefined;
  /** Seconds left at that speed; undefined when unknown. */
  secondsLeft: number | undefined;
  /** Bytes per second over the whole run (first to last byte of the files added since idle). */
  averageBytesPerSecond: number | undefined;
}

/**
 * Bytes done per file and in total. Speed is the bytes sent over a sliding window (default 5 s)
 * divided by its duration, so it follows changes in the link without jumping at every event.
 */
export class ProgressTracker {
  private readonly loaded = new Map<string, number>();
  private readonly sizes = new Map<string, number>();
  private samples: { at: number; sent: number }[] = [];
  /** Bytes sent since the start, counting bytes re-sent by retries (what the link carried). */
  private sent = 0;
  /** The current run: from the first progress after an idle moment to the last one. */
  private run: { startAt: number; startSent: number; lastAt: number } | undefined;

  constructor(private readonly windowMs = 5000) {}

  addFile(id: string, size: number): void {
    // Files added once everything else is done start a new run (the idle gap is not averaged).
    if (this.allDone()) this.run = undefined;
    this.sizes.set(id, size);
    if (!this.loaded.has(id)) this.loaded.set(id, 0);
  }

  removeFile(id: string): void {
    this.sizes.delete(id);
    this.loaded.delete(id);
  }

  /** The file's bytes done now (may go down when a part is retried). */
  update(id: string, bytesDone: number, now: number): void {
    const size = this.sizes.get(id) ?? 0;
    const next = Math.max(0, Math.min(size, bytesDone));
    const before = this.loaded.get(id) ?? 0;
    this.run ??= { startAt: now, startSent: this.sent, lastAt: now };
    if (next > before) this.sent += next - before;
    this.loaded.set(id, next);
    this.run.lastAt = now;
    this.sample(now);
  }

  private allDone(): boolean {
    for (const [id, size] of this.sizes) if ((this.loaded.get(id) ?? 0) < size) return false;
    return true;
  }

  fileFraction(id: string): number {
    const size = this.sizes.get(id) ?? 0;
    return size === 0 ? 1 : (this.loaded.get(id) ?? 0) / size;
  }

  private sample(now: number): void {
    this.samples.push({ at: now, sent: this.sent });
    // Keep one sample older than the window, so the window is always fully covered.
    while (this.samples.length > 2 && this.samples[1].at <= now - this.windowMs) this.samples.shift();
  }

  snapshot(now: number): ProgressSnapshot {
    let doneBytes = 0;
    let totalBytes = 0;
    for (const [id, size] of this.sizes) {
      totalBytes += size;
      doneBytes += this.loaded.get(id) ?? 0;
    }
    const first = this.samples[0];
    const elapsed = first ? now - first.at : 0;
    const bytesPerSecond = first && elapsed >= 250 ? ((this.sent - first.sent) * 1000) / elapsed : undefined;
    const remaining = totalBytes - doneBytes;
    const secondsLeft = remaining === 0 ? 0 : bytesPerSecond ? remaining / bytesPerSecond : undefined;
    const run = this.run;
    const runMs = run ? run.lastAt - run.startAt : 0;
    const averageBytesPerSecond = run && runMs > 0 ? ((this.sent - run.startSent) * 1000) / runMs : undefined;
    return { doneBytes, totalBytes, fraction: totalBytes === 0 ? 0 : doneBytes / totalBytes, bytesPerSecond, secondsLeft, averageBytesPerSecond };
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export function formatSpeed(bytesPerSecond: number | undefined): string {
  if (bytesPerSecond === undefined) return '–';
  return `${(bytesPerSecond / MiB).toFixed(1)} MiB/s`;
}

export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return 'estimating…';
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

// ---------------------------------------------------------------------------------------------
// Registration

/** register_images takes at most 500 keys per call (spec limit). */
export const REGISTER_BATCH = 500;

export function batches<T>(items: readonly T[], size = REGISTER_BATCH): T[][] {
  if (size < 1) throw new RangeError('batch size must be at least 1');
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Processing cost

export interface Balance {
  allowance_type: string;
  balance: number;
}

export interface Spend {
  code: 'projects' | 'tower_inventory';
  label: string;
  amount: number;
  balance: number;
}

/**
 * What starting processing spends, as the server does it (InspectionService.process): 1 Projects
 * unit, and 1 Tower inventory unit when the inspection asks for `detect_antennas` (the automatic
 * antenna detection).
 */
export function processingCost(parameters: Record<string, unknown> | null | undefined, balances: readonly Balance[]): { spends: Spend[]; blockedBy: string | undefined } {
  const balanceOf = (code: string) => balances.find((b) => b.allowance_type === code)?.balance ?? 0;
  const spends: Spend[] = [{ code: 'projects', label: allowanceWords('projects').name, amount: 1, balance: balanceOf('projects') }];
  if (parameters?.detect_antennas === true) spends.push({ code: 'tower_inventory', label: allowanceWords('tower_inventory').name, amount: 1, balance: balanceOf('tower_inventory') });
  const short = spends.find((s) => s.balance < s.amount);
  const blockedBy = short ? `Not enough allowance: processing needs ${allowanceAmount(short.code, short.amount)} and ${short.balance} ${short.balance === 1 ? 'is' : 'are'} left. Ask your administrator for more.` : undefined;
  return { spends, blockedBy };
}
