// Image metadata extraction for the "Analyzing input images" step: position, size, camera and
// orientation of each registered photo, read from the head of the file only.
import { cameraToEnuQuaternion, type GimbalAngles, type Quaternion } from '../geo/rotation.ts';
import { detectFormat, locateJpeg, locatePng, locateTiff, type ImageFormat, type Located } from './containers.ts';
import { captureTime, gpsAltitude, gpsPosition, num, parseTiffTags, parseXmp, positive, TAG, text } from './metadata.ts';
import { RangeSource, type ReadRange } from './range-source.ts';

export type { ReadRange } from './range-source.ts';
export type { ImageFormat } from './containers.ts';

export interface ImageMetadata {
  /** Pixel size as stored (JPEG SOF, PNG IHDR, TIFF IFD0), before any EXIF orientation is applied. */
  width: number;
  height: number;
  /** WGS84 degrees, south and west negative; null when the file has no (valid) GPS position. */
  latitude: number | null;
  longitude: number | null;
  /** GPS altitude in metres above sea level (negative below, GPSAltitudeRef = 1). */
  altitude: number | null;
  /** DJI `drone-dji:RelativeAltitude`: metres above the take-off point. */
  relativeAltitude: number | null;
  make: string | null;
  model: string | null;
  /** EXIF FocalLength, millimetres. */
  focalLengthMm: number | null;
  /** EXIF FocalLengthIn35mmFormat, millimetres. */
  focalLength35mm: number | null;
  /** See `captureTime` in metadata.ts for how a time without zone is placed. */
  capturedAt: Date | null;
  /** EXIF Orientation (1-8: how a viewer rotates/flips the stored pixels); null when absent. */
  exifOrientation: number | null;
  /** Camera gimbal angles in degrees (DJI `drone-dji:Gimbal{Yaw,Pitch,Roll}Degree`). */
  gimbal: GimbalAngles | null;
  /** Aircraft attitude in degrees (DJI `drone-dji:Flight{Yaw,Pitch,Roll}Degree`), for information. */
  flight: GimbalAngles | null;
  /**
   * Camera orientation from `gimbal`: the unit quaternion [w, x, y, z] (Hamilton, scalar first,
   * w >= 0) rotating vectors from the camera frame (x right, y down, z along the optical axis) to
   * local East-North-Up; see `cameraToEnuQuaternion` in src/shared/geo/rotation.ts.
   * null when there is no gimbal data (flight attitude alone does not give it).
   */
  quaternion: Quaternion | null;
  format: ImageFormat;
}

export type ImageAnalysis = { ok: true; metadata: ImageMetadata } | { ok: false; reason: string };

export interface AnalyzeOptions {
  /** Bytes read first from offset 0 (default 64 KiB); enough for the metadata of nearly all photos. */
  headSize?: number;
  /** Least bytes fetched by each further read beyond the head (default 1 KiB). */
  readAhead?: number;
}

const DEFAULT_HEAD_SIZE = 64 * 1024;
const DEFAULT_READ_AHEAD = 1024;

/**
 * Reads the metadata of one image (JPEG, PNG or TIFF) of `size` bytes through `readRange(start,
 * end)` (end exclusive). It reads the first 64 KiB, then only the few further bytes it needs: JPEG
 * segments are followed by their lengths up to the frame header (SOF) without reading the segments
 * in between; PNG chunks likewise up to the image data; TIFF directories where they point.
 *
 * Returns `{ ok: false, reason }` for an empty, truncated, corrupt or non-image file; it does not
 * throw for anything in the file's content. An error thrown by `readRange` itself (storage
 * unavailable) is passed on, so that the caller can retry instead of rejecting the image.
 *
 * `quaternion` ([w, x, y, z], camera x right / y down / z forward → East-North-Up) comes from the
 * DJI gimbal yaw (degrees clockwise from north), pitch (0 = horizontal, -90 = straight down) and
 * roll, as computed by `cameraToEnuQuaternion`; null without gimbal data.
 */
