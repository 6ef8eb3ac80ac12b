// Errors in the format of CONTRACT.md section 1 (Django REST Framework's): 400 bodies map field
// names to lists of messages; every other error is {detail, code}. Services throw these; one
// error handler (http-server.ts) turns them, and everything else, into responses.

export type FieldErrors = { [field: string]: string[] | FieldErrors };

/** Adds `message` under `path` (nested fields as nested objects; no path: `non_field_errors`). */
export function addFieldError(target: FieldErrors, path: string[], message: string): void {
  const full = path.length === 0 ? ['non_field_errors'] : path;
  let node = target;
  for (const segment of full.slice(0, -1)) {
    const next = node[segment];
    if (!next || Array.isArray(next)) node[segment] = {};
    node = node[segment] as FieldErrors;
  }
  const leaf = full[full.length - 1];
  const list = Array.isArray(node[leaf]) ? (node[leaf] as string[]) : [];
  if (!list.includes(message)) list.push(message);
  node[leaf] = list;
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }

  body(): object {
    return { detail: this.detail, code: this.code };
  }
}

export class ValidationError extends ApiError {
  constructor(readonly fields: FieldErrors) {
    super(400, 'invalid', 'Invalid input.');
    this.name = 'ValidationError';
  }

  override body(): object {
    return this.fields;
  }

  /** A 400 about one field: `ValidationError.field('image_keys', 'At most 500 keys per call.')`. */
  static field(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

export const notAuthenticated = (detail = 'Authentication credentials were not provided.') => new ApiError(401, 'not_authenticated', detail);
export const authenticationFailed = (detail = 'Incorrect authentication credentials.') => new ApiError(401, 'authentication_failed', detail);
export const tokenExpired = () => new ApiError(401, 'token_expired', 'The token has expired; request a new one.');
export const invalidApiKey = (detail = 'Missing or invalid X-Api-Key header.') => new ApiError(401, 'invalid_api_key', detail);
export const permissionDenied = (detail = 'You do not have permission to perform this action.') => new ApiError(403, 'permission_denied', detail);
export const insufficientAllowance = (detail: string) => new ApiError(403, 'insufficient_allowance', detail);
export const notFound = (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found.`);
export const conflict = (detail: string) => new ApiError(409, 'conflict', detail);
export const unavailable = (detail: string) => new ApiError(503, 'unavailable', detail);
