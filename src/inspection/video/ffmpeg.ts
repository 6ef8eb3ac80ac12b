// ffprobe and ffmpeg as child processes (spawned directly, no shell; FFMPEG_BINARY and
// FFPROBE_BINARY): what a video holds (duration, start, the container's place and creation time),
// and its frames at a given rate, each with its exact time in the video (from ffmpeg's showinfo
// filter). A file they cannot read, a run that fails or outlasts its time limit, and a missing
// executable are VideoExtractionErrors: the inspection ends in 14 with the message as its reason.
//
// The uploaded file is hostile input. Left to guess, ffmpeg takes text that starts with #EXTM3U
// for an HLS playlist and `ffconcat version 1.0` for a list of files, whatever the file's name,
// and reads the files and URLs named inside: an upload named DJI_trav.MP4 made ffmpeg extract the
// frames of a server-local video never uploaded. So ffprobe may recognise only the containers of
// CONTAINERS (-format_whitelist), ffmpeg is then told that container (-f) instead of guessing,
// both open nothing but local files (-protocol_whitelist file), and both run in the video's work
// folder on the file's name there, so that nothing is reached through the work folder's path.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { CappedLineSplitter } from './capped-lines.ts';
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
  /** The demuxer ffmpeg is told to use (a value of CONTAINERS). */
  container: string;
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
  /** stdout went past maxStdoutBytes: the run was stopped. */
  stdoutOverflow: boolean;
}

/**
 * Containers drones and cameras write, as ffprobe names them (format_name), and the demuxer
 * ffmpeg is told to use for each. None of these reads another file or URL named in the upload
 * (mov's external data references stay off: enable_drefs defaults to false). Anything else
 * (HLS/DASH playlists, ffconcat lists, image sequences, raw streams) is refused.
 */
const CONTAINERS: Readonly<Record<string, string>> = { 'mov,mp4,m4a,3gp,3g2,mj2': 'mov', 'matroska,webm': 'matroska', avi: 'avi' };
const FORMAT_WHITELIST = Object.keys(CONTAINERS).join(',');
const CONTAINER_NAMES = 'MP4/MOV, Matroska/WebM or AVI';
/** Input options of every run: local files only. */
const LOCAL_FILES_ONLY = ['-protocol_whitelist', 'file'];
/** ffprobe's JSON description: a file's tags beyond this are not a drone's. */
const MAX_PROBE_OUTPUT_BYTES = 4 * 1024 ** 2;
/** stderr lines kept for messages are cut here (ffmpeg's own lines are shorter than 1 KB). */
const MAX_STDERR_LINE_CHARS = 2000;

const TAIL_LINES = 40;
const LOCATION_TAGS = /^(location(-[a-z]{3})?|com\.apple\.quicktime\.location\.iso6709)$/i;

