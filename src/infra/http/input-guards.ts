// Guards every route of both services against input that the schemas let through but the
// database cannot hold or that does not name a record:
// - path ids: only canonical decimal ids ("4", not "0x4", "4e0", "+4", "4.0", "04", " 4") within
//   the schema's range address a record; anything else is 404 `not_found`, as an unknown id is
//   (Ajv's coercion alone would turn "0x10" into 16). String path parameters are held to their
//   schema's length and pattern the same way.
// - strings anywhere in the body or query, and object keys: PostgreSQL text and jsonb cannot hold
//   NUL (U+0000) nor unpaired UTF-16 surrogates (jsonb rejects "\ud800", text would store U+FFFD
//   instead): 400 naming the field, nested fields nested (the error handler's format), with
//   Django REST Framework's messages.
// - nesting deeper than MAX_DEPTH levels: 400 (free objects have their own, lower bound).
// Strings are checked after validation (preHandler) so that form and multipart bodies, parsed by
// a later preValidation hook, are covered too.
import type { FastifyRequest } from 'fastify';
import type { HttpServer } from './http-server.ts';
import { addFieldError, ApiError, ValidationError, type FieldErrors } from './errors.ts';
import { CANONICAL_ID, INT4_MAX } from '../../shared/schemas/limits.ts';

export const MAX_DEPTH = 32;

export function registerInputGuards(app: HttpServer): void {
  // Callback hooks, not async ones: they run on every request and never wait for anything.
  app.addHook('preValidation', (request, _reply, done) => done(failureOf(() => checkPathParams(request))));
  app.addHook('preHandler', (request, _reply, done) => done(failureOf(() => checkStorable(request))));
}

function failureOf(check: () => void): Error | undefined {
  try {
    check();
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

interface ParamSchema {
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

const notFound = () => new ApiError(404, 'not_found', 'Not found.');

type ParamCheck = (raw: string) => boolean;

// The checks of a route's path parameters, made once per params schema (not on every request:
// bench/README.md, "API").
const paramChecks = new WeakMap<object, [string, ParamCheck][]>();

function checksOf(properties: Record<string, ParamSchema>): [string, ParamCheck][] {
  let checks = paramChecks.get(properties);
  if (checks) return checks;
  checks = [];
  for (const [name, rule] of Object.entries(properties)) {
    const types = [rule.type].flat();
    if (types.includes('integer')) {
      const max = rule.maximum ?? INT4_MAX;
      const min = rule.minimum ?? 0;
      checks.push([name, (raw) => CANONICAL_ID.test(raw) && Number(raw) <= max && Number(raw) >= min]);
    } else if (types.includes('string')) {
      const pattern = rule.pattern === undefined ? undefined : new RegExp(rule.pattern, 'u');
      checks.push([
        name,
        (raw) =>
          !(rule.maxLength !== undefined && raw.length > rule.maxLength) &&
          !(rule.minLength !== undefined && raw.length < rule.minLength) &&
          !(pattern !== undefined && !pattern.test(raw)) &&
          !unstorable(raw),
      ]);
    }
  }
  paramChecks.set(properties, checks);
  return checks;
}

function checkPathParams(request: FastifyRequest): void {
  const schema = request.routeOptions.schema?.params as { properties?: Record<string, ParamSchema> } | undefined;
  const params = request.params as Record<string, unknown> | undefined;
  if (!schema?.properties || !params) return;
  for (const [name, check] of checksOf(schema.properties)) {
    const raw = params[name];
    if (typeof raw === 'string' && !check(raw)) throw notFound();
  }
}

function checkStorable(request: FastifyRequest): void {
  const errors: FieldErrors = {};
  walk(request.body, [], 1, errors);
  walk(request.query, ['querystring'], 1, errors);
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

/** The DRF message for a string PostgreSQL cannot store, or undefined when it can. */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return 'Null characters are not allowed.';
  const lone = LONE_SURROGATE.exec(text);
  if (lone) return `Surrogate characters are not allowed: U+${lone[0].charCodeAt(0).toString(16).toUpperCase()}.`;
  return undefined;
}

// Without the `u` flag the pattern sees UTF-16 code units: a high surrogate not followed by a low
// one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function walk(value: unknown, path: string[], depth: number, errors: FieldErrors): void {
  if (typeof value === 'string') {
    const message = unstorable(value);
    if (message) addFieldError(errors, path, message);
    return;
  }
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return;
  if (depth > MAX_DEPTH) {
    addFieldError(errors, path, `Nesting deeper than ${MAX_DEPTH} levels is not allowed.`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, [...path, String(index)], depth + 1, errors));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const message = unstorable(key);
    if (message) {
      addFieldError(errors, path, message.replace('are not allowed', 'are not allowed in keys'));
      continue;
    }
    walk(item, [...path, key], depth + 1, errors);
  }
}

