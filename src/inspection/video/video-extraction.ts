// Status 12 "Extracting video images" of an `is_video` inspection (job `inspection.extract-video`,
// queued by InspectionPipeline.begin instead of the image analysis):
// 1. the registered videos (and their DJI .SRT sidecars) are read from the cloud project's bucket
//    into a work folder; ffprobe reads each video's duration, place and creation time;
// 2. ffmpeg extracts frames at one spacing for all the videos (frame-spacing.ts);
// 3. each frame gets EXIF (frame-exif.ts): GPS from the sidecar, interpolated at the frame's time
//    (srt-telemetry.ts), else the container's ISO 6709 place (the same for every frame), else none;
//    a capture time from the sidecar's clock, else the container's creation_time plus the frame time;
// 4. the frames are stored as the inspection's images, as photos are: under the project's upload
//    prefix (`video_frames/`), registered with the cloud project and recorded as the inspection's
//    images (source `video_frame`), then 12 -> 3 and the image analysis continues as for photos.
// A video that cannot be read or is not in an accepted container (ffmpeg.ts), a failing ffmpeg, no
// frame at all, a video gone from storage, or an .SRT beyond its limits (srt-telemetry.ts) end in
// 14 with the reason in processing_error; an .SRT without any position is ignored with a warning. Idempotent like every step: it acts only in 20 or 12,
// frame keys are the same on a second run (puts overwrite, registrations add nothing new), and
// the move to 3 applies once.
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionTables } from '../inspection.tables.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import type { FileStore } from '../storage/inspection-files.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';
import { Status } from '../inspections/statuses.ts';
import { pairVideoInputs, type VideoInput } from './video-inputs.ts';
import { extractFrames, probeVideo, VideoExtractionError, type VideoProbe } from './ffmpeg.ts';
import { localTimeAt, MAX_TELEMETRY_BYTES, positionAt, readDjiSrt, type TelemetrySample } from './srt-telemetry.ts';
import { frameInterval, frameRate } from './frame-spacing.ts';
import { withFrameExif } from './frame-exif.ts';

export interface VideoToolsOptions {
  ffmpegBinary: string;
  ffprobeBinary: string;
  /** Parent of the per-run work folders (removed after each run). */
  workDir: string;
}

/** Folder, under the inspection's upload prefix, of the frames taken from its videos. */
export const FRAMES_FOLDER = 'video_frames/';
const UPLOAD_CONCURRENCY = 4;

interface PreparedVideo {
  input: VideoInput;
  name: string;
  file: string;
  probe: VideoProbe;
  telemetry: TelemetrySample[];
}

interface StoredFrame {
  key: string;
  positioned: boolean;
}