function run(binary: string, args: string[], options: { cwd: string; timeoutMs: number; maxStdoutBytes?: number; onStderrLine?: (line: string) => void }): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const capture = options.maxStdoutBytes !== undefined;
    const child = spawn(binary, args, { cwd: options.cwd, stdio: ['ignore', capture ? 'pipe' : 'ignore', 'pipe'], timeout: options.timeoutMs, killSignal: 'SIGKILL' });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stdoutOverflow = false;
    const tail: string[] = [];
    const lines = new CappedLineSplitter(MAX_STDERR_LINE_CHARS, (l) => {
      if (!l.trim()) return;
      options.onStderrLine?.(l);
      tail.push(l);
      if (tail.length > TAIL_LINES) tail.shift();
    });
    child.stdout?.on('data', (c: Buffer) => {
      stdoutBytes += c.length;
      if (stdoutBytes > options.maxStdoutBytes!) {
        if (!stdoutOverflow) child.kill('SIGKILL');
        stdoutOverflow = true;
      } else stdout.push(c);
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => lines.write(c));
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') {
        const tool = path.basename(binary);
        const variable = tool.includes('probe') ? 'FFPROBE_BINARY' : 'FFMPEG_BINARY';
        reject(new VideoExtractionError(`${tool} is not installed on the server (${binary} not found; Debian package ffmpeg, or set ${variable}). An administrator must install it; the inspection can then be retried.`));
      } else reject(new VideoExtractionError(`${binary} could not be started: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      lines.end();
      resolve({ code, signal, stdout: Buffer.concat(stdout).toString('utf8'), tail, timedOut: signal === 'SIGKILL' && !stdoutOverflow && Date.now() - started >= options.timeoutMs, stdoutOverflow });
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

/**
 * What ffprobe reads of the video at `file` (`name`: the input's name, for messages); refused
 * unless its container is one of CONTAINERS.
 */
export async function probeVideo(ffprobe: string, file: string, name: string): Promise<VideoProbe> {
  const input = `file:${path.basename(file)}`;
  const outcome = await run(
    ffprobe,
    ['-v', 'error', ...LOCAL_FILES_ONLY, '-format_whitelist', FORMAT_WHITELIST, '-print_format', 'json', '-show_format', '-show_streams', '-select_streams', 'v:0', input],
    { cwd: path.dirname(file), timeoutMs: 120_000, maxStdoutBytes: MAX_PROBE_OUTPUT_BYTES },
  );
  if (outcome.timedOut) throw new VideoExtractionError(`${name}: ffprobe did not finish reading the file within 2 minutes.`);
  if (outcome.stdoutOverflow) throw new VideoExtractionError(`${name}: ffprobe's description of the file is larger than ${MAX_PROBE_OUTPUT_BYTES / 1024 ** 2} MB (its metadata is too long for a video).`);
  if (outcome.code !== 0 && outcome.tail.some((l) => l.includes('Format not on whitelist'))) throw notAContainer(name);
  if (outcome.code !== 0) throw new VideoExtractionError(`${name} is not a readable video${why(outcome, input, name) ? `: ${why(outcome, input, name)}` : ''}.`);
  let parsed: { format?: { format_name?: string; duration?: string; start_time?: string; tags?: Record<string, string> }; streams?: Array<{ width?: number; height?: number; duration?: string }> };
  try {
    parsed = JSON.parse(outcome.stdout);
  } catch {
    throw new VideoExtractionError(`${name}: ffprobe's description of the file could not be read.`);
  }
  const format = parsed.format?.format_name ?? '';
  const container = Object.hasOwn(CONTAINERS, format) ? CONTAINERS[format] : undefined;
  if (!container) throw notAContainer(name, format);
  const stream = parsed.streams?.[0];
  if (!stream?.width || !stream.height) throw new VideoExtractionError(`${name} holds no video stream.`);
  const duration = Number(parsed.format?.duration ?? stream.duration);
  if (!Number.isFinite(duration) || duration <= 0) throw new VideoExtractionError(`${name}: the video's duration is unknown or zero.`);
  const tags = parsed.format?.tags ?? {};
  const locationTag = Object.entries(tags).find(([key]) => LOCATION_TAGS.test(key))?.[1];
  const created = tags.creation_time ? new Date(tags.creation_time) : null;
  return {
    container,
    duration,
    startTime: Number(parsed.format?.start_time) || 0,
    width: stream.width,
    height: stream.height,
    location: locationTag ? parseIso6709(locationTag) : null,
    creationTime: created && !Number.isNaN(created.getTime()) && created.getUTCFullYear() > 1970 ? created : null,
  };
}

function notAContainer(name: string, format?: string): VideoExtractionError {
  return new VideoExtractionError(
    `${name} is not a video in a container the service reads (${CONTAINER_NAMES})${format ? `: ffprobe reads it as ${format.slice(0, 40)}` : ''}. ` +
      'Playlists (HLS, DASH) and lists of other files (ffconcat) are refused: they make ffmpeg read files other than the upload.',
  );
}

// Anchored at the line's start (showinfo's own prefix): unanchored, `Parsed_showinfo.*` was tried
// again from every occurrence of the words in a line.
const SHOWINFO = /^\[Parsed_showinfo_\d+ @ [^\]]*\] n:\s*(\d+)\s+pts:\s*-?\d+\s+pts_time:\s*(-?[\d.]+(?:e-?\d+)?)/;

/**
 * Frames of the video at `file`, `rate` per second (ffmpeg's fps filter, which keeps the frame
 * nearest each tick), as JPEG files in `outDir` (quality 2 of ffmpeg's 2-31 scale), in time order.
 */
export async function extractFrames(ffmpeg: string, file: string, name: string, outDir: string, rate: { num: number; den: number }, probe: VideoProbe, timeoutMs: number): Promise<ExtractedFrame[]> {
  await fs.mkdir(outDir, { recursive: true });
  const times = new Map<number, number>();
  const input = `file:${path.basename(file)}`;
  const args = ['-nostdin', '-hide_banner', '-nostats', '-loglevel', 'info', ...LOCAL_FILES_ONLY, '-format_whitelist', FORMAT_WHITELIST, '-f', probe.container, '-i', input, '-map', '0:v:0', '-vf', `fps=fps=${rate.num}/${rate.den},showinfo`, '-q:v', '2', '-f', 'image2', path.join(outDir, 'frame_%06d.jpg')];
  const outcome = await run(ffmpeg, args, {
    cwd: path.dirname(file),
    timeoutMs,
    onStderrLine: (line) => {
      const m = SHOWINFO.exec(line);
      if (m) times.set(Number(m[1]), Number(m[2]));
    },
  });
  if (outcome.timedOut) throw new VideoExtractionError(`${name}: ffmpeg did not finish extracting frames within ${Math.round(timeoutMs / 1000)} s.`);
  if (outcome.code !== 0) throw new VideoExtractionError(`${name}: ffmpeg could not extract frames (exit ${outcome.signal ?? outcome.code})${why(outcome, input, name) ? `: ${why(outcome, input, name)}` : ''}.`);
  const files = (await fs.readdir(outDir)).filter((f) => /^frame_\d+\.jpg$/.test(f)).sort();
  if (files.length === 0) throw new VideoExtractionError(`${name}: ffmpeg extracted no frames (the video holds no decodable picture).`);
  return files.map((f, i) => ({ file: path.join(outDir, f), t: Math.max(0, (times.get(i) ?? (i * rate.den) / rate.num + probe.startTime) - probe.startTime) }));
}
