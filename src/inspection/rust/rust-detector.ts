// The rust detector: rust-coloured regions of a photo, each as a rectangle (fractions of the photo,
// as annotations' coords_2d) with the share of the photo it covers and a severity.
//
// 1. The photo is decoded by sharp, turned upright by its EXIF orientation (coords_2d are fractions
//    of the photo as seen, as the console and the reports draw them) and downscaled to at most
//    ANALYSIS_SIZE pixels on its longest side: the cost is bounded whatever the camera, and the
//    morphology's radii mean the same thing on a 12 MP drone photo and a phone photo.
// 2. Pixels of rust colour (rust-colour.ts: HSV bounds).
// 3. Morphological clean-up (morphology.ts): a closing joins the spots, pits and flakes of one
//    patch, then an opening removes isolated specks and one-pixel threads (brick joints, edges).
// 4. Connected components (components.ts), kept when they are large enough (MIN_AREA_FRACTION),
//    not the whole scene (MAX_AREA_FRACTION: a facade, a roof), compact enough (MIN_FILL of their
//    rectangle) and mostly made of rust-coloured pixels before the closing (MIN_DENSITY).
// Limits (docs/inspection-service.md, "Rust analysis"): colour only, so red brick, terracotta,
// brown paint and wood can be taken for rust; rust in deep shadow or under strong colour casts
// is missed; touching patches come out as one rectangle.
import { loadSharp } from '../../shared/images/load-sharp.ts';
import { DEFAULT_IMAGE_LIMITS } from '../../shared/images/image-limits.ts';
import { RUST_COLOUR, rustColourMask, type ColourBounds, type RawImage } from './rust-colour.ts';
import { close, open } from './morphology.ts';
import { connectedComponents } from './components.ts';
import { severityOfArea } from './severity.ts';

/**
 * Longest side of the analysed copy of a photo, pixels: the size the thresholds were tuned at (the
 * labelled set's photos are 640 x 480). The smallest finding (minAreaFraction) is then 16 x 16
 * pixels; a larger copy would cost more without finding smaller rust, as the bounds are shares of
 * the photo and the radii pixels of this copy.
 */
export const ANALYSIS_SIZE = 640;

/**
 * The detector's thresholds: chosen together with RUST_COLOUR by a grid search for the best F1 on
 * the development sets (rust-colour.ts), each near the middle of a plateau rather than on a peak.
 */
export const DETECTOR = {
  colour: RUST_COLOUR as ColourBounds,
  /** Closing radius (pixels of the analysed copy): gaps up to ~2 * radius between spots are bridged. */
  closeRadius: 5,
  /** Opening radius: specks and threads up to 2 * radius + 1 pixels wide are removed. */
  openRadius: 1,
  /** Smallest finding, as a share of the photo (0.08 %: 16 x 16 px at 640 x 480). */
  minAreaFraction: 0.0008,
  /** Largest finding: a region above this share of the photo is a facade or a roof, not a finding. */
  maxAreaFraction: 0.25,
  /** Share of its rectangle a finding fills at least (long, sprawling shapes are edges and joints). */
  minFill: 0.4,
  /** Share of a finding's pixels of rust colour before the closing. */
  minDensity: 0.55,
};

export type DetectorParameters = typeof DETECTOR;

export interface RustFinding {
  /** Fractions of the photo ((0, 0) upper left, (1, 1) bottom right). */
  left: number;
  top: number;
  right: number;
  bottom: number;
  /** Share of the photo's area the finding covers (its pixels, not its rectangle). */
  areaFraction: number;
  /** 1..5 (severity.ts). */
  severity: number;
}

export interface PhotoAnalysis {
  findings: RustFinding[];
  /** Size of the analysed copy. */
  width: number;
  height: number;
}

/** Rust findings of raw pixels, largest first. */
export function findRust(image: RawImage, parameters: DetectorParameters = DETECTOR): RustFinding[] {
  const { width, height } = image;
  const colour = rustColourMask(image, parameters.colour);
  const cleaned = open(close(colour, width, height, parameters.closeRadius), width, height, parameters.openRadius);
  const total = width * height;
  const findings: RustFinding[] = [];
  for (const c of connectedComponents(cleaned, width, height)) {
    const share = c.area / total;
    if (share < parameters.minAreaFraction || share > parameters.maxAreaFraction) continue;
    if (c.area / ((c.right - c.left) * (c.bottom - c.top)) < parameters.minFill) continue;
    let coloured = 0;
    for (const i of c.pixels) coloured += colour[i];
    if (coloured / c.area < parameters.minDensity) continue;
    findings.push({ left: c.left / width, top: c.top / height, right: c.right / width, bottom: c.bottom / height, areaFraction: share, severity: severityOfArea(share) });
  }
  return findings.sort((a, b) => b.areaFraction - a.areaFraction);
}

/**
 * Decodes a photo (any format sharp reads), upright and downscaled, and finds its rust. Throws
 * when the photo cannot be decoded (sharp's error: truncated or corrupt data, not an image, more
 * pixels than `limitInputPixels`: IMAGE_MAX_PIXELS, shared/images/image-limits.ts).
 */
export async function analysePhoto(photo: Buffer, parameters: DetectorParameters = DETECTOR, limitInputPixels = DEFAULT_IMAGE_LIMITS.maxPixels): Promise<PhotoAnalysis> {
  const sharp = await loadSharp();
  // failOn 'truncated': a photo cut short is refused rather than analysed with a grey lower part.
  const { data, info } = await sharp(photo, { failOn: 'truncated', limitInputPixels })
    .autoOrient()
    .resize({ width: ANALYSIS_SIZE, height: ANALYSIS_SIZE, fit: 'inside', withoutEnlargement: true })
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const image = { data, width: info.width, height: info.height, channels: info.channels };
  return { findings: findRust(image, parameters), width: info.width, height: info.height };
}
