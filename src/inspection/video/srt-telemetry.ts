// DJI's `.SRT` telemetry sidecar: a subtitle file whose cues carry the drone's position while the
// video records (one cue per frame on recent models, one per second on older ones). Two layouts
// are read:
// - bracketed key-values (Mavic 2/3, Air 2, Mini 2/3/4 …):
//     [latitude: 55.698166] [longitude: 13.195388] [rel_alt: 30.000 abs_alt: 67.000]
//   (some firmware writes `longtitude`, `[altitude: 37.1]`, or spaces before the colon);
// - `GPS(lon,lat,alt)` (Phantom 3/4, Mavic Pro, Inspire): GPS(13.1953,55.6981,37) BAROMETER:30.1
// Altitude, for EXIF GPSAltitude (above sea level): abs_alt, else altitude, else the third GPS()
// value, else rel_alt (above the take-off point; better than none for relative geometry).
// A cue without a position fix (no coordinates, or DJI's 0,0) is skipped.

import { CappedLineSplitter } from './capped-lines.ts';

export interface TelemetrySample {
  /** Seconds from the start of the video (the cue's start). */
  t: number;
  latitude: number;
  longitude: number;
  altitude: number | null;
  /** The cue's date and time as the drone wrote it (local time, no zone): "2024-06-01 10:00:00.500". */
  localTime: string | null;
}

export interface Position {
  latitude: number;
  longitude: number;
  altitude: number | null;
}

// An uploaded .SRT is hostile input: it is read as a stream, line by line with each line capped
// (capped-lines.ts), every pattern runs on one bounded line or cue and none can backtrack over a
// long run (the cue time is anchored at the line's start: unanchored, `(\d+):` was quadratic on a
// run of digits, 250,000 of them froze the process for 78 s), and the reader yields to the event
// loop every few milliseconds, so the APIs answer while a large file is parsed. A file beyond
// MAX_TELEMETRY_BYTES or MAX_TELEMETRY_CUES is refused (the video's extraction fails with the
// reason); lines beyond MAX_TELEMETRY_LINE_CHARS are skipped and counted (no DJI line comes near).

/** Larger .SRT files are refused: DJI writes ~9 KB a second of video at 30 fps. */
export const MAX_TELEMETRY_BYTES = 64 * 1024 ** 2;
/** Longer lines are skipped (DJI's longest are ~300 characters). */
export const MAX_TELEMETRY_LINE_CHARS = 4096;
/** A cue's text beyond this is ignored (a DJI cue is 3-5 lines). */
const MAX_CUE_CHARS = 16 * 1024;
/** More positioned cues than this are refused: one per frame is 216,000 for an hour at 60 fps. */
export const MAX_TELEMETRY_CUES = 250_000;
/** The reader yields to the event loop after this much parsing. */
const PARSE_SLICE_MS = 5;

const NUMBER = String.raw`(-?\d+(?:\.\d+)?)`;
const CUE_TIME = /^\s*(\d{1,9}):(\d{2}):(\d{2})[,.](\d{1,3})\s*-->/;
const field = (name: string) => new RegExp(String.raw`\b${name}\s*:\s*${NUMBER}`, 'i');
const LATITUDE = field('latitude');
const LONGITUDE = field('longt?itude');
const ABS_ALT = field('abs_alt');
const REL_ALT = field('rel_alt');
const ALTITUDE = field('altitude');
const GPS_TUPLE = new RegExp(String.raw`GPS\s*\(\s*${NUMBER}\s*,\s*${NUMBER}\s*(?:,\s*${NUMBER}\s*)?\)`, 'i');
const LOCAL_TIME = /(\d{4})[-.](\d{2})[-.](\d{2})\s+(\d{2}):(\d{2}):(\d{2})(?:[.,:](\d{1,3}))?/;

export interface TelemetryReading {
  /** Positioned samples in time order. */
  samples: TelemetrySample[];
  /** Lines skipped for being longer than MAX_TELEMETRY_LINE_CHARS. */
  overlongLines: number;
  /** Why the file is refused (too large, too many cues), else null; samples are then incomplete. */
  refusal: string | null;
}

/** Cues (SRT blocks) read line by line: a cue starts at its time line and ends at a blank line or the next cue. */
class SrtReader {
  readonly samples: TelemetrySample[] = [];
  overlongLines = 0;
  refusal: string | null = null;
  private cue: { t: number; body: string } | null = null;
  readonly lines = new CappedLineSplitter(MAX_TELEMETRY_LINE_CHARS, (line, truncated) => this.line(line, truncated));

  private line(line: string, truncated: boolean): void {
    if (this.refusal) return;
    if (truncated) {
      this.overlongLines++; // not telemetry: skipped, the cue around it goes on
      return;
    }
    if (!line.trim()) return this.endCue();
    const time = CUE_TIME.exec(line);
    if (time) {
      this.endCue();
      const t = Number(time[1]) * 3600 + Number(time[2]) * 60 + Number(time[3]) + Number(time[4].padEnd(3, '0')) / 1000;
      this.cue = { t, body: line.slice(time[0].length) };
    } else if (this.cue && this.cue.body.length + line.length < MAX_CUE_CHARS) this.cue.body += `\n${line}`;
  }

