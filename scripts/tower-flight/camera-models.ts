// The cameras the tower-flight generator (issue 36) photographs with: a DJI Matrice 30T-like wide
// camera (a usual tower-inspection drone: 12 MP, 24 mm equivalent), and a small one
// with the same field of view for quick runs. The flight plan takes its fields of view from these,
// the renderer its image size and focal length in pixels, and the EXIF its focal lengths.
import type { CameraModel } from './scene-types.ts';

/**
 * DJI M30T wide camera: 1/2" CMOS of 6.4 x 4.8 mm, 4000 x 3000 pixels (1.6 µm), 4.5 mm lens
 * (24 mm equivalent as DJI states it, by the diagonal). Horizontal field of view
 * 2·atan(6.4 / 2 / 4.5) = 70.8°, vertical 56.1°; focal 2812 px. 12 MP rather than a 20 MP
 * camera: the default flight of ~150 photos must render in 10 minutes on 2 CPU cores.
 */
export const DEFAULT_CAMERA: CameraModel = {
  make: 'DJI',
  model: 'M30T',
  widthPx: 4000,
  heightPx: 3000,
  focalLengthMm: 4.5,
  sensorWidthMm: 6.4,
  focalLength35mm: 24,
};

/**
 * The same optics at 1600 x 1200 (the sensor read out at a lower resolution): same focal length,
 * sensor width and fields of view, 1125 px focal length. For `--small` runs and tests.
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
