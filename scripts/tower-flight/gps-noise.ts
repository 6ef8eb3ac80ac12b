// What the drone's GNSS receiver and barometer write into each photo of the tower flight (issue 36),
// as opposed to where the camera truly was: a seeded error that drifts slowly over the flight, like
// a real single-frequency receiver without RTK (the errors of consecutive photos are strongly
// correlated; a whole flight is offset by a few metres that wander).
//
// Model: each axis's error is a first-order Gauss-Markov process (an exponentially correlated
// random walk), e(t + dt) = e(t)·exp(-dt/τ) + σ·sqrt(1 - exp(-2dt/τ))·n, started from its stationary
// distribution, so that at any photo the error has standard deviation σ:
//   east and north   σ = 1.5 m each (the "±1.5 m horizontal" of drone specifications), τ = 90 s;
//   up               σ = 3 m (GNSS heights are about twice as poor as positions), τ = 120 s.
// Over one ~9-minute flight that is only 5-6 correlation times, so a single flight's spread is
// itself random (a flight may be off by 0.5 m or by 3 m); pooled over many seeds it is σ.
//
// The barometric RelativeAltitude (DJI's height above the take-off point) is the true height above
// the take-off point plus its own Gauss-Markov error of σ = 0.3 m, τ = 60 s.
import { localToGeodeticConverter, type GeoPoint } from './geodesy.ts';
import { forkRandom, type Random } from './random.ts';
import type { CameraPose, Vec3 } from './scene-types.ts';

export const GPS_SIGMA_HORIZONTAL_M = 1.5;
export const GPS_SIGMA_VERTICAL_M = 3;
export const GPS_TAU_HORIZONTAL_S = 90;
export const GPS_TAU_VERTICAL_S = 120;
export const BAROMETER_SIGMA_M = 0.3;
export const BAROMETER_TAU_S = 60;

/** One axis of a first-order Gauss-Markov error, sampled at the given times (seconds, increasing). */
function gaussMarkov(times: readonly number[], sigma: number, tau: number, rng: Random): number[] {
  const out: number[] = [];
  let e = sigma * rng.gaussian();
  let last = times[0] ?? 0;
  for (const t of times) {
    const decay = Math.exp(-Math.max(0, t - last) / tau);
    e = e * decay + sigma * Math.sqrt(1 - decay * decay) * rng.gaussian();
    out.push(e);
    last = t;
  }
  return out;
}

/** The GNSS error (east, north, up metres) of each photo: deterministic for a seed and the photos' times. */
export function gpsErrors(poses: readonly CameraPose[], seed: number): Vec3[] {
  const rng = forkRandom(seed, 'gps');
  const times = poses.map((p) => p.timeS);
  const east = gaussMarkov(times, GPS_SIGMA_HORIZONTAL_M, GPS_TAU_HORIZONTAL_S, rng);
  const north = gaussMarkov(times, GPS_SIGMA_HORIZONTAL_M, GPS_TAU_HORIZONTAL_S, rng);
  const up = gaussMarkov(times, GPS_SIGMA_VERTICAL_M, GPS_TAU_VERTICAL_S, rng);
  return poses.map((_, i) => [east[i], north[i], up[i]]);
}

/**
 * The position each photo's EXIF GPS tags and XMP AbsoluteAltitude carry: the true position plus
 * `gpsErrors`, as WGS 84 latitude/longitude and EGM96 altitude around the site's `base`.
 */
export function gpsReadings(poses: readonly CameraPose[], seed: number, base: GeoPoint): GeoPoint[] {
  const toGeodetic = localToGeodeticConverter(base);
  const errors = gpsErrors(poses, seed);
  return poses.map((p, i) => toGeodetic([p.position[0] + errors[i][0], p.position[1] + errors[i][1], p.position[2] + errors[i][2]]));
}

/**
 * DJI's `RelativeAltitude` of each photo: height above the take-off point (`takeOff`, local ENU, on
 * the ground, see flight-plan.ts `takeOffPoint`) by the barometer, with its drifting error.
 */
export function relativeAltitudes(poses: readonly CameraPose[], seed: number, takeOff: Vec3): number[] {
  const errors = gaussMarkov(poses.map((p) => p.timeS), BAROMETER_SIGMA_M, BAROMETER_TAU_S, forkRandom(seed, 'barometer'));
  return poses.map((p, i) => p.position[2] - takeOff[2] + errors[i]);
}
