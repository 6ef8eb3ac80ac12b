// Seeded bad input for test/fuzz-openapi.test.ts: a PRNG (mulberry32, so a failing run can be
// replayed with FUZZ_SEED), valid sample values from an OpenAPI schema, and the bad variants of
// a body, a query, a path id and a request as a whole (wrong types, nulls, control characters,
// huge and deeply nested values, odd numbers, invalid JSON and UTF-8, wrong content types).
// Past ~350 lines because most of it is the tables of bad values, kept together to be read as one.
import crypto from 'node:crypto';
import { seededRandom } from '../../src/shared/seeded-random.ts';

export const DEFAULT_SEED = 0x10f0220;

export function fuzzSeed(): number {
  const env = process.env.FUZZ_SEED;
  return env && /^\d+$/.test(env) ? Number(env) >>> 0 : DEFAULT_SEED;
}

export class Rng {
  /** mulberry32 (shared/seeded-random.ts): small, fast and good enough to pick cases reproducibly. */
  readonly next: () => number;
  constructor(seed: number) {
    this.next = seededRandom(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  $ref?: string;
}

/** JSON text put into a body verbatim: what JSON.stringify cannot write (1e400, -0, duplicate keys, deep nesting). */
export class RawJson {
  constructor(readonly text: string) {}
}

export function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The first schema of an anyOf/oneOf that is not only `null`; allOf merged shallowly. */
export function resolve(schema: Schema | undefined, root: any): Schema {
  let s: Schema = schema ?? {};
  for (let hops = 0; s.$ref && hops < 10; hops++) {
    s = s.$ref.replace(/^#\//, '').split('/').reduce((node: any, key) => node?.[key], root) ?? {};
  }
  if (s.allOf) s = Object.assign({}, ...s.allOf.map((x) => resolve(x, root)));
  return s;
}

function typeOf(s: Schema): string | undefined {
  if (Array.isArray(s.type)) return s.type.find((t) => t !== 'null');
  if (s.type) return s.type;
  if (s.properties) return 'object';
  if (s.items) return 'array';
  return undefined;
}

// Patterns of the two documents that a plain word would not match, with a value that does.
const PATTERN_SAMPLES: [RegExp, string][] = [
  [/\\d\{4\}-\\d\{2\}-\\d\{2\}/, '2025-06-01'],
  [/^\^#/, '#ff0000'],
  [/\\d\{1,3\}/, '46.5183'],
  [/\[0-9a-fA-F\]\{8\}/, '6f1f4c1e-2b8d-4c3a-9d4e-0a1b2c3d4e5f'],
];

/**
 * A value that the schema accepts, as far as a schema tells: `hints` give the values of
 * properties that must name real records (ids, uuids, keys), by property name.
 */
export function sample(schema: Schema | undefined, root: any, rng: Rng, hints: Record<string, unknown>, name = '', depth = 0): unknown {
  if (name && name in hints) return hints[name];
  const s = resolve(schema, root);
  const variants = s.anyOf ?? s.oneOf;
  if (variants?.length) {
    const usable = variants.map((v) => resolve(v, root)).filter((v) => typeOf(v) !== 'null');
    return sample(usable[0] ?? variants[0], root, rng, hints, name, depth);
  }
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum[0];
  if (s.default !== undefined) return s.default;
  switch (typeOf(s)) {
    case 'integer':
      return Math.max(s.minimum ?? 1, Math.min(s.maximum ?? 3, 1));
    case 'number':
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 1, 0.5));
    case 'boolean':
      return true;
    case 'string': {
      if (s.format === 'uuid') return rng.uuid();
      if (s.format === 'date-time') return '2025-06-01T10:00:00Z';
      if (s.format === 'email') return 'fuzz@example.test';
      if (s.pattern) for (const [re, value] of PATTERN_SAMPLES) if (re.test(s.pattern)) return value;
      const text = `fuzz ${name || 'value'}`;
      return text.padEnd(s.minLength ?? 0, 'x').slice(0, s.maxLength ?? 255);
    }
    case 'array': {
      if (depth > 6) return [];
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => sample(s.items, root, rng, hints, '', depth + 1));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      if (depth > 6) return out;
      for (const [key, prop] of Object.entries(s.properties ?? {})) {
        if (s.required?.includes(key) || key in hints || rng.next() < 0.5) out[key] = sample(prop, root, rng, hints, key, depth + 1);
      }
      return out;
    }
    default:
      return 'fuzz';
  }
}

/** A place in a body: its path (property names, 0 for the first array item) and its schema. */
export interface Target {
  path: (string | number)[];
  schema: Schema;
  required: boolean;
}

/** Every property of a body schema down to `maxDepth` levels, through arrays' first items. */
export function targets(schema: Schema | undefined, root: any, path: (string | number)[] = [], maxDepth = 4): Target[] {
  const s = resolve(schema, root);
  const out: Target[] = [];
  if (path.length >= maxDepth) return out;
  const variants = s.anyOf ?? s.oneOf;
  const object = variants ? variants.map((v) => resolve(v, root)).find((v) => typeOf(v) === 'object') ?? s : s;
  if (typeOf(object) === 'object') {
    for (const [key, prop] of Object.entries(object.properties ?? {})) {
      out.push({ path: [...path, key], schema: resolve(prop, root), required: object.required?.includes(key) ?? false });
      out.push(...targets(prop, root, [...path, key], maxDepth));
    }
  } else if (typeOf(object) === 'array' && object.items) {
    out.push({ path: [...path, 0], schema: resolve(object.items, root), required: true });
    out.push(...targets(object.items, root, [...path, 0], maxDepth));
  }
  return out;
}

export function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

/** Sets (or, with `remove`, deletes) the value at `path`, making the containers on the way. */
export function setAt(body: unknown, path: (string | number)[], value: unknown, remove = false): unknown {
  if (!path.length) return value;
  const top: any = body && typeof body === 'object' ? body : typeof path[0] === 'number' ? [] : {};
  let node = top;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    if (!node[key] || typeof node[key] !== 'object') node[key] = typeof path[i + 1] === 'number' ? [] : {};
    node = node[key];
  }
  const last = path[path.length - 1];
  if (remove) {
    if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
    else delete node[last];
  } else node[last] = value;
  return top;
}

