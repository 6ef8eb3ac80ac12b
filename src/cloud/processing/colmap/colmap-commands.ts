// The COLMAP command lines of the colmap engine, in one place so that the benchmark
// (bench/photogrammetry.ts) runs exactly the same steps bare.
//
// 1. Intrinsics seeded from EXIF, one camera per make / model / image size / focal length:
//    feature_extractor runs once per group (`--image_list_path`), with `--ImageReader.single_camera 1`,
//    `--ImageReader.camera_model RADIAL` and `--ImageReader.camera_params f,cx,cy,0,0` (SIMPLE_RADIAL
//    and f,cx,cy,0 below SIFT_MAX_IMAGE_SIZE, see below), where
//    f in pixels = FocalLengthIn35mmFormat / 36 * max(width, height) (the 35 mm frame is 36 mm wide,
//    as OpenSfM/ODM count it), or FocalLength (mm) * FocalPlaneXResolution (pixels per mm, scaled
//    to the stored width) when there is no 35 mm equivalent. Without either, COLMAP's own guess
//    (1.2 * max(width, height)) is used, which often registers nothing: the quality report says so.
//    RADIAL (k1 and k2), not SIMPLE_RADIAL (k1 alone): with the focal length held at the EXIF value
//    (mapperArgs), one radial term cannot take up a wide lens's distortion (brighton_beach's DJI
//    FC300S, 84 degrees), and the error bends a nadir flight's model into a bowl: the sparse points
//    0.75 m higher 40 m from the centre than at it against OpenDroneMap's reference, 0.216 m median
//    distance after the vertical offset; with k2, 0.14 m and 0.050 m (the dense cloud held the same
//    bowl: 0.200 m, 0.046 m with it removed; bench/README.md, issue 28). Holding k1 at 0 made the
//    bowl deeper (0.93 m), refining the focal length lets it drift (below). Only for photos of
//    SIFT_MAX_IMAGE_SIZE or more (drone cameras): on lund's 1024 x 768 street photos k2 made the
//    initial pair's bundle adjustment diverge and 8 mapper attempts of 8 built no model; smaller
//    images keep SIMPLE_RADIAL (cameraModel).
// 2. Matching: when at least half the images carry a GPS position and there are more than
//    PAIRS_MIN_IMAGES, only the pairs that can overlap (pair-selection.ts: GPS distance, and the
//    ground footprints of gimbal-oriented drone images), imported with `matches_importer
//    --match_type pairs` (matched and verified as the other matchers do); when the mapper then
//    leaves images out, every remaining pair of those images is matched and the mapper runs again
//    (stages/mapping.ts, which says when). Otherwise exhaustive for up to EXHAUSTIVE_MAX_IMAGES images (every pair:
//    n(n-1)/2, 1770 at 60 images), else sequential (each image with the next 20, in file-name order).
// 3. Incremental mapping (`mapper`), then georegistration (`model_aligner`) of the largest model to
//    the images' positions in the output system (minus an offset), then `model_converter` to text.
// 4. The mapper keeps the EXIF focal lengths when every camera has one (mapperArgs), and
//    registers an image with at least 15 inlier 2D-3D matches; when the largest model leaves images
//    out, it runs again with another random seed (COLMAP's incremental mapping is not
//    deterministic on several threads: a loaded machine once placed 13 of lund's 29 photos), up to
//    MAPPER_ATTEMPTS times, and the largest model of all attempts is kept (COLMAP's default, 30,
//    leaves the forward-moving images of a street walk out: lund registers 21 of 29 images with it,
//    29 of 29 with 15, at the same 0.66 px reprojection error). New points are triangulated from
//    rays 1 degree apart (COLMAP: 1.5), which ties forward-moving photos in (mapperArgs says why).
// 5. Features of photos of SIFT_MAX_IMAGE_SIZE pixels or more are found without first doubling
//    the image (firstOctave): 5 times faster, as many features.
// Always on the CPU: `--SiftExtraction.use_gpu 0`, `--SiftMatching.use_gpu 0`. COLMAP's console
// output (progress, warnings, errors) is the processing log; glog's verbose INFO files go to the
// work folder (GLOG_log_dir, colmapEnv in colmap-process.ts), not to /tmp.

import { MIN_IMAGES_WITH_POSITION_RATIO } from './pair-selection.ts';

export const EXHAUSTIVE_MAX_IMAGES = 60;
export const SEQUENTIAL_OVERLAP = 20;
/** Robust georegistration: a camera whose GPS position is further than this from the model's is an outlier (metres). */
export const ALIGNMENT_MAX_ERROR_METRES = 10;
/**
 * A calibrated camera further than this from its GPS position is a GPS outlier: flagged
 * `gps_outlier` in the calibrated cameras, and counted towards a folded model (model-strain.ts).
 */