export class VideoFrameExtractor {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly cloud: CloudClient,
    private readonly jobs: JobQueue,
    private readonly files: FileStore,
    private readonly logger: Logger,
    private readonly tools: VideoToolsOptions,
  ) {}

  async extract(inspectionId: number): Promise<void> {
    const inspection = await this.inspections.find(inspectionId);
    if (!inspection) return;
    if (!(await this.inspections.transition(inspectionId, [Status.Waiting, Status.ExtractingVideo], Status.ExtractingVideo))) return;
    const log = this.logger.child({ inspectionId });
    const prefix = inspection.storage_prefix ?? '';
    const videos = pairVideoInputs(await this.inspections.imageKeys(inspectionId));
    const { bucket_name: bucket } = await this.cloud.as(inspection).getProject(inspection.project_id!);
    await fs.mkdir(this.tools.workDir, { recursive: true });
    const work = await fs.mkdtemp(path.join(this.tools.workDir, `video-${inspectionId}-`));
    let frames: StoredFrame[];
    try {
      if (videos.length === 0) throw new VideoExtractionError('No video is registered: register an .mp4 or .mov video (and its DJI .SRT telemetry file) before processing.');
      const prepared: PreparedVideo[] = [];
      for (const [i, input] of videos.entries()) {
        const name = input.video.slice(prefix.length);
        const file = path.join(work, `video-${i}${path.posix.extname(input.video).toLowerCase()}`);
        await this.download(bucket, input.video, name, file);
        const probe = await probeVideo(this.tools.ffprobeBinary, file, name);
        const telemetry = input.telemetry ? await this.readTelemetry(bucket, input.telemetry, input.telemetry.slice(prefix.length), log) : [];
        prepared.push({ input, name, file, probe, telemetry });
      }
      const interval = frameInterval(prepared.reduce((sum, v) => sum + v.probe.duration, 0));
      frames = [];
      for (const [i, video] of prepared.entries()) {
        // A generous limit: decoding runs at several times real time on one core.
        const timeoutMs = Math.min(5 * 3600, 600 + 10 * video.probe.duration) * 1000;
        const extracted = await extractFrames(this.tools.ffmpegBinary, video.file, video.name, path.join(work, `frames-${i}`), frameRate(interval), video.probe, timeoutMs);
        await fs.rm(video.file, { force: true }); // the frames are what is needed now
        const stem = frameStem(video.name);
        frames.push(
          ...(await mapConcurrently(extracted, UPLOAD_CONCURRENCY, async (frame, n) => {
            const position = video.telemetry.length ? positionAt(video.telemetry, frame.t) : video.probe.location;
            const jpeg = withFrameExif(await fs.readFile(frame.file), {
              description: `Frame at ${frame.t.toFixed(3)} s of ${video.name}`,
              position,
              ...captureTime(video, frame.t),
            });
            const key = `${prefix}${FRAMES_FOLDER}${stem}_${String(n + 1).padStart(5, '0')}.jpg`;
            await this.files.store.putObject(bucket, key, jpeg, { contentType: 'image/jpeg' });
            await fs.rm(frame.file, { force: true });
            return { key, positioned: position !== null };
          })),
        );
      }
      log.info(
        { videos: prepared.map((v) => ({ name: v.name, seconds: v.probe.duration, telemetry: v.telemetry.length, location: v.probe.location !== null })), interval, frames: frames.length, positioned: frames.filter((f) => f.positioned).length },
        'video frames extracted',
      );
    } catch (err) {
      if (!(err instanceof VideoExtractionError)) throw err; // storage or database trouble: the job is retried
      log.info({ reason: err.message }, 'video extraction failed');
      await this.inspections.transition(inspectionId, Status.ExtractingVideo, Status.ErrorExtractingVideo, { processing_error: err.message, processing_ended_at: new Date() });
      return;
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
    const keys = frames.map((f) => f.key);
    for (let i = 0; i < keys.length; i += 500) await this.cloud.as(inspection).registerInputs(inspection.project_id!, keys.slice(i, i + 500));
    await this.db.transaction().execute(async (trx) => {
      const locked = await this.inspections.lock(trx, inspectionId);
      if (locked.deleted_at || locked.status !== Status.ExtractingVideo) return;
      await this.inspections.addImages(trx, inspectionId, keys, 'video_frame');
      if (!(await this.inspections.transition(inspectionId, Status.ExtractingVideo, Status.Analyzing, {}, trx))) return;
      await this.jobs.send<InspectionJobs, 'inspection.analyze-images'>('inspection.analyze-images', { inspectionId }, { trx });
    });
  }

  private async download(bucket: string, key: string, name: string, file: string): Promise<void> {
    try {
      const object = await this.files.store.getObject(bucket, key);
      await pipeline(object.body, createWriteStream(file));
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NoSuchKey') throw new VideoExtractionError(`${name} is no longer in storage.`);
      throw err;
    }
  }

  /**
   * The positions of a video's .SRT sidecar, streamed (srt-telemetry.ts). A file too large or
   * with too many cues fails the video's extraction with the reason; one without any position
   * (garbage, another kind of subtitle) is ignored with a warning and the frames are placed as
   * without a sidecar.
   */
  private async readTelemetry(bucket: string, key: string, name: string, log: Logger): Promise<TelemetrySample[]> {
    try {
      const head = await this.files.store.headObject(bucket, key);
      if (!head) throw new VideoExtractionError(`${name} is no longer in storage.`);
      if (head.size > MAX_TELEMETRY_BYTES) throw new VideoExtractionError(`${name} is larger than ${MAX_TELEMETRY_BYTES / 1024 ** 2} MB: not a DJI telemetry file.`);
      const reading = await readDjiSrt((await this.files.store.getObject(bucket, key)).body);
      if (reading.refusal) throw new VideoExtractionError(`${name} ${reading.refusal}.`);
      if (reading.samples.length === 0) log.warn({ telemetry: key, overlongLines: reading.overlongLines }, 'the telemetry file holds no position: ignored');
      return reading.samples;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NoSuchKey') throw new VideoExtractionError(`${name} is no longer in storage.`);
      throw err;
    }
  }
}

/** The frame's capture time: the drone's clock in the sidecar, else the container's creation time (UTC). */
function captureTime(video: PreparedVideo, t: number): { dateTime: string | null; utcOffset: string | null } {
  const local = video.telemetry.length ? localTimeAt(video.telemetry, t) : null;
  if (local) return { dateTime: local, utcOffset: null };
  if (video.probe.creationTime) {
    const at = new Date(video.probe.creationTime.getTime() + Math.round(t * 1000));
    return { dateTime: at.toISOString().replace('T', ' ').replace('Z', ''), utcOffset: '+00:00' };
  }
  return { dateTime: null, utcOffset: null };
}

/** A file-name stem unique per video: its path under the prefix without extension, `/` and oddities as `_`. */
function frameStem(name: string): string {
  return name.slice(0, name.length - path.posix.extname(name).length).replace(/[^A-Za-z0-9._-]+/g, '_') || 'video';
}