export const MEGA = 1_000_000;
const DEPTH = 10_000;
export const deepArray = () => new RawJson('['.repeat(DEPTH) + ']'.repeat(DEPTH));
export const deepObject = () => new RawJson('{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH));

/** Strings that are no one's name: NUL, other C0/C1 controls, lone surrogates, direction marks. */
export const NASTY_STRINGS: [string, string][] = [
  ['nul', 'a\u0000b'],
  ['nul', '\u0000'],
  ['control', '\u0001\u0008\u000b\u001b[31m\u001f\u007f'],
  ['control', 'line\r\nInjected: header'],
  ['control', '\u0085\u2028\u2029\ufeff\u200b'],
  ['surrogate', 'x\ud800y'],
  ['surrogate', '\udfff'],
  ['unicode', '\u202etxt.exe \u{1f600} \u0301'],
  ['empty', ''],
  ['blank', '   '],
  ['injection', "'; drop table x; --"],
  ['injection', '../../../../etc/passwd'],
  ['injection', '%00%ff{{7*7}}${7*7}<script>'],
];

/** Numbers and number-like strings that a parser might take for a number it should not. */
export const ODD_NUMBERS: [string, unknown][] = [
  ['out-of-range', -1],
  ['out-of-range', 0],
  ['out-of-range', 2147483648],
  ['out-of-range', 2 ** 53 + 2],
  ['out-of-range', 1e308],
  ['out-of-range', -1e308],
  ['out-of-range', new RawJson('1e400')],
  ['out-of-range', new RawJson('-1e400')],
  ['out-of-range', new RawJson('123456789012345678901234567890')],
  ['fraction', 1.5],
  ['fraction', new RawJson('4.0')],
  ['fraction', new RawJson('-0')],
  ['fraction', new RawJson('1E2')],
  ['fraction', 5e-324],
  ['number-string', 'Infinity'],
  ['number-string', '-Infinity'],
  ['number-string', 'NaN'],
  ['number-string', '1e400'],
  ['number-string', '0x4'],
  ['number-string', '04'],
  ['number-string', '4.0'],
  ['number-string', '+4'],
  ['number-string', ' 4'],
  ['number-string', '4 '],
  ['number-string', '4e0'],
  ['number-string', '99999999999999999999'],
  ['number-string', ''],
];

/** Values of the wrong JSON type for a schema of type `type`. */
function wrongTypes(type: string | undefined): unknown[] {
  const all: Record<string, unknown> = { string: 'text', integer: 42, number: 4.2, boolean: true, array: [1, 'a'], object: { a: 1 } };
  const close = type === 'integer' || type === 'number' ? ['string', 'boolean', 'array', 'object'] : Object.keys(all).filter((t) => t !== type);
  return close.map((t) => all[t]);
}

/** Bad values for one property: [kind, value]. */
export function badValues(schema: Schema): [string, unknown][] {
  const type = typeOf(schema) ?? (schema.anyOf ? typeOf(schema.anyOf[0]) : undefined);
  const out: [string, unknown][] = [['null', null]];
  for (const value of wrongTypes(type)) out.push(['wrong-type', value]);
  out.push(['huge-string', 'x'.repeat(MEGA)]);
  out.push(['deep-nesting', deepArray()], ['deep-nesting', deepObject()]);
  for (const [kind, value] of NASTY_STRINGS) out.push([kind, value]);
  if (type === 'integer' || type === 'number' || !type) for (const entry of ODD_NUMBERS) out.push(entry);
  if (type === 'string') {
    out.push(['out-of-range', 'x'.repeat((schema.maxLength ?? 255) + 1)]);
    if (schema.format === 'uuid' || schema.pattern) out.push(['bad-format', 'not-a-uuid'], ['bad-format', crypto.randomUUID().toUpperCase() + ' ']);
  }
  if (type === 'array') out.push(['out-of-range', []], ['out-of-range', Array.from({ length: 20_000 }, () => 1)]);
  return out;
}

/** Path segments that are not the canonical decimal id of a record (`id` is a real one). */
export function badIds(id: number | string): [string, string][] {
  if (typeof id === 'string') {
    return [
      ['bad-id', 'not-a-uuid'],
      ['bad-id', id.toUpperCase()],
      ['bad-id', `${id}%00`],
      ['bad-id', '00000000-0000-0000-0000-000000000000'],
      ['bad-id', '1'],
    ];
  }
  return [
    ['non-canonical-id', `0x${id.toString(16)}`],
    ['non-canonical-id', `0${id}`],
    ['non-canonical-id', `${id}.0`],
    ['non-canonical-id', `%2B${id}`],
    ['non-canonical-id', `%20${id}`],
    ['non-canonical-id', `${id}e0`],
    ['non-canonical-id', `${id}%00`],
    ['bad-id', '0'],
    ['bad-id', '-1'],
    ['bad-id', '2147483648'],
    ['bad-id', '99999999999999999999'],
    ['bad-id', '1e400'],
    ['bad-id', 'Infinity'],
    ['bad-id', 'NaN'],
    ['bad-id', 'abc'],
    ['bad-id', '%00'],
    ['bad-id', '%FF%FE'],
    ['bad-id', '%C0%80'],
    ['bad-id', 'x'.repeat(4000)],
  ];
}

/** Query values for a parameter of schema `schema`. */
export function badQueryValues(schema: Schema): [string, string][] {
  const out: [string, string][] = [
    ['query', ''],
    ['query', '%00'],
    ['query', 'a%00b'],
    ['query', '%FF%FE'],
    ['query', '%'],
    ['query', 'x'.repeat(6000)],
  ];
  const type = typeOf(schema);
  if (type === 'integer' || type === 'number') {
    for (const v of ['0', '-1', '1001', '1000000', '1.5', 'Infinity', 'NaN', '1e400', '0x4', '04', '%2B4', '%204', '99999999999999999999', 'abc']) out.push(['query-number', v]);
  }
  if (type === 'boolean') for (const v of ['maybe', 'TRUE', '2', 'null']) out.push(['query-boolean', v]);
  return out;
}

export interface RawBody {
  kind: string;
  contentType: string | undefined;
  body: Buffer | string;
  extraHeaders?: Record<string, string>;
}

/** Bodies that are not the JSON object a route expects, whatever its schema. */
export function rawBodies(): RawBody[] {
  const json = 'application/json';
  const invalidUtf8 = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0xf8, 0x88, 0x80, 0x80, 0x80]), Buffer.from('"}')]);
  return [
    { kind: 'invalid-json', contentType: json, body: '{' },
    { kind: 'invalid-json', contentType: json, body: '{"a":}' },
    { kind: 'invalid-json', contentType: json, body: "{'name': 1}" },
    { kind: 'invalid-json', contentType: json, body: '{"a":1}garbage' },
    { kind: 'invalid-json', contentType: json, body: '{"name":"a\u0000\u0001b"}' },
    { kind: 'invalid-json', contentType: json, body: '' },
    { kind: 'invalid-json', contentType: json, body: '\ufeff{}' },
    { kind: 'proto-keys', contentType: json, body: '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}' },
    { kind: 'duplicate-keys', contentType: json, body: '{"name":"a","name":1,"name":null}' },
    { kind: 'invalid-utf8', contentType: json, body: invalidUtf8 },
    { kind: 'invalid-utf8', contentType: `${json}; charset=utf-8`, body: Buffer.from([0x7b, 0x22, 0x80, 0x22, 0x3a, 0x31, 0x7d]) },
    { kind: 'wrong-body', contentType: json, body: 'null' },
    { kind: 'wrong-body', contentType: json, body: '[]' },
    { kind: 'wrong-body', contentType: json, body: '"text"' },
    { kind: 'wrong-body', contentType: json, body: '42' },
    { kind: 'deep-nesting', contentType: json, body: deepArray().text },
    { kind: 'deep-nesting', contentType: json, body: deepObject().text },
    { kind: 'too-large', contentType: json, body: JSON.stringify({ name: 'x'.repeat(MEGA + 100_000) }) },
    { kind: 'content-type', contentType: 'text/plain', body: '{"name":"a"}' },
    { kind: 'content-type', contentType: 'application/xml', body: '<a/>' },
    { kind: 'content-type', contentType: 'application/octet-stream', body: Buffer.from([0, 1, 2, 255]) },
    { kind: 'content-type', contentType: undefined, body: '{"name":"a"}' },
    { kind: 'content-type', contentType: 'application/json; charset=latin1', body: Buffer.from('{"name":"\xe9"}', 'latin1') },
    { kind: 'content-type', contentType: 'application/json', body: 'x', extraHeaders: { 'content-encoding': 'gzip' } },
    { kind: 'multipart', contentType: 'multipart/form-data; boundary=x', body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb' },
    { kind: 'multipart', contentType: 'multipart/form-data; boundary=x', body: 'garbage without a boundary' },
    { kind: 'multipart', contentType: 'multipart/form-data', body: '--x\r\n\r\n--x--' },
    { kind: 'multipart', contentType: 'multipart/form-data; boundary=', body: '' },
    { kind: 'multipart', contentType: 'multipart/form-data; boundary=x', body: '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\na\u0000b\r\n--x--\r\n' },
    { kind: 'form', contentType: 'application/x-www-form-urlencoded', body: 'a=%zz&&=&name=%00&%FF=1&name[]=x&name[a]=y' },
    { kind: 'form', contentType: 'application/x-www-form-urlencoded', body: `name=${'x'.repeat(5000)}&grant_type=client_credentials&client_id=a%00` },
    { kind: 'form', contentType: 'application/x-www-form-urlencoded', body: '%' },
  ];
}
