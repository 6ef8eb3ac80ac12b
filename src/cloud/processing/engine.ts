// The photogrammetry engine boundary. The cloud service hands an engine the registered inputs of a
// project and gets back the outputs it produced (already written to object storage) and the ones
// it cannot produce. Engines: `exif` (no reconstruction, cameras as recorded; the default until the
// COLMAP engine lands), later `colmap` (local) and `nodeodm` (NodeODM/ClusterODM over HTTP).
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import type { OutputCoordinateSystem } from '../coordinate-systems/crs.ts';
import type { ReadableImage } from './input-analysis.ts';
import type { Pipeline } from './pipelines.ts';
import type { RequestableOutput, RequestedOutputs } from './requested-outputs.ts';

/** Output names of CONTRACT.md section 3. */
export type OutputType =
  | 'point_cloud'
  | 'point_cloud_bundle'
  | '3d_mesh_obj_zip'
  | 'dsm'
  | 'ortho_rgb'
  | 'calibrated_camera_parameters_json'
  | 'quality_report'
  | 'input_zip'
  | 'project_thumb'
  // Added by the colmap/nodeodm engines (documented in README "Photogrammetry engines"):
  // the engine's full console log (text), and the point cloud as PLY beside the LAS.
  | 'processing_log'
  | 'point_cloud_ply'
  // Added by the nodeodm engine (docs/cloud-service.md, "Outputs"): ODM's terrain model when
  // its options make one, and ODM's PDF report beside the JSON quality report.
  | 'dtm'
  | 'quality_report_pdf'
  // Added by the colmap engine's dense stages (issue 28): the mesh as PLY beside the OBJ zip, and
  // the orthomosaic's thumbnail (Pix4D's demo client filters result_type 'ortho', output_type
  // 'ortho_thumb'), and the mesh's web copy the console's 3D tab draws (at most 200k faces, float
  // coordinates minus offset_3d_xyz).
  | '3d_mesh_ply'
  | 'ortho_thumb'
  | '3d_mesh_web_ply';

export interface EngineInput {
  projectId: number;
  projectUuid: string;
  bucket: string;
  /** Registered input keys with their sizes. */
  inputs: { key: string; size: number }[];
  /** The inputs that are readable images, with their metadata (at least one). */
  images: ReadableImage[];
  /** Where this run writes its outputs (a key prefix ending in '/'). */
  outputPrefix: string;
  /** The output coordinate system, already checked (crs.ts). */
  outputCrs: OutputCoordinateSystem;
  pipeline: Pipeline;
  tags: string[];
  /** start_processing's `outputs` (requested-outputs.ts); null or a missing key: the engine's default. */
  requestedOutputs?: RequestedOutputs | null;
  /** GCPs (x, y, z in the output system), MTPs and their marks (pixel coordinates in `photo`). */
  controlPoints: ControlPoints;
  store: ObjectStore;
  /** Progress 0..100 (never goes backwards) with a human text for display_detailed_status. */
  reportProgress(percent: number, text: string): Promise<void>;
  signal: AbortSignal;
}

export interface ControlPoints {
  gcps: { name: string; point_type: 'GCP' | 'CHECKPOINT'; x: number; y: number; z: number; xy_accuracy: number; z_accuracy: number }[];
  mtps: { name: string; is_checkpoint: boolean }[];
  marks: { gcp: string; photo: string; x: number; y: number }[];
}

/** An output written to storage; its result_type follows from its type (result-types.ts). */
export interface ProducedOutput {
  outputType: OutputType;
  key: string;
}

export interface EngineResult {
  outputs: ProducedOutput[];
  /** Outputs this engine does not make, with why; listed as `not available`, never faked. */
  notAvailable: { outputType: OutputType; reason: string }[];
}

/**
 * Whether an engine can make a requestable output at all on this installation, whatever the photos
 * (GET /project/api/v3/capabilities/, engine-capabilities.ts). `reason`: why not, in the words the
 * engine's runs list the output `not available` with; `note`: what a made output still depends on.
 */
export type OutputCapability = { available: true; note: string | null } | { available: false; reason: string };
export type OutputCapabilities = Readonly<Record<RequestableOutput, OutputCapability>>;

export interface PhotogrammetryEngine {
  readonly name: string;
  /** What it can make; known without running it (nor loading a lazily loaded engine's module). */
  readonly capabilities: OutputCapabilities;
  run(input: EngineInput): Promise<EngineResult>;
}

/** A failure with one of the cloud spec's error codes (10001, 10201, 10601, ...). */
export class EngineError extends Error {
  constructor(
    readonly errorCode: number,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'EngineError';
  }
}
