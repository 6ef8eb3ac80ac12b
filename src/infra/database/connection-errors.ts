// Which errors mean "the database cannot be reached right now" rather than "this request or this
// job is wrong". The HTTP error handler answers them 503 `unavailable` with Retry-After (the client
// may simply try again), and the processing jobs rethrow them so that pg-boss retries the step
// instead of recording a processing failure. The pool has already dropped the dead connection by
// then (database.ts), so the next attempt gets a fresh one.

/** SQLSTATEs of a lost or refused connection: class 08, admin/crash shutdown, cannot connect now, too many clients. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket-level failures while connecting to or talking with the server. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** Messages of node-postgres (pg, pg-pool) for a connection that is gone or could not be made. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/, // "... unexpectedly", "... due to connection timeout"
  /timeout exceeded when trying to connect/,
  /Client has encountered a connection error and is not queryable/,
  /Client was closed and is not queryable/,
  /Cannot use a pool after calling end on the pool/, // only while shutting down
];

/** True for an error (or an error it wraps, through `cause` or an AggregateError) caused by a lost or unreachable database. */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const { code, message, cause, errors } = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('08') && code.length === 5) return true; // connection_exception class
    if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code)) return true;
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
  if (cause && isDatabaseUnavailable(cause, depth + 1)) return true;
  return Array.isArray(errors) && errors.some((e) => isDatabaseUnavailable(e, depth + 1));
}

/** Seconds a client is asked to wait (Retry-After) before retrying a request the database could not serve. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;
