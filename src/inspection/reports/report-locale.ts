// reported_by.preferred_language and reported_by.country of a report (issue 30 §5: "filled where
// known"). This service keeps no language or country of its users; what is known honestly is the
// language the request for the report asked for: its Accept-Language header (RFC 9110 12.5.4).
// The tag of the highest weight (the first among equals; `*` and q=0 skipped) gives
// preferred_language, its primary language subtag in lower case (ISO 639: "de" of "de-CH"), and
// country, its region subtag in upper case (ISO 3166-1 alpha-2: "CH"; a numeric UN M.49 region
// such as "419" names no country). No header, or nothing readable in it: both null. The region of
// a language tag is the variant of the language its user reads, not where they are; country says
// no more than that.

export interface ReportLocale {
  preferred_language: string | null;
  country: string | null;
}

export const UNKNOWN_LOCALE: ReportLocale = { preferred_language: null, country: null };

/** Longest header read (a browser's is far shorter); the rest is ignored. */
const MAX_HEADER = 500;
/** language[-script][-region][-...] (BCP 47, the parts used here). */
const TAG = /^([a-z]{2,3})(?:-[a-z]{4})?(?:-([a-z]{2}|\d{3}))?(?:-[a-z0-9]{1,8})*$/i;

export function localeOfAcceptLanguage(header: string | undefined): ReportLocale {
  if (!header) return UNKNOWN_LOCALE;
  let best: { tag: RegExpExecArray; q: number } | undefined;
  for (const part of header.slice(0, MAX_HEADER).split(',')) {
    const [range, ...params] = part.trim().split(';');
    const tag = TAG.exec(range.trim());
    if (!tag) continue; // `*`, or not a language tag
    const weight = params.find((p) => /^\s*q\s*=/i.test(p));
    const q = weight === undefined ? 1 : Number(/^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(weight)?.[1] ?? NaN); // NaN: a bad weight, skipped
    if (q > 0 && q <= 1 && (!best || q > best.q)) best = { tag, q };
  }
  if (!best) return UNKNOWN_LOCALE;
  const region = best.tag[2];
  return { preferred_language: best.tag[1].toLowerCase(), country: region && !/^\d/.test(region) ? region.toUpperCase() : null };
}
