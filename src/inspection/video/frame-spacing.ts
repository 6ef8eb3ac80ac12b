// How far apart the frames taken from an inspection's videos are. By time, not by scene change:
// photogrammetry needs every part of the asset seen from neighbouring viewpoints with high overlap,
// and a drone films at a steady, slow speed (an orbit or a facade pass at 1-5 m/s, 10-40 m away).
// One frame a second then moves the camera 1-5 m while each frame spans tens of metres: 85-95 %
// overlap, like a photo survey. Scene-change selection does the opposite of what is needed: it
// keeps a frame once the picture has changed a lot (overlap already lost) and nothing while the
// drone slowly circles a tower. The cap keeps a long video from flooding the reconstruction (the
// interval grows instead: 500 frames over 15 minutes is still one per 1.8 s); the floor gives a
// short clip enough views to be reconstructed at all.

/** Target time between two frames, seconds. */
export const FRAME_INTERVAL_SECONDS = 1;
/** At most this many frames per inspection (all its videos together). */
export const MAX_FRAMES = 500;
/** At least this many frames per inspection when the videos are shorter than that many intervals. */
export const MIN_FRAMES = 10;

/** Seconds between frames for videos lasting `totalSeconds` in all. */
export function frameInterval(totalSeconds: number): number {
  const capped = Math.max(FRAME_INTERVAL_SECONDS, totalSeconds / MAX_FRAMES);
  return Math.min(capped, totalSeconds / MIN_FRAMES);
}

/** The interval as ffmpeg's fps filter rate (frames per second, a ratio of integers to the millisecond). */
export function frameRate(intervalSeconds: number): { num: number; den: number } {
  return { num: 1000, den: Math.max(1, Math.round(intervalSeconds * 1000)) };
}
