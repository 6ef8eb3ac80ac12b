// Nullable primitives for request schemas. The HTTP server's Ajv coerces types, and an
// `anyOf: [number, null]` would turn a null into 0 (a string branch into "", a boolean into
// false) before the null branch is tried. `type: [T, 'null']` keeps null as null.
import { Type, type Static, type TSchema } from 'typebox';

export function Nullable<T extends TSchema>(schema: T) {
  const { type, allOf } = schema as unknown as { type: string; allOf?: { type?: string }[] };
  // The type re-check of shared/schemas/limits.ts (Int, Num) must let null through too.
  const recheck = allOf?.map((part) => (part.type ? { ...part, type: [part.type, 'null'] } : part));
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...(recheck ? { allOf: recheck } : {}) });
}
