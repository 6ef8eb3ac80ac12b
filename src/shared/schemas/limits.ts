// The one way both APIs declare ids, integers, numbers, texts and free JSON in request schemas,
// with the bounds documented in docs/inspection-service.md and docs/cloud-service.md ("Limits").
//
// Why the `allOf` re-check: the HTTP server's Ajv coerces types (query strings and forms need it),
// and it coerces the strings "Infinity", "-Infinity" and "1e400" to ±Infinity; it then skips
// minimum/maximum for a number that is not finite, so Infinity reached PostgreSQL ("invalid input
// syntax for type integer", a 500). Checking the type once more after coercion rejects it as
// "Must be integer." / "Must be number." (the same message as any other wrong type).
import { Type, type TSchema } from 'typebox';

/** Largest PostgreSQL `integer` (int4): every record id. */
export const INT4_MAX = 2147483647;

/** Canonical decimal id in a path: no sign, no leading zero, no exponent, no blank, at most 10 digits. */
export const CANONICAL_ID = /^(0|[1-9][0-9]{0,9})$/;

export const LIMITS = {
  /** Names, types, short labels (spec: 1..255 characters). */
  name: 255,
  /** Descriptions, remarks. */
  text: 10_000,
  /** URLs. */
  url: 2048,
  /** Storage keys. */
  key: 1024,
  /** Codes and enumerated words (grant_type, engine, point_type...). */
  code: 64,
  /** Free JSON (measurement `properties` beyond the known keys, `extension`). */
  freeKeys: 100,
  freeItems: 1000,
  freeString: 10_000,
  /** Levels of nesting inside a free object (its own keys are level 1). */
  freeDepth: 4,
} as const;

interface IntOptions {
  minimum?: number;
  maximum?: number;
  description?: string;
  default?: number;
}

/** An integer within int4 unless narrowed; a coerced "Infinity" is a 400. */
export function Int(options: IntOptions = {}) {
  return Type.Integer({ minimum: -INT4_MAX - 1, maximum: INT4_MAX, ...options, allOf: [{ type: 'integer' }] });
}

/** A record id: 1..2147483647. */
export function Id(options: Omit<IntOptions, 'minimum' | 'maximum'> = {}) {
  return Int({ minimum: 1, maximum: INT4_MAX, ...options });
}

interface NumOptions {
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  description?: string;
}

/** A finite number; a coerced "Infinity" is a 400. */
export function Num(options: NumOptions = {}) {
  return Type.Number({ ...options, allOf: [{ type: 'number' }] });
}

/** `{id}` of every path of both services. The input guard answers 404 for a non-canonical id. */
export const IdParams = Type.Object({ id: Id() });

/** A JSON value inside a free object: strings, arrays and objects bounded, nesting bounded. */
function freeValue(depth: number): TSchema {
  const containers = depth > 1;
  return Type.Unsafe<unknown>({
    type: ['string', 'number', 'boolean', 'null', ...(containers ? ['array', 'object'] : [])],
    maxLength: LIMITS.freeString,
    ...(containers
      ? { maxItems: LIMITS.freeItems, maxProperties: LIMITS.freeKeys, items: freeValue(depth - 1), additionalProperties: freeValue(depth - 1) }
      : {}),
  });
}

/** The schema of a free object's values (at most LIMITS.freeDepth levels below it). */
export const FreeValue = freeValue(LIMITS.freeDepth);

/** A free object (`extension`): at most 100 keys, values bounded by FreeValue. */
export function FreeObject(options: { description?: string } = {}) {
  return Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    maxProperties: LIMITS.freeKeys,
    additionalProperties: FreeValue,
    ...options,
  });
}
