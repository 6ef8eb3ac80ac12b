// A preValidation hook for routes whose body is optional or all-optional (PATCH, report): a
// missing or null body counts as `{}`, so the body schema stays a plain object and its field
// errors name the field.
import type { FastifyRequest } from 'fastify';

export async function emptyBodyAsObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
