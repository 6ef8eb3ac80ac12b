// Which pixels have the colour of rust (iron oxides: sienna, ochre, dark brown): a hue between
// orange-red and orange-yellow, enough colour to be more than a grey, not so dark that the hue is
// sensor noise, not blown out. HSV is used because these bounds are then single intervals:
// hue in degrees, saturation = chroma / max, value = max / 255, chroma = (max - min) / 255.
//
// The bounds were chosen with the region filters of rust-detector.ts, by a grid search for the best
// F1 on development sets (scripts/generate-rust-fixtures.ts --development: other photos than the
// committed set's), and are measured on the committed set (test/fixtures/rust/):
// docs/inspection-service.md, "Rust analysis". Red brick, terracotta and brown wood share these hues: the region filters of
// rust-detector.ts remove some of them, not all.
export const RUST_COLOUR = {
  hueMin: 8,
  hueMax: 34,
  saturationMin: 0.45,
  chromaMin: 0.12,
  valueMin: 0.15,
  valueMax: 0.95,
} as const;

export type ColourBounds = { [K in keyof typeof RUST_COLOUR]: number };

export interface RawImage {
  /** Interleaved 8-bit samples, `channels` per pixel (3 or 4; the first three are R, G, B). */
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

/** 1 where the pixel has a rust colour, 0 elsewhere (one byte per pixel). */
export function rustColourMask(image: RawImage, bounds: ColourBounds = RUST_COLOUR): Uint8Array {
  const { data, width, height, channels } = image;
  const mask = new Uint8Array(width * height);
  const chromaMin = bounds.chromaMin * 255;
  const valueMin = bounds.valueMin * 255;
  const valueMax = bounds.valueMax * 255;
  for (let i = 0, p = 0; i < mask.length; i++, p += channels) {
    const r = data[p];
    const g = data[p + 1];
    const b = data[p + 2];
    // Rust hues have red as the largest and blue as the smallest component: anything else is out
    // before any division.
    if (!(r >= g && g >= b)) continue;
    const chroma = r - b;
    if (r < valueMin || r > valueMax || chroma < chromaMin || chroma < bounds.saturationMin * r) continue;
    const hue = (60 * (g - b)) / chroma; // the red-to-yellow sextant: 0° red, 60° yellow
    if (hue >= bounds.hueMin && hue <= bounds.hueMax) mask[i] = 1;
  }
  return mask;
}
