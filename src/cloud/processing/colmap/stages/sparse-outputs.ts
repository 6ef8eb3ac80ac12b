// Stage `sparse-outputs`: the outputs of the sparse reconstruction, written from the final placed
// model (georegistration.ts) into object storage under input.outputPrefix: `point_cloud` (LAS 1.2,
// point format 2 with RGB, in the output system, scale 0.001, offset = offset_3d_xyz),
// `point_cloud_ply` (the same points, PLY with double coordinates),
// `calibrated_camera_parameters_json`, `quality_report` (its `timings_s`: seconds per COLMAP
// command name, download and total; `stage_timings_s`: seconds per stage finished before it) and
// `project_thumb`. The processing log is stored by the runtime after the last stage.
import { loadSharp } from '../../../../shared/images/load-sharp.ts';
import { median } from '../../../../shared/median.ts';
import { conjugateQuaternion, multiplyQuaternions, normalizeQuaternion, quaternionFromAxisAngle, quaternionToMatrix, type Quaternion, type Vec3 } from '../../../../shared/geo/rotation.ts';
import { writeLas, writePly, type PointCloud } from '../../../../shared/pointcloud/index.ts';
import { describeCrs } from '../../../coordinate-systems/crs.ts';
import type { EngineInput, EngineResult, OutputType, ProducedOutput } from '../../engine.ts';
import { ALIGNMENT_MAX_ERROR_METRES, EXHAUSTIVE_MAX_IMAGES, GPS_OUTLIER_METRES, type CameraGroup } from '../colmap-commands.ts';
import { cameraCentre, intrinsicsOf, type ColmapModel } from '../colmap-model.ts';
import type { LocalFrame } from '../georeference.ts';
import { meanReprojectionError } from '../model-strain.ts';
import type { Downloaded, LocalImage } from './download.ts';
import type { Extracted } from './features.ts';
import type { Placement } from './georegistration.ts';
import type { Prepared } from './preparation.ts';
import { processingLogKey, type RunRecord, type Stage } from './stage.ts';
import { OUTPUTS_DEPENDING_ON } from './dense-plan.ts';

const ENGINE_NAME = 'colmap';
const THUMB_SIZE = 256;

export interface SparseOutputInputs {
  prepared: Prepared;
  downloaded: Downloaded;
  extracted: Extracted;
  placement: Placement;
}

interface GpsResidual {
  name: string;
  horizontal: number;
  vertical: number;
  total: number;
}

/** The report's list while the dense stages are still to run (dense-report.ts writes the final one). */
const DENSE_PENDING = OUTPUTS_DEPENDING_ON.cloud.map((outputType) => ({ outputType, reason: 'Made by the dense stages, which run after this report was written.' }));

/** The quality report's JSON: an object the dense stages add their figures to. */
export type QualityReport = Record<string, unknown>;

/** The sparse outputs, and the quality report as written (dense-pipeline.ts completes it). */
export interface SparseOutputs extends EngineResult {
  readonly report: QualityReport;
}

/**
 * `notAvailable`: what the run will not make, with why (the dense plan's list, dense-plan.ts), when
 * no dense stage runs after this one; null when they do: the dense-report stage writes the report
 * again with the final list. Either way the report's `not_available` holds {output_type, reason}.
 */
export function sparseOutputsStage(imageMaxPixels: number, notAvailable: readonly { outputType: OutputType; reason: string }[] | null): Stage<SparseOutputInputs, SparseOutputs> {
  return {
    name: 'sparse-outputs',
    title: 'Writing outputs',
    weight: 8,
    async run(context, inputs) {
      await context.progress(0, 'Writing outputs');
      const { input } = context;
      const { model } = inputs.placement.placed;
      const { frame } = inputs.placement;
      const cameras = cameraRecords(inputs);
      const { cloud, observations } = outputCloud(model, frame);
      const georeferencing = georeferencingRecord(inputs.placement, cameras.residuals);
      const offset: Vec3 = frame ? frame.offsetOutput : [0, 0, 0];
      const calibrated = {
        engine: ENGINE_NAME,
        reconstructed: true,
        note: 'Cameras refined by COLMAP structure from motion (bundle adjustment), georeferenced to the images\' GPS positions.',
        conventions: {
          quaternion: '[w, x, y, z] rotating the camera frame (x right, y down, z along the optical axis) to local East-North-Up at the images\' centre (arbitrary system: to the model\'s axes)',
          rotation_matrix_output_crs: 'row-major 3x3, camera frame -> output coordinate system axes (x, y, z), for rays in the point cloud\'s system',
          pixel: 'u right, v down, (0, 0) the top-left corner of the image as stored',
          intrinsics: 'pixels; OpenCV distortion k1, k2, p1, p2 (COLMAP RADIAL: k1, k2)',
          position_wgs84_altitude: 'ellipsoidal height (WGS 84), metres',
        },
        pipeline: input.pipeline,
        tags: input.tags,
        output_coordinate_system: describeCrs(input.outputCrs),
        coordinate_system: input.outputCrs.wkt,
        offset_3d_xyz: offset,
        georeferencing,
        images_total: input.images.length,
        images_registered: model.images.length,
        cameras: cameras.records,
        not_calibrated: notCalibrated(model, inputs.downloaded.images),
        control_points: input.controlPoints,
      };
      const report = qualityReport(input, inputs, { gsds: cameras.gsds, count: cloud.count, observations, georeferencing, offset, record: context.record(), notAvailable: notAvailable ?? DENSE_PENDING });
      const thumb = await thumbnail(inputs.downloaded.images[0]?.file, imageMaxPixels);
      return writeOutputs(input, { cloud, offset, calibrated, report, thumb });
    },
  };
}

