// What an `is_video` inspection accepts as inputs (spec: "photos (or a video)"): videos in the
// common containers drones and phones write (MP4, QuickTime MOV) and, beside each, the DJI `.SRT`
// telemetry sidecar of the same name (DJI_0001.MP4 + DJI_0001.SRT). Several videos may be
// registered (drones split long recordings); each is extracted with its own sidecar.
import path from 'node:path';

export const VIDEO_EXTENSIONS = ['.mp4', '.mov'] as const;
export const TELEMETRY_EXTENSIONS = ['.srt'] as const;

export type VideoInputKind = 'video' | 'telemetry' | 'other';

export function videoInputKind(key: string): VideoInputKind {
  const extension = path.posix.extname(key).toLowerCase();
  if ((VIDEO_EXTENSIONS as readonly string[]).includes(extension)) return 'video';
  if ((TELEMETRY_EXTENSIONS as readonly string[]).includes(extension)) return 'telemetry';
  return 'other';
}

/** Why keys cannot be registered to a video inspection (400 on image_keys), or null. */
export function videoRegistrationRefusal(keys: readonly string[]): string | null {
  const others = keys.filter((key) => videoInputKind(key) === 'other');
  if (others.length === 0) return null;
  return (
    `This inspection takes a video (processing_parameters.is_video): register ${VIDEO_EXTENSIONS.join(' or ')} videos and their ` +
    `DJI ${TELEMETRY_EXTENSIONS.join('')} telemetry files (same name as the video), not: ${others.slice(0, 5).join(', ')}${others.length > 5 ? ', …' : ''}.`
  );
}

/** Why a video inspection cannot start processing with these registered keys (409), or null. */
export function videoProcessRefusal(keys: readonly string[]): string | null {
  if (!keys.some((key) => videoInputKind(key) === 'video')) {
    return `Processing cannot start: this inspection takes a video (processing_parameters.is_video) and no ${VIDEO_EXTENSIONS.join(' or ')} video is registered.`;
  }
  const others = keys.filter((key) => videoInputKind(key) === 'other');
  if (others.length > 0) {
    return `Processing cannot start: this inspection takes a video (processing_parameters.is_video), but other files are registered: ${others.slice(0, 5).join(', ')}.`;
  }
  return null;
}

export interface VideoInput {
  video: string;
  /** The DJI telemetry sidecar: same key without extension, case-insensitively; null when none. */
  telemetry: string | null;
}

/** The registered videos in key order, each with its sidecar. */
export function pairVideoInputs(keys: readonly string[]): VideoInput[] {
  const stem = (key: string) => key.slice(0, key.length - path.posix.extname(key).length).toLowerCase();
  const sidecars = new Map(keys.filter((key) => videoInputKind(key) === 'telemetry').map((key) => [stem(key), key]));
  return keys
    .filter((key) => videoInputKind(key) === 'video')
    .sort()
    .map((video) => ({ video, telemetry: sidecars.get(stem(video)) ?? null }));
}
