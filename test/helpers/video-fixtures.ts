// Test videos of video inspections, made with the machine's ffmpeg (Debian package ffmpeg): the
// first lund photos as a slide show, each shown for a while, 320x240 at 10 fps, H.264 in MP4 or
// MOV, optionally with an ISO 6709 place in the container as phones write it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './test-system.ts';

const run = promisify(execFile);
export const FFMPEG = '/usr/bin/ffmpeg';
export const FFPROBE = '/usr/bin/ffprobe';
export const LUND = path.join(import.meta.dirname, '..', 'fixtures', 'lund', 'images');

/** The file names of the first `count` lund photos, in order. */
export function lundPhotos(count: number): string[] {
  return fs
    .readdirSync(LUND)
    .filter((f) => f.endsWith('.jpg'))
    .sort()
    .slice(0, count);
}

/** The video's bytes; `extension` .mp4 or .mov chooses the container. */
export async function lundVideo(options: { photos: number; secondsPerPhoto: number; extension: '.mp4' | '.mov'; location?: string }): Promise<Buffer> {
  const folder = tempDir('oi-video-fixture-');
  try {
    lundPhotos(options.photos).forEach((f, i) => fs.copyFileSync(path.join(LUND, f), path.join(folder, `photo${i}.jpg`)));
    const out = path.join(folder, `video${options.extension}`);
    await run(FFMPEG, [
      ...['-nostdin', '-loglevel', 'error', '-framerate', String(1 / options.secondsPerPhoto), '-i', path.join(folder, 'photo%d.jpg')],
      ...['-vf', 'scale=320:240,fps=10', '-c:v', 'libx264', '-pix_fmt', 'yuv420p'],
      ...(options.location ? ['-metadata', `location=${options.location}`] : []),
      ...['-y', out],
    ]);
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}
