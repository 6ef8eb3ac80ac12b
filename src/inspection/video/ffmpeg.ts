// ffprobe and ffmpeg as child processes (spawned directly, no shell; FFMPEG_BINARY and
// FFPROBE_BINARY): what a video holds (duration, start, the container's place and creation time),
// and its frames at a given rate, each with its exact time in the video (from ffmpeg's showinfo
// filter). A file they cannot read, a run that fails or outlasts its time limit, and a missing
// executable are VideoExtractionErrors: the inspection ends in 14 with the message as its reason.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseIso6709 } from './iso6709.ts';
import type { Position } from './srt-telemetry.ts';

/** A video that cannot be turned into frames; the message is the inspection's processing_error. */
export class VideoExtractionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VideoExtractionError';
  }
}

export interface VideoProbe {
  /** Seconds. */
  duration: number;
  /** Seconds; frame times are reported from here (0 for most files). */
  startTime: number;
  width: number;
  height: number;
  /** The container's ISO 6709 place (`location` tag), if any. */
  location: Position | null;
  /** The container's `creation_time` (ISO 8601, UTC), if any. */
  creationTime: Date | null;
}

export interface ExtractedFrame {
  file: string;
  /** Seconds from the start of the video. */
  t: number;
}

interface ToolRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** stderr's last lines. */
  tail: string[];
  timedOut: boolean;
}

const TAIL_LINES = 40;
const LOCATION_TAGS = /^(location(-[a-z]{3})?|com\.apple\.quicktime\.location\.iso6709)$/i;