export const GPS_OUTLIER_METRES = 3 * ALIGNMENT_MAX_ERROR_METRES;

export type MatcherKind = 'exhaustive' | 'pairs' | 'sequential';
/** Up to this many images, exhaustive matching (45 pairs at 10): selecting pairs saves little there. */
export const PAIRS_MIN_IMAGES = 10;

export interface ColmapPaths {
  database: string;
  images: string;
  /** Folder of the mapper's models (0, 1, ...). */
  sparse: string;
}

export interface CameraGroup {
  /** make / model / size / focal, for the log and the quality report. */
  label: string;
  make: string | null;
  model: string | null;
  width: number;
  height: number;
  /** Focal length prior in pixels; null: none known, COLMAP guesses. */
  focalPx: number | null;
  focalSource: '35mm-equivalent' | 'focal-plane-resolution' | 'none';
  /** Image file names (relative to the image folder). */
  images: string[];
}

export interface ImageIntrinsicsInput {
  name: string;
  width: number;
  height: number;
  make: string | null;
  model: string | null;
  focalLengthMm: number | null;
  focalLength35mm: number | null;
  /** Pixels per millimetre on the sensor along the image width, for the stored width (or null). */
  focalPlanePixelsPerMm: number | null;
}

/** Focal length in pixels from EXIF, with where it came from. */
export function focalFromExif(image: ImageIntrinsicsInput): { focalPx: number | null; source: CameraGroup['focalSource'] } {
  if (image.focalLength35mm && image.focalLength35mm > 0) {
    return { focalPx: (image.focalLength35mm / 36) * Math.max(image.width, image.height), source: '35mm-equivalent' };
  }
  if (image.focalLengthMm && image.focalPlanePixelsPerMm) {
    const sensorWidthMm = image.width / image.focalPlanePixelsPerMm;
    // A sensor narrower than 1 mm or wider than 60 mm means a resized image with stale EXIF.
    if (sensorWidthMm >= 1 && sensorWidthMm <= 60) return { focalPx: image.focalLengthMm * image.focalPlanePixelsPerMm, source: 'focal-plane-resolution' };
  }
  return { focalPx: null, source: 'none' };
}

/** One camera group per make / model / size / focal length (rounded to 0.1 px). */
export function groupCameras(images: ImageIntrinsicsInput[]): CameraGroup[] {
  const groups = new Map<string, CameraGroup>();
  for (const image of images) {
    const { focalPx, source } = focalFromExif(image);
    const key = [image.make ?? '', image.model ?? '', image.width, image.height, focalPx === null ? '' : focalPx.toFixed(1)].join('|');
    let group = groups.get(key);
    if (!group) {
      const name = [image.make, image.model].filter(Boolean).join(' ') || 'unknown camera';
      group = {
        label: `${name} ${image.width}x${image.height}${focalPx === null ? ', focal unknown' : `, f=${focalPx.toFixed(1)} px`}`,
        make: image.make,
        model: image.model,
        width: image.width,
        height: image.height,
        focalPx,
        focalSource: source,
        images: [],
      };
      groups.set(key, group);
    }
    group.images.push(image.name);
  }
  return [...groups.values()];
}

export function chooseMatcher(imageCount: number, imagesWithGps: number): MatcherKind {
  if (imageCount > PAIRS_MIN_IMAGES && imagesWithGps >= MIN_IMAGES_WITH_POSITION_RATIO * imageCount) return 'pairs';
  return imageCount <= EXHAUSTIVE_MAX_IMAGES ? 'exhaustive' : 'sequential';
}

export const MAPPER_MIN_INLIERS = 15;
/** Smallest triangulation angle of a new point while mapping (COLMAP's default: 1.5); mapperArgs says why. */
export const MAPPER_TRI_MIN_ANGLE_DEGREES = 1;


/** COLMAP's SiftExtraction.max_image_size: larger images are downscaled to this longest side first. */
export const SIFT_MAX_IMAGE_SIZE = 3200;

/**
 * COLMAP's camera model of a group (the head comment, 1, says why): RADIAL (f, cx, cy, k1, k2) for
 * photos of SIFT_MAX_IMAGE_SIZE or more, SIMPLE_RADIAL (f, cx, cy, k1) for smaller ones.
 */
export function cameraModel(group: Pick<CameraGroup, 'width' | 'height'>): 'RADIAL' | 'SIMPLE_RADIAL' {
  return Math.max(group.width, group.height) >= SIFT_MAX_IMAGE_SIZE ? 'RADIAL' : 'SIMPLE_RADIAL';
}