export async function analyzeImage(
  readRange: ReadRange,
  size: number,
  options: AnalyzeOptions = {},
): Promise<ImageAnalysis> {
  // Errors of the caller's readRange are marked, to be passed on; any other error is a parsing failure.
  const marked: ReadRange = async (start, end) => {
    try {
      return await readRange(start, end);
    } catch (error) {
      throw new ReadError(error);
    }
  };
  const src = new RangeSource(marked, size, options.readAhead ?? DEFAULT_READ_AHEAD);
  try {
    return await analyze(src, options.headSize ?? DEFAULT_HEAD_SIZE);
  } catch (error) {
    if (error instanceof ReadError) throw error.cause;
    // Anything else is a bug meeting an unexpected file layout: report it as an unreadable image.
    return { ok: false, reason: `unreadable image: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Wraps errors of the caller's readRange so that they are told apart from parsing failures. */
class ReadError extends Error {
  constructor(override readonly cause: unknown) {
    super('readRange failed');
  }
}

async function analyze(src: RangeSource, headSize: number): Promise<ImageAnalysis> {
  if (!Number.isSafeInteger(src.size) || src.size < 0) return { ok: false, reason: `invalid object size: ${src.size}` };
  if (src.size === 0) return { ok: false, reason: 'empty file' };
  const head = await src.read(0, Math.max(16, headSize));
  const format = detectFormat(head);
  if (!format) return { ok: false, reason: 'not a JPEG, PNG or TIFF image' };

  const located: Located =
    format === 'jpeg' ? await locateJpeg(src) : format === 'png' ? await locatePng(src) : await locateTiff(src);
  if (!located.ok) return located;
  const { info } = located;

  const tags = await parseTiffTags(info.tiff);
  // Only DJI's namespace is used from the XMP: skip decoding packets without it (saves ~0.1 ms).
  const dji = info.xmp?.includes('drone-dji') ? (parseXmp(info.xmp)['drone-dji'] ?? {}) : {};

  // JPEG and PNG sizes come from the container; a TIFF's from its IFD0 tags.
  const width = format === 'tiff' ? positive(tags.ifd0[TAG.ImageWidth]) : info.width;
  const height = format === 'tiff' ? positive(tags.ifd0[TAG.ImageHeight]) : info.height;
  if (width === null || height === null) return { ok: false, reason: `${format.toUpperCase()} without image width and height` };

  const position = gpsPosition(tags.gps);
  const gimbal = angles(dji.GimbalYawDegree, dji.GimbalPitchDegree, dji.GimbalRollDegree);
  const orientation = num(tags.ifd0[TAG.Orientation]);
  return {
    ok: true,
    metadata: {
      width,
      height,
      latitude: position?.latitude ?? null,
      longitude: position?.longitude ?? null,
      altitude: gpsAltitude(tags.gps),
      relativeAltitude: num(dji.RelativeAltitude),
      make: text(tags.ifd0[TAG.Make]),
      model: text(tags.ifd0[TAG.Model]),
      focalLengthMm: positive(tags.exif[TAG.FocalLength]),
      focalLength35mm: positive(tags.exif[TAG.FocalLengthIn35mmFormat]),
      capturedAt: captureTime(tags.exif, tags.gps),
      exifOrientation: orientation !== null && orientation >= 1 && orientation <= 8 ? orientation : null,
      gimbal,
      flight: angles(dji.FlightYawDegree, dji.FlightPitchDegree, dji.FlightRollDegree),
      quaternion: gimbal ? cameraToEnuQuaternion(gimbal) : null,
      format,
    },
  };
}

/** Yaw and pitch are required; a missing roll is 0. */
function angles(yaw: unknown, pitch: unknown, roll: unknown): GimbalAngles | null {
  const y = num(yaw);
  const p = num(pitch);
  if (y === null || p === null) return null;
  return { yaw: y, pitch: p, roll: num(roll) ?? 0 };
}

