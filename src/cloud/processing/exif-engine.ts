// The `exif` engine: no photogrammetry at all. It reads each input's EXIF/XMP (position, size,
// camera, gimbal orientation) and writes them as `calibrated_camera_parameters_json`, flagged
// `"reconstructed": false` so nobody mistakes them for calibrated cameras. Point cloud, mesh, DSM
// and orthophoto are listed as not available. It exists so that the whole flow runs on any
// machine; the COLMAP and NodeODM engines do real reconstruction.
import { analyzeImage, objectStoreRangeReader } from '../../shared/image-metadata/index.ts';
import { EngineError, type EngineInput, type EngineResult, type PhotogrammetryEngine } from './engine.ts';

const NOT_RECONSTRUCTED = 'The exif engine does not reconstruct; use the colmap or nodeodm engine.';

export class ExifEngine implements PhotogrammetryEngine {
  readonly name = 'exif';

  /** @param simulatedSeconds least run time, a test knob like NodeODM's --test_seconds. */
  constructor(private readonly simulatedSeconds = 0) {}

  async run(input: EngineInput): Promise<EngineResult> {
    const started = Date.now();
    const cameras = [];
    let done = 0;
    for (const image of input.inputs) {
      input.signal.throwIfAborted();
      const analysis = await analyzeImage(objectStoreRangeReader(input.store, input.bucket, image.key), image.size);
      done++;
      if (analysis.ok) {
        const m = analysis.metadata;
        cameras.push({
          key: image.key,
          width: m.width,
          height: m.height,
          make: m.make,
          model: m.model,
          focal_length_35mm: m.focalLength35mm,
          position: m.latitude === null || m.longitude === null ? null : { latitude: m.latitude, longitude: m.longitude, altitude: m.altitude },
          quaternion: m.quaternion,
        });
      }
      await input.reportProgress(Math.floor((done / input.inputs.length) * 90), `Reading camera metadata (${done}/${input.inputs.length})`);
    }
    if (cameras.length === 0) throw new EngineError(10601, 'None of the registered inputs is a readable image.');
    const remaining = this.simulatedSeconds * 1000 - (Date.now() - started);
    if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
    input.signal.throwIfAborted();

    const key = `${input.outputPrefix}calibrated_camera_parameters.json`;
    const document = {
      engine: this.name,
      reconstructed: false,
      note: 'Positions and orientations as recorded by the camera (EXIF/XMP); no photogrammetry was run.',
      cameras,
    };
    await input.store.putObject(input.bucket, key, Buffer.from(JSON.stringify(document, null, 2)), { contentType: 'application/json' });
    await input.reportProgress(100, 'Done');
    return {
      outputs: [{ outputType: 'calibrated_camera_parameters_json', resultType: 'file', key }],
      notAvailable: (['point_cloud', '3d_mesh_obj_zip', 'dsm', 'ortho_rgb'] as const).map((outputType) => ({ outputType, reason: NOT_RECONSTRUCTED })),
    };
  }
}
