// CONTRACT §1: a path the service serves, called with a method it does not serve, is 405
// `method_not_allowed` with `Allow`, not 404. Every route's pattern is recorded as it is added;
// the not-found handler asks which methods would have routed the path.
import type { FastifyInstance } from 'fastify';

interface Pattern {
  regex: RegExp;
  methods: Set<string>;
}

export type AllowedMethods = (path: string) => string[];

export function trackRouteMethods(app: FastifyInstance): AllowedMethods {
  const patterns = new Map<string, Pattern>();
  app.addHook('onRoute', (route) => {
    const key = normalise(route.url);
    let pattern = patterns.get(key);
    if (!pattern) {
      pattern = { regex: toRegex(key), methods: new Set() };
      patterns.set(key, pattern);
    }
    for (const method of [route.method].flat()) pattern.methods.add(method);
  });
  return (path) => {
    let normalised: string;
    try {
      normalised = normalise(decodeURI(path));
    } catch {
      return [];
    }
    const allowed = new Set<string>();
    for (const pattern of patterns.values()) {
      if (pattern.regex.test(normalised)) for (const m of pattern.methods) allowed.add(m);
    }
    // In the usual order; HEAD goes without saying where GET is (Fastify serves it for every GET).
    if (allowed.has('GET')) allowed.delete('HEAD');
    return [...allowed].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  };
}

const ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const rank = (method: string) => (ORDER.includes(method) ? ORDER.indexOf(method) : ORDER.length);

/** Paths are served with and without their trailing slash, and duplicate slashes are ignored. */
function normalise(path: string): string {
  return path.replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1');
}

/** A find-my-way pattern (`:param`, `:param(regex)`, `*`) as an anchored regular expression. */
function toRegex(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; ) {
    const ch = pattern[i];
    if (ch === ':' && pattern[i + 1] !== ':') {
      const name = /^:[\w$-]+/.exec(pattern.slice(i))![0];
      i += name.length;
      if (pattern[i] === '(') {
        // A parameter with its own regular expression: up to the matching parenthesis.
        let depth = 0;
        let j = i;
        for (; j < pattern.length; j++) {
          if (pattern[j] === '\\') j++;
          else if (pattern[j] === '(') depth++;
          else if (pattern[j] === ')' && --depth === 0) break;
        }
        source += `(?:${pattern.slice(i + 1, j).replace(/^\^/, '').replace(/\$$/, '')})`;
        i = j + 1;
      } else {
        source += '[^/]+';
      }
    } else if (ch === '*') {
      source += '.*';
      i++;
    } else {
      if (ch === ':') i++; // "::" is a literal colon
      source += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      i++;
    }
  }
  return new RegExp(`^${source}$`);
}
