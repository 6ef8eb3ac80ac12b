// A strict reader of OGC Well-Known Text (WKT1 of OGC 01-009 and WKT2 of ISO 19162): one node
// `KEYWORD[arg, arg, ...]` (or with parentheses), arguments being quoted strings (`""` escapes a
// quote), numbers, bare words (enumerations such as EAST or Cartesian) and nested nodes; nothing
// may follow the root node. Each node keeps its exact source text, so that a component of a
// compound system can be reused verbatim.
//
// wkt-parser (what proj4 uses) is deliberately lenient: it accepts unbalanced brackets and
// trailing text. The service needs to tell clients precisely why a string is not WKT, hence this
// reader; proj4 (with wkt-parser) still does the projection maths in crs.ts.

export type WktValue = WktNode | string | number | WktWord;

/** A bare (unquoted) word such as EAST, north or Cartesian. */
export class WktWord {
  constructor(readonly word: string) {}
  toString(): string {
    return this.word;
  }
}

export interface WktNode {
  /** Upper-cased keyword. */
  keyword: string;
  args: WktValue[];
  /** The node's exact source text. */
  text: string;
}

export class WktSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} (at character ${position + 1})`);
    this.name = 'WktSyntaxError';
  }
}

const MAX_DEPTH = 32;

export function parseWkt(source: string): WktNode {
  let pos = 0;
  const skipSpace = () => {
    while (pos < source.length && /\s/.test(source[pos])) pos++;
  };
  const fail = (message: string): never => {
    throw new WktSyntaxError(message, Math.min(pos, source.length));
  };

  const readWord = (): string => {
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(pos, pos + 128));
    if (!match) return fail('expected a keyword');
    pos += match[0].length;
    return match[0];
  };

  const readString = (): string => {
    pos++; // opening quote
    let out = '';
    for (;;) {
      if (pos >= source.length) fail('unterminated quoted string');
      const c = source[pos++];
      if (c === '"') {
        if (source[pos] === '"') {
          out += '"';
          pos++;
          continue;
        }
        return out;
      }
      out += c;
    }
  };

  const readNumber = (): number => {
    const match = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(source.slice(pos, pos + 64));
    if (!match) return fail('expected a number');
    pos += match[0].length;
    return Number(match[0]);
  };

  const readNode = (depth: number): WktNode => {
    if (depth > MAX_DEPTH) fail('nested too deeply');
    const start = pos;
    const keyword = readWord().toUpperCase();
    skipSpace();
    const open = source[pos];
    if (open !== '[' && open !== '(') fail(`expected "[" after ${keyword}`);
    const close = open === '[' ? ']' : ')';
    pos++;
    const args: WktValue[] = [];
    skipSpace();
    if (source[pos] === close) fail(`${keyword} has no content`);
    for (;;) {
      skipSpace();
      const c = source[pos];
      if (c === undefined) fail(`unexpected end of text inside ${keyword}`);
      if (c === '"') args.push(readString());
      else if (/[0-9+\-.]/.test(c)) args.push(readNumber());
      else if (/[A-Za-z_]/.test(c)) {
        const save = pos;
        const word = readWord();
        skipSpace();
        if (source[pos] === '[' || source[pos] === '(') {
          pos = save;
          args.push(readNode(depth + 1));
        } else args.push(new WktWord(word));
      } else fail(`unexpected character "${c}" inside ${keyword}`);
      skipSpace();
      if (source[pos] === ',') {
        pos++;
        continue;
      }
      if (source[pos] === close) {
        pos++;
        return { keyword, args, text: source.slice(start, pos) };
      }
      if (source[pos] === undefined) fail(`unexpected end of text inside ${keyword}`);
      fail(`expected "," or "${close}" inside ${keyword}`);
    }
  };

  skipSpace();
  if (!/[A-Za-z_]/.test(source[pos] ?? '')) fail('WKT starts with a keyword such as PROJCS or PROJCRS');
  const root = readNode(0);
  skipSpace();
  if (pos < source.length) fail('unexpected text after the end of the WKT');
  return root;
}

export const isNode = (value: WktValue | undefined): value is WktNode => typeof value === 'object' && value !== null && !(value instanceof WktWord);

export function children(node: WktNode, ...keywords: string[]): WktNode[] {
  return node.args.filter((a): a is WktNode => isNode(a) && keywords.includes(a.keyword));
}

export function child(node: WktNode, ...keywords: string[]): WktNode | undefined {
  return children(node, ...keywords)[0];
}

/** Every node under `node` (depth first, `node` included) with one of the keywords. */
export function descendants(node: WktNode, ...keywords: string[]): WktNode[] {
  const found: WktNode[] = [];
  const visit = (n: WktNode) => {
    if (keywords.includes(n.keyword)) found.push(n);
    for (const a of n.args) if (isNode(a)) visit(a);
  };
  visit(node);
  return found;
}

/** The node's name: its first argument when that is a quoted string. */
export function nodeName(node: WktNode): string | undefined {
  return typeof node.args[0] === 'string' ? node.args[0] : undefined;
}

/** Quotes a string for WKT. */
export function quote(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}
