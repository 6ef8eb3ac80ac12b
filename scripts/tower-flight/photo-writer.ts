// Turns a rendered frame of the tower flight (issue 36) into the JPEG a DJI drone would write: EXIF
// (IFD0 make/model, the EXIF IFD's focal lengths, time and exposure, the GPS IFD's position) through
// sharp's withExif, and DJI's XMP packet (drone-dji: gimbal and aircraft attitude, relative and
// absolute altitude, calibrated focal length in pixels) through withXmp: everything the platform's
// own reader (src/shared/image-metadata/analyze-image.ts) and photogrammetry engines look for.
//
// Limits of libvips's EXIF writer (sharp 0.35): GPSAltitudeRef is always written 0 (above sea
// level), so a negative altitude cannot be written (it is refused here rather than written wrongly);
// GPSVersionID comes out 2.2.0.0. The times are written as UTC with OffsetTimeOriginal "+00:00"
// (a DJI writes local time without an offset), so that readers place them exactly.
import sharp from 'sharp';
import type { GimbalAngles } from '../../src/shared/geo/rotation.ts';
import { djiXmpPacket, signed } from '../dji-xmp.ts';
import { focalPx } from './camera-models.ts';
import type { GeoPoint } from './geodesy.ts';
import { forkRandom } from './random.ts';
import type { CameraModel, CameraPose } from './scene-types.ts';

export interface Exposure {
  exposureTimeS: number;
  fNumber: number;
  iso: number;
}

/** A bright day's exposure of an M30T wide camera: 1/1000 s at f/2.8, ISO 100 (the renderer's motion blur uses the time). */
export const DEFAULT_EXPOSURE: Exposure = { exposureTimeS: 1 / 1000, fNumber: 2.8, iso: 100 };

export interface PhotoInfo {
  pose: CameraPose;
  camera: CameraModel;
  /** What the GNSS receiver read (gps-noise.ts `gpsReadings`), not the true position. */
  gps: GeoPoint;
  /** Barometric height above the take-off point (gps-noise.ts `relativeAltitudes`). */
  relativeAltitude: number;
  takenAt: Date;
  /** JPEG quality, default 92. */
  quality?: number;
  exposure?: Exposure;
  /** The aircraft's attitude (XMP Flight*Degree); default `flightAttitude(pose, seed)`. */
  flight?: GimbalAngles;
  /** Seed of the default aircraft attitude (default 0). */
  seed?: number;
}

/**
 * The aircraft's attitude when a photo is taken, seeded per photo: heading = the gimbal's yaw plus
 * up to ±3° (the gimbal turns a little relative to the body), pitch and roll within ±1.5° (hover trim).
 */
export function flightAttitude(pose: CameraPose, seed: number): GimbalAngles {
  const rng = forkRandom(seed, `attitude:${pose.file}`);
  let yaw = pose.yawDeg + rng.between(-3, 3);
  if (yaw > 180) yaw -= 360;
  if (yaw <= -180) yaw += 360;
  return { yaw, pitch: rng.between(-1.5, 1.5), roll: rng.between(-1.5, 1.5) };
}

/** The rendered JPEG re-encoded with DJI-like EXIF and XMP (module comment). */
export async function writePhoto(rendered: Buffer, info: PhotoInfo): Promise<Buffer> {
  const { camera, gps } = info;
  const meta = await sharp(rendered).metadata();
  if (meta.width !== camera.widthPx || meta.height !== camera.heightPx) {
    throw new RangeError(`rendered image is ${meta.width}x${meta.height}, the camera's ${camera.widthPx}x${camera.heightPx}`);
  }
  if (!(gps.altitude >= 0)) throw new RangeError(`GPS altitude ${gps.altitude} m: libvips cannot write altitudes below sea level`);
  const exposure = info.exposure ?? DEFAULT_EXPOSURE;
  const when = exifDate(info.takenAt);
  return sharp(rendered)
    .jpeg({ quality: info.quality ?? 92 })
    .withExif({
      IFD0: {
        Make: camera.make,
        Model: camera.model,
        Orientation: '1',
        Software: 'open-inspection tower-flight, synthetic',
        DateTime: when,
        ImageDescription: 'default',
      },
      IFD2: {
        ExposureTime: exposure.exposureTimeS < 1 ? `1/${Math.round(1 / exposure.exposureTimeS)}` : `${Math.round(exposure.exposureTimeS * 1000)}/1000`,
        FNumber: `${Math.round(exposure.fNumber * 100)}/100`,
        ISOSpeedRatings: String(Math.round(exposure.iso)),
        DateTimeOriginal: when,
        DateTimeDigitized: when,
        OffsetTimeOriginal: '+00:00',
        SubSecTimeOriginal: String(info.takenAt.getUTCMilliseconds()).padStart(3, '0'),
        FocalLength: `${Math.round(camera.focalLengthMm * 100)}/100`,
        FocalLengthIn35mmFilm: String(Math.round(camera.focalLength35mm)),
        PixelXDimension: String(camera.widthPx),
        PixelYDimension: String(camera.heightPx),
        ColorSpace: '1',
      },
      IFD3: {
        GPSLatitudeRef: gps.latitude < 0 ? 'S' : 'N',
        GPSLatitude: dmsRational(gps.latitude),
        GPSLongitudeRef: gps.longitude < 0 ? 'W' : 'E',
        GPSLongitude: dmsRational(gps.longitude),
        GPSAltitudeRef: '0',
        GPSAltitude: `${Math.round(gps.altitude * 1000)}/1000`,
      },
    })
    .withXmp(djiXmp(info))
    .toBuffer();
}

