// Errors of the inspection API as the console shows them. The API answers CONTRACT.md's format:
// 400 `{"field": ["message"], "non_field_errors": [...]}` (nested fields as nested objects) and
// every other error `{"detail", "code"}`. Framework-free so unit tests reach it without a browser.

export type FieldErrors = Record<string, string[]>;

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    /** Messages per field, nested fields joined with dots (`data.coords_2d`); `''` for the form. */
    readonly fieldErrors: FieldErrors,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ApiProblem';
  }

  /** The messages for one field (and its nested fields), for display next to it. */
  forField(field: string): string[] {
    return Object.entries(this.fieldErrors)
      .filter(([name]) => name === field || name.startsWith(`${field}.`))
      .flatMap(([, messages]) => messages);
  }
}

/** An ApiProblem from a status and whatever body came back (JSON, text or nothing). */
export function problemFrom(status: number, body: unknown): ApiProblem {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    if (typeof record.detail === 'string') {
      return new ApiProblem(status, {}, typeof record.code === 'string' ? record.code : undefined, record.detail);
    }
    const fieldErrors: FieldErrors = {};
    flatten(record, '', fieldErrors);
    const form = fieldErrors.non_field_errors ?? [];
    const first = Object.entries(fieldErrors)[0];
    const message = form[0] ?? (first ? `${first[0]}: ${first[1][0]}` : `The request failed (${status}).`);
    return new ApiProblem(status, fieldErrors, undefined, message);
  }
  if (status === 0) return new ApiProblem(0, {}, 'network', 'The server cannot be reached. Check your connection and try again.');
  return new ApiProblem(status, {}, undefined, typeof body === 'string' && body.trim() ? body.trim().slice(0, 300) : `The request failed (${status}).`);
}

function flatten(value: Record<string, unknown>, prefix: string, out: FieldErrors): void {
  for (const [key, inner] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (Array.isArray(inner)) {
      const messages = inner.filter((m): m is string => typeof m === 'string');
      if (messages.length) out[name] = messages;
      inner.forEach((item, index) => {
        if (item && typeof item === 'object') flatten(item as Record<string, unknown>, `${name}.${index}`, out);
      });
    } else if (inner && typeof inner === 'object') {
      flatten(inner as Record<string, unknown>, name, out);
    } else if (typeof inner === 'string') {
      out[name] = [inner];
    }
  }
}
