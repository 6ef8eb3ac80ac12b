// truth.json of a generated tower flight (issue 36): what the scene really holds and where each
// photo was really taken, for the checks outside the repository that score an inspection of the
// generated photos against it.
//
// The required shape is fixed (those checks read it):
//   { tower: { base: [lat, lon, alt], height_m, type },
//     antennas: [{ type, center: [lat, lon, alt], azimuth_deg, downtilt_deg, plumb_deg, width_m, height_m, depth_m }],
//     cameras: [{ file, position: [lat, lon, alt] }] }
// with WGS 84 latitudes/longitudes, EGM96 altitudes, `type` a CONTRACT model_type (panel_antenna,
// microwave_antenna, ancillary_box) and tower.type monopole or lattice. Everything else is extra
// (local coordinates, ids, the true gimbal angles and camera quaternions, the camera block) and may
// grow; the required fields may not change.
import { cameraToEnuQuaternion } from '../../src/shared/geo/rotation.ts';
import { focalPx } from './camera-models.ts';
import { localToGeodeticConverter, type GeoPoint } from './geodesy.ts';
import type { CameraModel, CameraPose, Equipment, EquipmentType, SceneLayout, Vec3 } from './scene-types.ts';

type Triple = [number, number, number];

const TYPE_ORDER: Record<EquipmentType, number> = { panel_antenna: 0, ancillary_box: 1, microwave_antenna: 2 };

/** Optional records of what the photos carry, to report beside the truth. */
export interface WrittenRecords {
  /** The GNSS position written into each photo (same order as the poses). */
  gps?: GeoPoint[];
  /** The barometric RelativeAltitude written into each photo. */
  relativeAltitude?: number[];
}

/** Rounded for a readable file: 1e-9° is 0.1 mm, altitudes and local metres to 0.1 mm, angles to 1e-6°. */
const round = (v: number, digits: number) => Number(v.toFixed(digits));
const geo = (g: GeoPoint): Triple => [round(g.latitude, 10), round(g.longitude, 10), round(g.altitude, 4)];
const local = (p: Vec3): Triple => [round(p[0], 4), round(p[1], 4), round(p[2], 4)];

/** Antennas in a fixed order: by level, sector, type (panel, box, dish), then id. */
function compareEquipment(a: Equipment, b: Equipment): number {
  return a.level - b.level || a.sector - b.sector || TYPE_ORDER[a.type] - TYPE_ORDER[b.type] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The object written as truth.json (module comment). */
export function buildTruth(layout: SceneLayout, poses: readonly CameraPose[], camera: CameraModel, records: WrittenRecords = {}) {
  const base = layout.site.base;
  const toGeo = localToGeodeticConverter(base);
  const top: Vec3 = [0, 0, layout.tower.heightM];
  return {
    frame:
      'local East-North-Up metres (x east, y true north, z up along the ellipsoid normal) with its origin at the tower base point; ' +
      'latitude/longitude WGS 84 through ECEF, altitudes EGM96 heights taken as base altitude + up (the geoid flat over the site)',
    seed: layout.seed,
    tower: {
      base: geo({ latitude: base.latitude, longitude: base.longitude, altitude: base.altitude }),
      height_m: layout.tower.heightM,
      type: layout.tower.type,
      base_radius_m: layout.tower.baseRadiusM,
      top_radius_m: layout.tower.topRadiusM,
      centre_line: { bottom: geo(toGeo([0, 0, 0])), top: geo(toGeo(top)), bottom_local: local([0, 0, 0]), top_local: local(top) },
      verticality_deg: 0,
      levels: layout.levels.map((level, index) => ({
        level: index,
        height_m: level.heightM,
        mount_radius_m: level.mountRadiusM,
        sector_azimuths_deg: level.sectors.map((s) => s.azimuthDeg),
      })),
    },
    antennas: [...layout.equipment].sort(compareEquipment).map((e) => ({
      type: e.type,
      center: geo(toGeo(e.centre)),
      azimuth_deg: e.azimuthDeg,
      downtilt_deg: e.downtiltDeg,
      plumb_deg: e.plumbDeg,
      width_m: e.widthM,
      height_m: e.heightM,
      depth_m: e.depthM,
      id: e.id,
      level: e.level,
      sector: e.sector,
      center_local: local(e.centre),
      height_above_base_m: round(e.centre[2], 4),
    })),
    cameras: poses.map((pose, i) => {
      const q = cameraToEnuQuaternion({ yaw: pose.yawDeg, pitch: pose.pitchDeg, roll: pose.rollDeg });
      return {
        file: pose.file,
        position: geo(toGeo(pose.position)),
        position_local: local(pose.position),
        yaw_deg: round(pose.yawDeg, 6),
        pitch_deg: round(pose.pitchDeg, 6),
        roll_deg: round(pose.rollDeg, 6),
        quaternion_wxyz: q.map((v) => round(v, 9)),
        segment: pose.segment,
        time_s: pose.timeS,
        // As written in the EXIF: the noisy reading, its altitude ellipsoidal (WGS 84), not EGM96.
        ...(records.gps ? { gps_written: geo(records.gps[i]) } : {}),
        ...(records.relativeAltitude ? { relative_altitude_written: round(records.relativeAltitude[i], 3) } : {}),
      };
    }),
    camera: {
      make: camera.make,
      model: camera.model,
      width_px: camera.widthPx,
      height_px: camera.heightPx,
      focal_length_mm: camera.focalLengthMm,
      focal_length_35mm: camera.focalLength35mm,
      sensor_width_mm: camera.sensorWidthMm,
      focal_px: round(focalPx(camera), 4),
      principal_point_px: [camera.widthPx / 2, camera.heightPx / 2],
      distortion: 'none (pinhole)',
      quaternion_convention: 'Hamilton [w, x, y, z] rotating camera (x right, y down, z forward) to local ENU, src/shared/geo/rotation.ts',
    },
  };
}

export type Truth = ReturnType<typeof buildTruth>;
