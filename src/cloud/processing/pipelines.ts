// Which processing pipeline a project runs (cloud spec, "Processing tags", rules 1 and 2):
// - the pipeline named by the tags: `nadir` (also spelled `3d-maps`, the default), `oblique` or
//   `building`; `flat` is a setting of the nadir pipeline (see tags.ts);
// - `mobile`, chosen automatically, whatever the tags say, when the inputs come from the mobile
//   capture application: every readable image that names its camera maker (EXIF Make) was taken by
//   a phone or tablet (MOBILE_MAKERS below), and at least one does. Images without a Make tag
//   (depth maps, confidence maps and other companion files of a mobile capture) do not count.
//   Drone and camera makers (DJI, Sony, Parrot, senseFly...) never make a capture mobile, so one
//   drone photo among phone photos keeps the tagged pipeline.

export type Pipeline = 'nadir' | 'oblique' | 'building' | 'mobile';

/** Makers whose cameras are phones or tablets; a predicate on the model where the maker also makes cameras. */
const MOBILE_MAKERS: Record<string, (model: string) => boolean> = {
  apple: () => true,
  google: () => true,
  samsung: (model) => /^(SM-|GT-|SAMSUNG|GALAXY)/i.test(model),
  huawei: () => true,
  honor: () => true,
  xiaomi: () => true,
  redmi: () => true,
  oneplus: () => true,
  oppo: () => true,
  vivo: () => true,
  motorola: () => true,
  nothing: () => true,
};

export function isMobileDevice(make: string | null, model: string | null): boolean {
  if (!make) return false;
  const test = MOBILE_MAKERS[make.trim().toLowerCase()];
  return test ? test(model ?? '') : false;
}

/** True when the images are a mobile capture (see the rule above). */
export function isMobileCapture(images: readonly { make: string | null; model: string | null }[]): boolean {
  const named = images.filter((image) => image.make && image.make.trim() !== '');
  return named.length > 0 && named.every((image) => isMobileDevice(image.make, image.model));
}

/** The pipeline of resolved tags (tags.ts) and the images' makers. */
export function choosePipeline(tags: readonly string[], images: readonly { make: string | null; model: string | null }[]): Pipeline {
  if (isMobileCapture(images)) return 'mobile';
  if (tags.includes('oblique')) return 'oblique';
  if (tags.includes('building')) return 'building';
  return 'nadir';
}
