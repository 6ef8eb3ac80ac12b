// The cameras the tower-flight generator (issue 36) photographs with: a DJI Mavic 3 Enterprise-like
// wide camera (the usual tower-inspection drone: 4/3" sensor, 24 mm equivalent), and a small one
// with the same field of view for quick runs. The flight plan takes its fields of view from these,
// the renderer its image size and focal length in pixels, and the EXIF its focal lengths.
import type { CameraModel } from './scene-types.ts';

/**
 * DJI M3E wide camera: 4/3" CMOS of 17.3 x 13.0 mm, 5280 x 3956 pixels, 12.29 mm lens
 * (24 mm equivalent as DJI states it, by the diagonal). Horizontal field of view
 * 2·atan(17.3 / 2 / 12.29) = 70.3°, vertical 55.6°; 3.28 µm pixels, focal 3751 px.
 */
export const DEFAULT_CAMERA: CameraModel = {
  make: 'DJI',
  model: 'M3E',
  widthPx: 5280,
  heightPx: 3956,
  focalLengthMm: 12.29,
  sensorWidthMm: 17.3,
  focalLength35mm: 24,
};

/**
 * The same optics at 1600 x 1200 (the sensor read out at a lower resolution): same focal length,
 * sensor width and fields of view, 1137 px focal length. For `--small` runs and tests.
 */
export const SMALL_CAMERA: CameraModel = { ...DEFAULT_CAMERA, widthPx: 1600, heightPx: 1200 };

/** Focal length in pixels (square pixels). */
export function focalPx(camera: CameraModel): number {
  return (camera.focalLengthMm / camera.sensorWidthMm) * camera.widthPx;
}

/** Horizontal and vertical fields of view, radians. */
export function fieldOfView(camera: CameraModel): { horizontalRad: number; verticalRad: number } {
  const f = focalPx(camera);
  return { horizontalRad: 2 * Math.atan(camera.widthPx / 2 / f), verticalRad: 2 * Math.atan(camera.heightPx / 2 / f) };
}
