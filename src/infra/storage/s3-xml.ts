// The little XML S3 speaks: building responses and reading the two small request bodies
// (CompleteMultipartUpload, DeleteObjects). Both request bodies are flat lists of known
// elements, so a tolerant regex reader is enough; they are size-capped before parsing.
import { S3Error } from './s3-errors.ts';

export const S3_XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';
const XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';

export function escapeXml(value: string): string {
  return value.replace(/[&<>"'\r\n\t]/g, (c) => {
    switch (c) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      case "'":
        return '&apos;';
      // Character references survive XML end-of-line and whitespace normalisation in keys.
      default:
        return `&#${c.charCodeAt(0)};`;
    }
  });
}

export function unescapeXml(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#\d+|lt|gt|amp|quot|apos);/g, (_m, entity: string) => {
    switch (entity) {
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'amp':
        return '&';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
      default:
        return String.fromCodePoint(entity[1] === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10));
    }
  });
}

/** A node of the response tree: element name → text, nested nodes, or a list of either. */
export type XmlValue = string | number | boolean | undefined | XmlNode | XmlValue[];
export interface XmlNode {
  [name: string]: XmlValue;
}

function render(name: string, value: XmlValue): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.map((item) => render(name, item)).join('');
  if (typeof value === 'object') {
    return `<${name}>${Object.entries(value)
      .map(([child, v]) => render(child, v))
      .join('')}</${name}>`;
  }
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}

/** Renders `<root xmlns=...>...</root>` with an XML declaration. */
export function xmlDocument(root: string, body: XmlNode): string {
  const inner = Object.entries(body)
    .map(([name, value]) => render(name, value))
    .join('');
  return `${XML_DECL}<${root} xmlns="${S3_XMLNS}">${inner}</${root}>`;
}

export function errorXml(code: string, message: string, resource: string, requestId: string, extra: Record<string, string> = {}): string {
  const fields = Object.entries(extra)
    .map(([k, v]) => render(k, v))
    .join('');
  return `${XML_DECL}<Error><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message>${fields}<Resource>${escapeXml(resource)}</Resource><RequestId>${requestId}</RequestId></Error>`;
}

/**
 * The contents of the `name` elements, in order. Linear in the body (up to 4 MB from any client):
 * one pattern for `<...>([\s\S]*?)</...>` scanned the rest of the body again from every opening tag
 * without a closing one (`<Part>` repeated: quadratic), and attributes as `[^>]*` did the same
 * from every `<Part ` without a `>`. An attribute holds no `<`, and once an opening tag has no
 * closing tag after it, no later one has.
 */
function elements(xml: string, name: string): string[] {
  const out: string[] = [];
  const open = new RegExp(`<(?:[\\w.-]+:)?${name}(?:\\s[^<>]*)?>`, 'g');
  const close = new RegExp(`</(?:[\\w.-]+:)?${name}>`, 'g');
  for (let m = open.exec(xml); m; m = open.exec(xml)) {
    close.lastIndex = open.lastIndex;
    const end = close.exec(xml);
    if (!end) break;
    out.push(xml.slice(open.lastIndex, end.index));
    open.lastIndex = close.lastIndex;
  }
  return out;
}

function text(xml: string, name: string): string | undefined {
  const found = elements(xml, name)[0];
  if (found === undefined) return undefined;
  const cdata = /^<!\[CDATA\[([\s\S]*)\]\]>$/.exec(found);
  return cdata ? cdata[1] : unescapeXml(found);
}

function malformed(): S3Error {
  return new S3Error('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
}

export function parseCompleteMultipartUpload(xml: string): Array<{ partNumber: number; etag: string }> {
  if (!/<(?:[\w.-]+:)?CompleteMultipartUpload[\s>]/.test(xml)) throw malformed();
  return elements(xml, 'Part').map((part) => {
    const number = Number(text(part, 'PartNumber'));
    const etag = text(part, 'ETag');
    if (!Number.isInteger(number) || etag === undefined) throw malformed();
    return { partNumber: number, etag };
  });
}

export function parseDeleteObjects(xml: string): { quiet: boolean; keys: string[] } {
  if (!/<(?:[\w.-]+:)?Delete[\s>]/.test(xml)) throw malformed();
  const keys = elements(xml, 'Object').map((object) => {
    const key = text(object, 'Key');
    if (key === undefined) throw malformed();
    return key;
  });
  if (keys.length > 1000) throw malformed();
  return { quiet: text(xml, 'Quiet')?.trim() === 'true', keys };
}
