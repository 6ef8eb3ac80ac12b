// The `exif` engine: no photogrammetry at all. From each readable image's EXIF/XMP (read before the
// engine runs, input-analysis.ts) it writes `calibrated_camera_parameters_json`, flagged
// `"reconstructed": false` so nobody mistakes its cameras for calibrated ones, with each camera's
// position also projected into the output coordinate system; and a `project_thumb` (a small JPEG
// of the first image). Point cloud, mesh, DSM and orthophoto are listed as not available. It exists
// so that the whole flow runs on any machine; the COLMAP and NodeODM engines do real reconstruction.
import { loadSharp } from '../../shared/images/load-sharp.ts';
import { readImageBody } from '../../shared/images/bounded-read.ts';
import { bytesRefusal, DEFAULT_IMAGE_LIMITS, type ImageLimits } from '../../shared/images/image-limits.ts';
import { describeCrs, projectorFor } from '../coordinate-systems/crs.ts';
import type { EngineInput, EngineResult, PhotogrammetryEngine } from './engine.ts';
import { noneAvailable, unmakeableOutputs } from './engine-capabilities.ts';

const THUMB_SIZE = 256;

export class ExifEngine implements PhotogrammetryEngine {
  readonly name = 'exif';
  /** Nothing of the four: its runs list them `not available` with this reason. */
  readonly capabilities = noneAvailable('The exif engine does not reconstruct; use the colmap or nodeodm engine.');

  /**
   * @param simulatedSeconds least run time, a test knob like NodeODM's --test_seconds.
   * @param imageLimits the thumbnail's image: largest file read, largest decoded (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS).
   */
  constructor(
    private readonly simulatedSeconds = 0,
    private readonly imageLimits: ImageLimits = DEFAULT_IMAGE_LIMITS,
  ) {}

  async run(input: EngineInput): Promise<EngineResult> {
    const started = Date.now();
    const project = projectorFor(input.outputCrs);
    const cameras = input.images.map((image) => {
      const position =
        image.latitude === null || image.longitude === null ? null : { latitude: image.latitude, longitude: image.longitude, altitude: image.altitude };
      const projected = position && project ? project(position.latitude, position.longitude) : null;
      return {
        key: image.key,
        width: image.width,
        height: image.height,
        make: image.make,
        model: image.model,
        focal_length_35mm: image.focal_length_35mm,
        captured_at: image.captured_at,
        position,
        // x, y in the output system's axis order and unit; z: the recorded altitude, not converted.
        position_output_crs: projected ? { x: projected.x, y: projected.y, z: position!.altitude } : null,
        quaternion: image.quaternion,
      };
    });
    await input.reportProgress(40, `Reading camera metadata (${cameras.length}/${input.images.length})`);

    input.signal.throwIfAborted();
    const thumbKey = `${input.outputPrefix}project_thumb.jpg`;
    const thumb = await this.thumbnail(input, input.images[0].key);
    if (thumb) await input.store.putObject(input.bucket, thumbKey, thumb, { contentType: 'image/jpeg' });
    await input.reportProgress(70, 'Building the project thumbnail');

    const remaining = this.simulatedSeconds * 1000 - (Date.now() - started);
    if (remaining > 0) {
      const steps = Math.max(1, Math.ceil(remaining / 500));
      for (let step = 1; step <= steps; step++) {
        await new Promise((resolve) => setTimeout(resolve, remaining / steps));
        input.signal.throwIfAborted();
        await input.reportProgress(70 + Math.floor((25 * step) / steps), 'Processing (simulated)');
      }
    }

    const key = `${input.outputPrefix}calibrated_camera_parameters.json`;
    const document = {
      engine: this.name,
      reconstructed: false,
      note: 'Positions and orientations as recorded by the camera (EXIF/XMP); no photogrammetry was run.',
      pipeline: input.pipeline,
      tags: input.tags,
      output_coordinate_system: describeCrs(input.outputCrs),
      cameras,
      control_points: input.controlPoints,
    };
    await input.store.putObject(input.bucket, key, Buffer.from(JSON.stringify(document, null, 2)), { contentType: 'application/json' });
    await input.reportProgress(100, 'Done');
    return {
      outputs: [
        { outputType: 'calibrated_camera_parameters_json', key },
        ...(thumb ? [{ outputType: 'project_thumb' as const, key: thumbKey }] : []),
      ],
      notAvailable: [
        ...unmakeableOutputs(this.capabilities),
        ...(thumb ? [] : [{ outputType: 'project_thumb' as const, reason: 'The first image could not be decoded, or is over the image limits (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS).' }]),
      ],
    };
  }

  /**
   * A JPEG at most THUMB_SIZE pixels wide and high, upright; null when the image cannot be decoded
   * or is over the image limits. The file is read within the byte limit (a stream piped into sharp
   * would be gathered whole in memory, then copied once more); its decoding within the pixel limit.
   */
  private async thumbnail(input: EngineInput, key: string): Promise<Buffer | null> {
    const { info, body } = await input.store.getObject(input.bucket, key);
    if (bytesRefusal(info.size, this.imageLimits)) {
      body.destroy();
      return null;
    }
    try {
      const photo = await readImageBody(body, info.size, this.imageLimits);
      const sharp = await loadSharp();
      return await sharp(photo, { limitInputPixels: this.imageLimits.maxPixels })
        .rotate()
        .resize(THUMB_SIZE, THUMB_SIZE, { fit: 'inside', withoutEnlargement: true })
        .jpeg({ quality: 80 })
        .toBuffer();
    } catch {
      return null;
    }
  }
}