/** The calibrated cameras of the JSON, with each camera's GPS residual and ground sampling distance. */
function cameraRecords({ placement, downloaded, extracted }: SparseOutputInputs) {
  const { model } = placement.placed;
  const frame = placement.frame;
  const unitFactor = frame?.unitFactor ?? 1;
  const convergence = frame ? quaternionFromAxisAngle([0, 0, 1], frame.convergence) : ([1, 0, 0, 0] as Quaternion);
  const byName = new Map(downloaded.images.map((l) => [l.name, l]));
  const pointIndex = new Map<number, number>();
  model.pointIds.forEach((id, i) => pointIndex.set(id, i));
  const residuals: GpsResidual[] = [];
  const gsds: number[] = [];
  const records = model.images
    .slice()
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((img) => {
      const camera = model.cameras.get(img.cameraId)!;
      const k = intrinsicsOf(camera);
      const R = quaternionToMatrix(img.qvec); // world -> camera
      const t = img.tvec;
      const centre: Vec3 = cameraCentre(img);
      const cameraToWorld = normalizeQuaternion(conjugateQuaternion(img.qvec));
      const quaternion = normalizeQuaternion(multiplyQuaternions(convergence, cameraToWorld));
      const Rcw = quaternionToMatrix(cameraToWorld);
      const rotationOutput = frame?.swapped ? [Rcw[1], Rcw[0], Rcw[2]] : Rcw;
      const ref = placement.references?.get(img.name);
      let gpsResidual: number | null = null;
      if (ref) {
        const horizontal = Math.hypot(centre[0] - ref[0], centre[1] - ref[1]) * unitFactor;
        const vertical = Math.abs(centre[2] - ref[2]) * unitFactor;
        gpsResidual = Math.hypot(horizontal, vertical);
        residuals.push({ name: img.name, horizontal, vertical, total: gpsResidual });
      }
      const depths: number[] = [];
      for (const id of img.point3dIds) {
        const i = pointIndex.get(id);
        if (i === undefined) continue;
        const X = [model.positions[3 * i], model.positions[3 * i + 1], model.positions[3 * i + 2]];
        const z = R[2][0] * X[0] + R[2][1] * X[1] + R[2][2] * X[2] + t[2];
        if (z > 0) depths.push(z);
      }
      if (depths.length) gsds.push((median(depths) * unitFactor) / k.fx);
      const source = byName.get(img.name)!;
      const wgs = frame?.toWgs84(centre) ?? null;
      const p = frame ? frame.toOutput(centre) : centre;
      return {
        key: source.image.key,
        image_name: img.name,
        width: camera.width,
        height: camera.height,
        make: source.image.make,
        model: source.image.model,
        camera_id: camera.id,
        intrinsics: {
          model: camera.model,
          params: camera.params,
          focal_length_px: k.fx,
          ...k,
          prior_focal_length_px: source.intrinsics ? groupPrior(extracted.groups, img.name) : null,
        },
        position_output_crs: { x: p[0], y: p[1], z: p[2] },
        position_wgs84: wgs ? { latitude: wgs.latitude, longitude: wgs.longitude, altitude: wgs.altitude } : null,
        quaternion,
        rotation_matrix_output_crs: rotationOutput,
        gps: source.image.latitude !== null ? { latitude: source.image.latitude, longitude: source.image.longitude, altitude: source.image.altitude } : null,
        observations: img.point3dIds.length,
        // Distance between the calibrated position and the image's GPS position, metres; an
        // outlier (> GPS_OUTLIER_METRES) is a wrong registration or a GPS jump: check it.
        gps_residual_m: gpsResidual,
        gps_outlier: gpsResidual !== null && gpsResidual > GPS_OUTLIER_METRES,
      };
    });
  return { records, residuals, gsds };
}