function run(binary: string, args: string[], options: { timeoutMs: number; captureStdout?: boolean; onStderrLine?: (line: string) => void }): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(binary, args, { stdio: ['ignore', options.captureStdout ? 'pipe' : 'ignore', 'pipe'], timeout: options.timeoutMs, killSignal: 'SIGKILL' });
    const stdout: Buffer[] = [];
    const tail: string[] = [];
    let partial = '';
    const line = (l: string) => {
      if (!l.trim()) return;
      options.onStderrLine?.(l);
      tail.push(l);
      if (tail.length > TAIL_LINES) tail.shift();
    };
    child.stdout?.on('data', (c: Buffer) => stdout.push(c));
    child.stderr!.on('data', (c: Buffer) => {
      const lines = (partial + c.toString('utf8')).split(/\r\n|\n|\r/);
      partial = lines.pop() ?? '';
      lines.forEach(line);
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') {
        const tool = path.basename(binary);
        const variable = tool.includes('probe') ? 'FFPROBE_BINARY' : 'FFMPEG_BINARY';
        reject(new VideoExtractionError(`${tool} is not installed on the server (${binary} not found; Debian package ffmpeg, or set ${variable}). An administrator must install it; the inspection can then be retried.`));
      } else reject(new VideoExtractionError(`${binary} could not be started: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      if (partial) line(partial);
      resolve({ code, signal, stdout: Buffer.concat(stdout).toString('utf8'), tail, timedOut: signal === 'SIGKILL' && Date.now() - started >= options.timeoutMs });
    });
  });
}

/** The line of a failed run that says why (an error line, else the last one), without the work folder's path of `file`. */
function why(outcome: ToolRun, file: string, name: string): string {
  const lines = outcome.tail.filter((l) => !/Parsed_showinfo/.test(l));
  const error = [...lines].reverse().find((l) => /error|invalid|failed|no such|not found|unsupported|could not|cannot/i.test(l)) ?? lines.at(-1) ?? '';
  return error
    .replace(/^\[[^\]]*\]\s*/, '')
    .split(`${file}: `)
    .join('')
    .split(file)
    .join(name)
    .trim()
    .replace(/\.$/, '')
    .slice(0, 300);
}

/** What ffprobe reads of the video at `file` (`name`: the input's name, for messages). */
export async function probeVideo(ffprobe: string, file: string, name: string): Promise<VideoProbe> {
  const outcome = await run(ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '-select_streams', 'v:0', file], { timeoutMs: 120_000, captureStdout: true });
  if (outcome.timedOut) throw new VideoExtractionError(`${name}: ffprobe did not finish reading the file within 2 minutes.`);
  if (outcome.code !== 0) throw new VideoExtractionError(`${name} is not a readable video${why(outcome, file, name) ? `: ${why(outcome, file, name)}` : ''}.`);
  let parsed: { format?: { duration?: string; start_time?: string; tags?: Record<string, string> }; streams?: Array<{ width?: number; height?: number; duration?: string }> };
  try {
    parsed = JSON.parse(outcome.stdout);
  } catch {
    throw new VideoExtractionError(`${name}: ffprobe's description of the file could not be read.`);
  }
  const stream = parsed.streams?.[0];
  if (!stream?.width || !stream.height) throw new VideoExtractionError(`${name} holds no video stream.`);
  const duration = Number(parsed.format?.duration ?? stream.duration);
  if (!Number.isFinite(duration) || duration <= 0) throw new VideoExtractionError(`${name}: the video's duration is unknown or zero.`);
  const tags = parsed.format?.tags ?? {};
  const locationTag = Object.entries(tags).find(([key]) => LOCATION_TAGS.test(key))?.[1];
  const created = tags.creation_time ? new Date(tags.creation_time) : null;
  return {
    duration,
    startTime: Number(parsed.format?.start_time) || 0,
    width: stream.width,
    height: stream.height,
    location: locationTag ? parseIso6709(locationTag) : null,
    creationTime: created && !Number.isNaN(created.getTime()) && created.getUTCFullYear() > 1970 ? created : null,
  };
}

const SHOWINFO = /Parsed_showinfo.*\bn:\s*(\d+)\s+pts:\s*-?\d+\s+pts_time:\s*(-?[\d.]+(?:e-?\d+)?)/;

/**
 * Frames of the video at `file`, `rate` per second (ffmpeg's fps filter, which keeps the frame
 * nearest each tick), as JPEG files in `outDir` (quality 2 of ffmpeg's 2-31 scale), in time order.
 */
export async function extractFrames(ffmpeg: string, file: string, name: string, outDir: string, rate: { num: number; den: number }, probe: VideoProbe, timeoutMs: number): Promise<ExtractedFrame[]> {
  await fs.mkdir(outDir, { recursive: true });
  const times = new Map<number, number>();
  const args = ['-nostdin', '-hide_banner', '-nostats', '-loglevel', 'info', '-i', file, '-map', '0:v:0', '-vf', `fps=fps=${rate.num}/${rate.den},showinfo`, '-q:v', '2', '-f', 'image2', path.join(outDir, 'frame_%06d.jpg')];
  const outcome = await run(ffmpeg, args, {
    timeoutMs,
    onStderrLine: (line) => {
      const m = SHOWINFO.exec(line);
      if (m) times.set(Number(m[1]), Number(m[2]));
    },
  });
  if (outcome.timedOut) throw new VideoExtractionError(`${name}: ffmpeg did not finish extracting frames within ${Math.round(timeoutMs / 1000)} s.`);
  if (outcome.code !== 0) throw new VideoExtractionError(`${name}: ffmpeg could not extract frames (exit ${outcome.signal ?? outcome.code})${why(outcome, file, name) ? `: ${why(outcome, file, name)}` : ''}.`);
  const files = (await fs.readdir(outDir)).filter((f) => /^frame_\d+\.jpg$/.test(f)).sort();
  if (files.length === 0) throw new VideoExtractionError(`${name}: ffmpeg extracted no frames (the video holds no decodable picture).`);
  return files.map((f, i) => ({ file: path.join(outDir, f), t: Math.max(0, (times.get(i) ?? (i * rate.den) / rate.num + probe.startTime) - probe.startTime) }));
}