/** "YYYY:MM:DD HH:MM:SS" in UTC. */
function exifDate(d: Date): string {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  return `${iso.slice(0, 10).replaceAll('-', ':')} ${iso.slice(11, 19)}`;
}

/** Degrees as EXIF's three rationals "d/1 m/1 s*10000/10000" (a ten-thousandth of a second: 3 µm). */
function dmsRational(value: number): string {
  const totalTenThousandths = Math.round(Math.abs(value) * 3600 * 10000);
  const degrees = Math.floor(totalTenThousandths / (3600 * 10000));
  const minutes = Math.floor((totalTenThousandths - degrees * 3600 * 10000) / (60 * 10000));
  const seconds = totalTenThousandths - (degrees * 3600 + minutes * 60) * 10000;
  return `${degrees}/1 ${minutes}/1 ${seconds}/10000`;
}


/**
 * DJI's XMP (../dji-xmp.ts): the basics and the drone-dji values, signed.
 * FlightX/Y/ZSpeed are DJI's north, east and down speeds (m/s). CalibratedFocalLength and the
 * optical centre are in pixels (the renderer's pinhole: no distortion, centre of the image).
 */
function djiXmp(info: PhotoInfo): string {
  const { camera, gps, pose } = info;
  const flight = info.flight ?? flightAttitude(pose, info.seed ?? 0);
  const iso = info.takenAt.toISOString().slice(0, 19);
  const attributes: [string, string][] = [
    ['tiff:Make', camera.make],
    ['tiff:Model', camera.model],
    ['dc:format', 'image/jpeg'],
    ['xmp:CreateDate', iso],
    ['xmp:ModifyDate', iso],
    ['drone-dji:GpsLatitude', signed(gps.latitude, 9)],
    ['drone-dji:GpsLongitude', signed(gps.longitude, 9)],
    ['drone-dji:AbsoluteAltitude', signed(gps.altitude, 3)],
    ['drone-dji:RelativeAltitude', signed(info.relativeAltitude)],
    ['drone-dji:GimbalRollDegree', signed(pose.rollDeg)],
    ['drone-dji:GimbalYawDegree', signed(pose.yawDeg)],
    ['drone-dji:GimbalPitchDegree', signed(pose.pitchDeg)],
    ['drone-dji:FlightRollDegree', signed(flight.roll)],
    ['drone-dji:FlightYawDegree', signed(flight.yaw)],
    ['drone-dji:FlightPitchDegree', signed(flight.pitch)],
    ['drone-dji:FlightXSpeed', signed(pose.velocity[1])],
    ['drone-dji:FlightYSpeed', signed(pose.velocity[0])],
    ['drone-dji:FlightZSpeed', signed(-pose.velocity[2])],
    ['drone-dji:CamReverse', '0'],
    ['drone-dji:GimbalReverse', '0'],
    ['drone-dji:RtkFlag', '0'],
    ['drone-dji:CalibratedFocalLength', focalPx(camera).toFixed(3)],
    ['drone-dji:CalibratedOpticalCenterX', (camera.widthPx / 2).toFixed(3)],
    ['drone-dji:CalibratedOpticalCenterY', (camera.heightPx / 2).toFixed(3)],
  ];
  return djiXmpPacket(attributes);
}