function notCalibrated(model: ColmapModel, images: readonly LocalImage[]) {
  const registeredNames = new Set(model.images.map((i) => i.name));
  return images.filter((l) => !registeredNames.has(l.name)).map((l) => ({ key: l.image.key, image_name: l.name, reason: 'not registered by the incremental mapper (too few matches with the model)' }));
}

/** The model's points in the output system. */
function outputCloud(model: ColmapModel, frame: LocalFrame | null): { cloud: PointCloud; observations: number } {
  const count = model.pointIds.length;
  const cloud: PointCloud = { count, positions: new Float64Array(3 * count), colors: model.colors };
  for (let i = 0; i < count; i++) {
    const p: Vec3 = [model.positions[3 * i], model.positions[3 * i + 1], model.positions[3 * i + 2]];
    const q = frame ? frame.toOutput(p) : p;
    cloud.positions[3 * i] = q[0];
    cloud.positions[3 * i + 1] = q[1];
    cloud.positions[3 * i + 2] = q[2];
  }
  let observations = 0;
  for (let i = 0; i < count; i++) observations += model.trackLengths[i];
  return { cloud, observations };
}

function georeferencingRecord(placement: Placement, residuals: GpsResidual[]) {
  const { frame } = placement;
  if (!frame) return { method: 'none: arbitrary output system (no image carries a GPS position); coordinates and scale are COLMAP\'s own' };
  return {
    method: 'similarity transform of the model to the images\' GPS positions (COLMAP model_aligner, robust)',
    robust_max_error_m: ALIGNMENT_MAX_ERROR_METRES,
    images_with_position: placement.references?.size ?? 0,
    residuals_m: residuals.length
      ? {
          count: residuals.length,
          rmse_horizontal: rms(residuals.map((r) => r.horizontal)),
          rmse_vertical: rms(residuals.map((r) => r.vertical)),
          median_total: median(residuals.map((r) => r.total)),
          within_max_error: residuals.filter((r) => r.total <= ALIGNMENT_MAX_ERROR_METRES).length,
          outliers: residuals.filter((r) => r.total > GPS_OUTLIER_METRES).map((r) => ({ image_name: r.name, distance_m: r.total })),
        }
      : null,
    vertical: frame.hasHeights ? 'EGM96 height: GPS altitudes taken as ellipsoidal, minus the EGM96 geoid undulation' : 'no image altitude: heights are relative (0 at the images\' mean)',
    grid_convergence_deg: (frame.convergence * 180) / Math.PI,
    // Collinear cameras leave the roll about their track free (leveling.ts).
    camera_spread_ratio: placement.placed.leveling?.spreadRatio ?? null,
    track_leveling_deg: placement.placed.leveling?.rotationDeg ?? 0,
  };
}

function qualityReport(
  input: EngineInput,
  { prepared, extracted, placement }: SparseOutputInputs,
  run: { gsds: number[]; count: number; observations: number; georeferencing: object; offset: Vec3; record: RunRecord; notAvailable: readonly { outputType: OutputType; reason: string }[] },
) {
  const { model } = placement.placed;
  const crs = input.outputCrs;
  const { record, count, observations } = run;
  return {
    engine: ENGINE_NAME,
    engine_version: prepared.version ?? 'COLMAP (version unknown)',
    images: { total: input.images.length, registered: model.images.length, ratio: model.images.length / input.images.length },
    mean_reprojection_error_px: meanReprojectionError(model),
    points: count,
    observations,
    mean_track_length: count ? observations / count : null,
    gsd_cm: run.gsds.length ? median(run.gsds) * 100 : null,
    gsd_note: 'median over cameras of (median depth of the points a camera sees / focal length in pixels)',
    // pairs: matched pairs (null for sequential: COLMAP's own); fallback_pairs: null
    // when the selected pairs registered every image at once.
    matching: { ...placement.matching, exhaustive_max_images: EXHAUSTIVE_MAX_IMAGES },
    camera_groups: extracted.groups.map((g) => ({ label: g.label, make: g.make, model: g.model, width: g.width, height: g.height, prior_focal_length_px: g.focalPx, focal_source: g.focalSource, images: g.images.length })),
    georeferencing: run.georeferencing,
    coordinate_system: crs.wkt,
    output_coordinate_system: describeCrs(crs),
    offset_3d_xyz: run.offset,
    // Written again by the dense stages (dense-report.ts) when they run.
    not_available: run.notAvailable.map((n) => ({ output_type: n.outputType, reason: n.reason })),
    timings_s: { download: record.stageSeconds.download, ...record.commandSeconds, total: (Date.now() - record.started) / 1000 },
    stage_timings_s: record.stageSeconds,
    stage_titles: record.stageTitles,
    commands: record.commands.map((c) => c.join(' ')),
    processing_log: processingLogKey(input),
  };
}