/**
 * SIFT's first octave for a group: COLMAP starts at -1, i.e. it doubles the image before building
 * the scale space, which finds more small-scale features on small images (lund's 1024 x 768 keep
 * it) but costs 4 times the pixels of the image itself in the first octave. An image as large as
 * SIFT_MAX_IMAGE_SIZE or larger (drone photos: 4000 x 2250 and up) is first downscaled to it, then
 * doubled again: there, octave 0 works on the downscaled image itself, finds as many features
 * (capped at max_num_features anyway) and extracts 5 times faster (3 brighton_beach photos: 59.4
 * → 11.6 s, 31,856 → 32,317 features; the whole set: bench/README.md, "Photogrammetry").
 */
export function firstOctave(group: Pick<CameraGroup, 'width' | 'height'>): -1 | 0 {
  return Math.max(group.width, group.height) >= SIFT_MAX_IMAGE_SIZE ? 0 : -1;
}

/**
 * `defaultOctaves`: COLMAP's own first octave for every image (the bare benchmark runs COLMAP as a
 * user would); the engine chooses it per group (firstOctave).
 */
export function featureExtractorArgs(paths: ColmapPaths, group: CameraGroup, imageListPath: string, defaultOctaves = false): string[] {
  const args = [
    'feature_extractor',
    '--database_path', paths.database,
    '--image_path', paths.images,
    '--image_list_path', imageListPath,
    '--ImageReader.single_camera', '1',
    '--ImageReader.camera_model', cameraModel(group),
    '--SiftExtraction.use_gpu', '0',
    '--SiftExtraction.max_image_size', String(SIFT_MAX_IMAGE_SIZE),
    ...(defaultOctaves ? [] : ['--SiftExtraction.first_octave', String(firstOctave(group))]),
  ];
  if (group.focalPx !== null) {
    args.push('--ImageReader.camera_params', [group.focalPx, group.width / 2, group.height / 2, ...(cameraModel(group) === 'RADIAL' ? [0, 0] : [0])].map((v) => String(Math.round(v * 1000) / 1000)).join(','));
  }
  return args;
}

export function matcherArgs(kind: Exclude<MatcherKind, 'pairs'>, paths: ColmapPaths): string[] {
  const common = ['--database_path', paths.database, '--SiftMatching.use_gpu', '0'];
  switch (kind) {
    case 'exhaustive':
      // Blocks of 10 images: the same pairs as one big block, with progress after each block.
      return ['exhaustive_matcher', ...common, '--ExhaustiveMatching.block_size', '10'];
    case 'sequential':
      return ['sequential_matcher', ...common, '--SequentialMatching.overlap', String(SEQUENTIAL_OVERLAP)];
  }
}

/** Matches and verifies the pairs listed in `pairListPath` ("name1 name2" lines, pair-selection.ts). */
export function matchesImporterArgs(paths: ColmapPaths, pairListPath: string): string[] {
  return ['matches_importer', '--database_path', paths.database, '--match_list_path', pairListPath, '--match_type', 'pairs', '--SiftMatching.use_gpu', '0'];
}

/**
 * `refineFocal`: false when every camera group has a focal length from EXIF. Bundle adjustment
 * then keeps it (and refines the distortion): on flat or forward-moving captures the focal length
 * and the depth of the scene are nearly interchangeable, and refining it lets it drift (lund:
 * 996 -> 692-732 px; brighton_beach: 2222 -> 2777 px, the points 10 m below OpenDroneMap's
 * reference model, 1.0 m with the focal kept), which the GPS alignment cannot see.
 */