  endCue(): void {
    const cue = this.cue;
    this.cue = null;
    if (!cue) return;
    const position = positionOf(cue.body);
    if (!position) return;
    if (this.samples.length >= MAX_TELEMETRY_CUES) {
      this.refusal = `holds more than ${MAX_TELEMETRY_CUES.toLocaleString('en')} positioned cues: not the DJI telemetry file of one video`;
      return;
    }
    const local = LOCAL_TIME.exec(cue.body);
    const localTime = local ? `${local[1]}-${local[2]}-${local[3]} ${local[4]}:${local[5]}:${local[6]}${local[7] ? `.${local[7].padEnd(3, '0')}` : ''}` : null;
    this.samples.push({ t: cue.t, ...position, localTime });
  }

  finish(): TelemetryReading {
    this.lines.end();
    this.endCue();
    return { samples: this.samples.sort((a, b) => a.t - b.t), overlongLines: this.overlongLines, refusal: this.refusal };
  }
}

/** Samples in time order; an empty list when the text holds no positioned cue. */
export function parseDjiSrt(text: string): TelemetrySample[] {
  const reader = new SrtReader();
  reader.lines.write(text.replace(/^\uFEFF/, ''));
  return reader.finish().samples;
}

/**
 * The .SRT streamed from `body` (bytes), at most MAX_TELEMETRY_BYTES of it (the stream is
 * abandoned beyond, with the refusal), parsed in slices between which the event loop runs.
 */
export async function readDjiSrt(body: AsyncIterable<Uint8Array>): Promise<TelemetryReading> {
  const reader = new SrtReader();
  const decoder = new TextDecoder('utf-8'); // drops a leading BOM
  let bytes = 0;
  let sliceStarted = performance.now();
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > MAX_TELEMETRY_BYTES) {
      reader.refusal = `is larger than ${MAX_TELEMETRY_BYTES / 1024 ** 2} MB: not a DJI telemetry file`;
      break;
    }
    for (let offset = 0; offset < chunk.byteLength && !reader.refusal; offset += 64 * 1024) {
      reader.lines.write(decoder.decode(chunk.subarray(offset, offset + 64 * 1024), { stream: true }));
      if (performance.now() - sliceStarted > PARSE_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
    }
    if (reader.refusal) break;
  }
  if (!reader.refusal) reader.lines.write(decoder.decode());
  return reader.finish();
}

function positionOf(body: string): Position | null {
  const value = (pattern: RegExp) => {
    const m = pattern.exec(body);
    return m ? Number(m[1]) : null;
  };
  let latitude = value(LATITUDE);
  let longitude = value(LONGITUDE);
  let altitude = value(ABS_ALT) ?? value(ALTITUDE);
  const tuple = GPS_TUPLE.exec(body);
  if ((latitude === null || longitude === null) && tuple) {
    longitude = Number(tuple[1]);
    latitude = Number(tuple[2]);
    altitude ??= tuple[3] === undefined ? null : Number(tuple[3]);
  }
  altitude ??= value(REL_ALT);
  if (latitude === null || longitude === null) return null;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180 || (latitude === 0 && longitude === 0)) return null;
  return { latitude, longitude, altitude };
}

/** Beyond the first or last sample by more than this, a frame gets no position. */
export const MAX_EXTRAPOLATION_SECONDS = 2;

/**
 * The position at `t` seconds: linear between the samples around it; the nearest end sample
 * within MAX_EXTRAPOLATION_SECONDS before the first or after the last; otherwise null.
 */
export function positionAt(samples: readonly TelemetrySample[], t: number): Position | null {
  if (samples.length === 0) return null;
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (t <= first.t) return t >= first.t - MAX_EXTRAPOLATION_SECONDS ? strip(first) : null;
  if (t >= last.t) return t <= last.t + MAX_EXTRAPOLATION_SECONDS ? strip(last) : null;
  let lo = 0;
  let hi = samples.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (samples[mid].t <= t) lo = mid;
    else hi = mid;
  }
  const a = samples[lo];
  const b = samples[hi];
  const f = b.t === a.t ? 0 : (t - a.t) / (b.t - a.t);
  const lerp = (x: number, y: number) => x + (y - x) * f;
  return {
    latitude: lerp(a.latitude, b.latitude),
    longitude: lerp(a.longitude, b.longitude),
    altitude: a.altitude !== null && b.altitude !== null ? lerp(a.altitude, b.altitude) : (a.altitude ?? b.altitude),
  };
}

/** The drone's local date-time at `t`: the sample at or before it, plus the time since (ms). */
export function localTimeAt(samples: readonly TelemetrySample[], t: number): string | null {
  let base: TelemetrySample | undefined;
  for (const s of samples) {
    if (s.t > t) break;
    if (s.localTime) base = s;
  }
  base ??= samples.find((s) => s.localTime);
  if (!base?.localTime) return null;
  const ms = Date.parse(`${base.localTime.replace(' ', 'T')}Z`);
  if (Number.isNaN(ms)) return null;
  return new Date(ms + Math.round((t - base.t) * 1000)).toISOString().replace('T', ' ').replace('Z', '');
}

function strip(s: TelemetrySample): Position {
  return { latitude: s.latitude, longitude: s.longitude, altitude: s.altitude };
}
