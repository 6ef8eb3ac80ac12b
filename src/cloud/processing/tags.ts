// Processing tags (cloud spec, "Processing tags"): one pipeline at most (`nadir`/`3d-maps`,
// `oblique`, `building`), `nadir` when none is given, and `flat` only together with `nadir` or
// `3d-maps`. Mobile-capture inputs get their pipeline automatically at processing time.
import { ValidationError } from '../../infra/http/errors.ts';

const PIPELINES = ['nadir', '3d-maps', 'oblique', 'building'] as const;
const MODIFIERS = ['flat'] as const;

export function resolveTags(raw: unknown): string[] {
  if (raw === undefined || raw === null || raw === '') return ['nadir'];
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list) || list.some((t) => typeof t !== 'string')) throw ValidationError.field('tags', 'Expected a list of strings.');
  // A form sends `tags=nadir,flat` or `tags=nadir&tags=flat`: commas separate tags in either.
  const tags = [...new Set(list.flatMap((t: string) => t.split(',')).map((t) => t.trim().toLowerCase()).filter(Boolean))];
  const unknown = tags.filter((t) => !(PIPELINES as readonly string[]).includes(t) && !(MODIFIERS as readonly string[]).includes(t));
  if (unknown.length) throw ValidationError.field('tags', `Unknown tag(s): ${unknown.join(', ')}. Known: ${[...PIPELINES, ...MODIFIERS].join(', ')}.`);
  const pipelines = tags.filter((t) => (PIPELINES as readonly string[]).includes(t));
  // `nadir` and `3d-maps` name the same pipeline.
  const distinct = new Set(pipelines.map((t) => (t === '3d-maps' ? 'nadir' : t)));
  if (distinct.size > 1) throw ValidationError.field('tags', `Processing pipelines are mutually exclusive: ${pipelines.join(', ')}.`);
  if (tags.includes('flat') && !distinct.has('nadir')) {
    throw ValidationError.field('tags', '`flat` is valid only together with `nadir` or `3d-maps`.');
  }
  if (pipelines.length === 0) tags.unshift('nadir');
  return tags;
}