export function mapperArgs(paths: ColmapPaths, refineFocal = true, attempt = 1): string[] {
  return [
    'mapper',
    ...(attempt > 1 ? ['--random_seed', String(attempt - 1)] : []),
    '--database_path', paths.database,
    '--image_path', paths.images,
    '--output_path', mapperOutput(paths, attempt),
    '--Mapper.abs_pose_min_num_inliers', String(MAPPER_MIN_INLIERS),
    '--Mapper.ba_refine_focal_length', refineFocal ? '1' : '0',
    // New points are triangulated from rays 1 degree apart instead of COLMAP's 1.5: a camera walking
    // forward sees what lies ahead under small angles, and at 1.5 degrees too few such points exist
    // for the next photo to be registered against (lund, on one database with every pair of the
    // photos after the street corner matched: 29 of 29 placed in 50 seeds of 50 at 1 degree, 21 of
    // 29 in 9 seeds of 24 at 1.5; with the selected pairs alone, 29 in 4 seeds of 10 against 2; a
    // CI run under load placed 21 in all of its 7 attempts at 1.5). Points still below
    // filter_min_tri_angle (1.5 degrees) after bundle adjustment are filtered out as before, so the
    // model's points are as well conditioned (mean reprojection error 0.65-0.72 px either way).
    '--Mapper.tri_min_angle', String(MAPPER_TRI_MIN_ANGLE_DEGREES),
    // Attempts after the first (which left images out or built no model) look for the initial pair
    // with half COLMAP's default triangulation angle and inlier count from the start, where COLMAP
    // relaxes them only after a search with its defaults found none. Lund's photos, taken walking
    // along a street, never pass the defaults (16 degrees with 100 inliers); on a database of its
    // selected pairs where COLMAP's own relaxation placed all 29 in 7 seeds of 24, starting relaxed
    // placed all 29 in 12 of 16 (mean reprojection error 0.63-0.72 px, once 0.89, either way).
    ...(attempt > 1 ? ['--Mapper.init_min_tri_angle', '8', '--Mapper.init_min_num_inliers', '50'] : []),
  ];
}

/** Mapper attempts: when one leaves images out, the mapper runs again with another random seed. */
export const MAPPER_ATTEMPTS = 3;
/**
 * Further attempts, one for each attempt that built no model. Such an attempt costs little (the
 * mapper gives up on its initial pair within seconds) and is not rare on a dozen street photos:
 * on lund's first 12, one mapper run in 18 built none, and one CI run saw three in a row.
 */
export const MAPPER_EXTRA_ATTEMPTS_WHEN_EMPTY = 3;
/**
 * Further attempts, once, when the usual ones (after the fallback's matching, with selected pairs)
 * still leave images out of a model that holds at least half of them: another seed can tie them in
 * (lund, one CI run under load: the eight photos after the street corner stayed out of every model,
 * 21 of 29, where other runs place all 29).
 */
export const MAPPER_EXTRA_ATTEMPTS_WHEN_INCOMPLETE = 2;

/**
 * With selected pairs, a mapper attempt that leaves images out is followed by another seed, or by
 * the fallback's matching (every pair of the missing images not matched yet), then more attempts.
 * Which one comes first is a rent-or-buy choice: another seed costs one mapper run and often
 * places everything (on lund, whose matching differs a little from run to run with COLMAP's
 * threads, one database of the selected pairs placed 29 of 29 in 7 seeds of 24, two others in 8
 * of 8), the fallback costs its pairs' matching (lund: 167 pairs, ~110 s, against 5-12 s for a
 * mapper run) and fails as often when the missing images had their pairs already. So seeds are
 * tried while the mapping spent so far costs less than the fallback would (at the seconds per pair
 * the selected pairs' matching took), at least MIN_SEEDS_BEFORE_FALLBACK and at most
 * MAX_SEEDS_BEFORE_FALLBACK: at worst about twice the cheaper choice's cost.
 */
export const MIN_SEEDS_BEFORE_FALLBACK = 2;
export const MAX_SEEDS_BEFORE_FALLBACK = 8;

export function anotherSeedBeforeFallback(spent: { attempts: number; mappingSeconds: number; fallbackSeconds: number }): boolean {
  if (spent.attempts < MIN_SEEDS_BEFORE_FALLBACK) return true;
  return spent.attempts < MAX_SEEDS_BEFORE_FALLBACK && spent.mappingSeconds < spent.fallbackSeconds;
}

/** The output folder of a mapper attempt (the first: paths.sparse). */
export function mapperOutput(paths: ColmapPaths, attempt: number): string {
  return attempt === 1 ? paths.sparse : `${paths.sparse}-${attempt}`;
}

/**
 * Georegistration to reference positions (`name x y z` lines, in a right-handed east/north/up
 * frame, metres or the output system's unit). `robust` (the default): cameras further than
 * `maxError` from the fitted similarity are left out of the fit (RANSAC); otherwise a plain
 * least-squares fit to every position.
 */
export function alignerArgs(input: string, output: string, referencePath: string, maxError: number, robust = true): string[] {
  return [
    'model_aligner',
    '--input_path', input,
    '--output_path', output,
    '--ref_images_path', referencePath,
    '--ref_is_gps', '0',
    '--alignment_type', 'custom',
    '--robust_alignment', robust ? '1' : '0',
    '--robust_alignment_max_error', String(maxError),
  ];
}

export function converterArgs(input: string, output: string): string[] {
  return ['model_converter', '--input_path', input, '--output_path', output, '--output_type', 'TXT'];
}