async function writeOutputs(input: EngineInput, made: { cloud: PointCloud; offset: Vec3; calibrated: object; report: QualityReport; thumb: Buffer | null }): Promise<SparseOutputs> {
  const outputs: ProducedOutput[] = [...(await writePointCloudOutputs(input, made.cloud, made.offset))];
  const put = async (outputType: OutputType, name: string, body: Buffer, contentType: string) => {
    const key = `${input.outputPrefix}${name}`;
    await input.store.putObject(input.bucket, key, body, { contentType });
    outputs.push({ outputType, key });
  };
  await put('calibrated_camera_parameters_json', 'calibrated_camera_parameters.json', Buffer.from(JSON.stringify(made.calibrated, null, 2)), 'application/json');
  outputs.push(await writeQualityReport(input, made.report));
  if (made.thumb) await put('project_thumb', 'project_thumb.jpg', made.thumb, 'image/jpeg');
  return {
    outputs,
    // What is not made, and why, is the dense plan's to say (dense-pipeline.ts).
    notAvailable: [],
    report: made.report,
  };
}

/**
 * `point_cloud` (LAS 1.2, point format 2 with RGB, scale 0.001, offset = offset_3d_xyz) and
 * `point_cloud_ply` (PLY, doubles) of a cloud in the output system: the sparse cloud here, the dense
 * one after it (fusion.ts writes over the same keys).
 */
export async function writePointCloudOutputs(input: EngineInput, cloud: PointCloud, offset: Vec3): Promise<ProducedOutput[]> {
  const crs = input.outputCrs;
  const projected = crs.type === 'projected';
  const las = writeLas(cloud, {
    pointFormat: 2,
    scale: 0.001,
    offset,
    wkt: crs.wkt,
    horizontalEpsg: projected ? crs.horizontal_epsg : null,
    verticalEpsg: projected ? crs.vertical_epsg : null,
    generatingSoftware: 'open-inspection colmap',
  });
  const lasKey = `${input.outputPrefix}point_cloud.las`;
  await input.store.putObject(input.bucket, lasKey, las, { contentType: 'application/vnd.las' });
  const plyKey = `${input.outputPrefix}point_cloud.ply`;
  await input.store.putObject(input.bucket, plyKey, writePly(cloud, [`coordinate system: ${crs.name}`, `offset_3d_xyz: ${offset.join(' ')}`]), { contentType: 'application/octet-stream' });
  return [
    { outputType: 'point_cloud', key: lasKey },
    { outputType: 'point_cloud_ply', key: plyKey },
  ];
}

/** The quality report (JSON), written again by the dense stages with their figures. */
export async function writeQualityReport(input: EngineInput, report: QualityReport): Promise<ProducedOutput> {
  const key = `${input.outputPrefix}quality_report.json`;
  await input.store.putObject(input.bucket, key, Buffer.from(JSON.stringify(report, null, 2)), { contentType: 'application/json' });
  return { outputType: 'quality_report', key };
}

function groupPrior(groups: readonly CameraGroup[], name: string): number | null {
  return groups.find((g) => g.images.includes(name))?.focalPx ?? null;
}

function rms(values: number[]): number {
  return Math.sqrt(values.reduce((a, v) => a + v * v, 0) / values.length);
}

/** Read by libvips from the downloaded file, not into this process's memory; decoding bounded by the pixel limit. */
async function thumbnail(file: string | undefined, limitInputPixels: number): Promise<Buffer | null> {
  if (!file) return null;
  try {
    const sharp = await loadSharp();
    return await sharp(file, { limitInputPixels }).rotate().resize(THUMB_SIZE, THUMB_SIZE, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 80 }).toBuffer();
  } catch {
    return null;
  }
}
