// PIX4Dmapper processing templates (.tmpl, XML with root <pix4dtmpl>) given to start_processing
// as `custom_template_s3_key`, as the real API's clients do. Our engines are not PIX4Dmapper:
// what a template says that they can do is which processing steps run, so which optional outputs
// are made (the `outputs` extension, requested-outputs.ts). Each section's <runStep> is honoured;
// <information> (the template's name, description, format version) describes the template and
// sets nothing; every other option is refused by name, never dropped in silence, because a client
// choosing, say, an image scale would otherwise get results made without it. docs/cloud-service.md,
// "Processing templates".
import type { RequestedOutputs } from './requested-outputs.ts';

/** A template larger than this is refused before it is read (Mapper's own exports are a few KiB). */
export const TEMPLATE_MAX_BYTES = 256 * 1024;

/** What is wrong with a template, in words for the client. */
export class TemplateError extends Error {}

/** The outputs a template asks for; TemplateError for what cannot be honoured or read. */
export function templateOutputs(text: string): RequestedOutputs {
  const root = parseXml(text);
  if (root.name !== 'pix4dtmpl') throw new TemplateError(`its root element is <${root.name}>, not <pix4dtmpl>: it is not a PIX4Dmapper processing template`);
  const outputs: RequestedOutputs = {};
  const refused: string[] = [];
  const seen = new Set<string>();
  for (const section of root.children) {
    if (section.name === 'information') continue;
    const applyStep = STEPS[section.name];
    if (!applyStep) {
      refused.push(section.name);
      continue;
    }
    for (const option of section.children) {
      const path = `${section.name}/${option.name}`;
      if (option.name !== 'runStep') {
        refused.push(path);
        continue;
      }
      if (seen.has(path)) throw new TemplateError(`${path} is given twice`);
      seen.add(path);
      applyStep(runStepValue(option, path), outputs);
    }
  }
  if (refused.length > 0) {
    const named = refused.slice(0, 10).join(', ') + (refused.length > 10 ? ` and ${refused.length - 10} more` : '');
    throw new TemplateError(
      `it sets options this service's engines cannot apply: ${named}. Only each step's runStep (initial, dense, ortho, index) is honoured; remove the other options`,
    );
  }
  return outputs;
}

/** What running (or skipping) each PIX4Dmapper step means for our outputs. */
const STEPS: Record<string, (run: boolean, outputs: RequestedOutputs) => void> = {
  initial: (run) => {
    if (!run) throw new TemplateError('initial/runStep is false: step 1 (initial processing) cannot be skipped, every engine starts by calibrating the images');
  },
  // Step 2, point cloud and mesh.
  dense: (run, outputs) => {
    outputs.point_cloud = run;
    outputs.mesh = run;
  },
  // Step 3, DSM and orthomosaic.
  ortho: (run, outputs) => {
    outputs.dsm = run;
    outputs.ortho = run;
  },
  index: (run) => {
    if (run) throw new TemplateError("index/runStep is true: the index calculator (reflectance and index maps) is not among this service's outputs");
  },
};

function runStepValue(option: XmlElement, path: string): boolean {
  const value = option.text.trim().toLowerCase();
  if (option.children.length === 0 && (value === 'true' || value === '1')) return true;
  if (option.children.length === 0 && (value === 'false' || value === '0')) return false;
  throw new TemplateError(`${path} must be true or false`);
}

interface XmlElement {
  name: string;
  children: XmlElement[];
  text: string;
}

const MAX_DEPTH = 32;
const MAX_ELEMENTS = 10_000;
// Comment, processing instruction (the XML declaration), "<!" (DOCTYPE, CDATA: refused), a tag
// with its attributes (read, not used), text, or a "<" opening nothing.
const TOKEN = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!|<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|[^<]+|</y;
const ENTITY = /&(?:(lt|gt|amp|quot|apos)|#(\d{1,7})|#x([0-9a-fA-F]{1,6}));|&/g;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** A small, strict reader of element-only XML: enough for templates, no DTD, no entities beyond the five predefined. */
function parseXml(text: string): XmlElement {
  const source = text.replace(/^\uFEFF/, '');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let count = 0;
  for (let pos = 0; pos < source.length; ) {
    TOKEN.lastIndex = pos;
    const match = TOKEN.exec(source)!;
    pos = TOKEN.lastIndex;
    const [token, slash, name, attributes, selfClosing] = match;
    if (token.startsWith('<!--') || token.startsWith('<?')) continue;
    if (token === '<!') throw new TemplateError('it is not readable XML: DOCTYPE declarations and CDATA sections are not accepted');
    if (token === '<') throw new TemplateError(`it is not readable XML: a "<" at character ${pos} opens no tag`);
    if (name === undefined) {
      if (stack.length > 0) stack[stack.length - 1]!.text += decodeEntities(token);
      else if (token.trim()) throw new TemplateError('it is not readable XML: text outside the root element');
      continue;
    }
    if (slash) {
      const open = stack.pop();
      if (selfClosing || attributes || !open || open.name !== name) throw new TemplateError(`it is not readable XML: unexpected </${name}>`);
      continue;
    }
    if (root && stack.length === 0) throw new TemplateError('it is not readable XML: more than one root element');
    if (++count > MAX_ELEMENTS) throw new TemplateError(`it has more than ${MAX_ELEMENTS} elements`);
    const element: XmlElement = { name, children: [], text: '' };
    if (stack.length > 0) stack[stack.length - 1]!.children.push(element);
    else root = element;
    if (!selfClosing) stack.push(element);
    if (stack.length > MAX_DEPTH) throw new TemplateError(`its elements are nested more than ${MAX_DEPTH} deep`);
  }
  if (stack.length > 0) throw new TemplateError(`it is not readable XML: <${stack[stack.length - 1]!.name}> is not closed`);
  if (!root) throw new TemplateError('it is not readable XML: no root element');
  return root;
}

function decodeEntities(text: string): string {
  return text.replace(ENTITY, (whole, named: string | undefined, decimal: string | undefined, hex: string | undefined) => {
    if (named) return NAMED[named]!;
    const code = decimal !== undefined ? Number(decimal) : hex !== undefined ? parseInt(hex, 16) : NaN;
    if (!Number.isInteger(code) || code < 1 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      throw new TemplateError(`it is not readable XML: "${whole}" is not an entity it may use`);
    }
    return String.fromCodePoint(code);
  });
}
