// The cloud's georeferenced rasters of a DONE project, as the inspection keeps them on its
// reconstruction record (pipeline/reconstruction.ts): the orthomosaic (result_type `ortho`), DSM
// (`dsm`) and DTM (`dtm`), each a Cloud-Optimized GeoTIFF in the shared object store with its extent
// in WGS 84 and web-map zooms as the cloud's project details describe it (`outputs.map.layers`,
// cloud processing/map-layers.ts). The orthomosaic is tiled for the console's map (ortho.service.ts);
// the DTM gives the ground altitude (pipeline/ground-altitude.ts) and the DSM measurement volumes
// (measurements/dsm-volume.ts), both read by elevation-raster.ts. When the cloud did not make the orthomosaic, its reason (the output's `note`) is kept so
// that the console can say why.
import type { CloudScope, CloudOutput } from '../cloud-client/cloud-client.ts';
import type { ObjectStore } from '../../infra/storage/object-store.ts';

export interface RasterLayer {
  bucket: string;
  key: string;
  /** ETag of the file when imported: tiles are cached per (inspection, ETag). */
  etag: string | null;
  /** Extent in WGS 84: [latitude, longitude] of the south-west and north-east corners. */
  bounds: { sw: [number, number]; ne: [number, number] };
  min_zoom: number;
  max_zoom: number;
  /** Ground size of a pixel, metres. */
  resolution_m: number | null;
  width: number | null;
  height: number | null;
  epsg: number | null;
}

export interface RasterLayers {
  orthomosaic: RasterLayer | null;
  dsm: RasterLayer | null;
  dtm: RasterLayer | null;
  /** Why there is no orthomosaic, as the cloud gave it (its ortho output's note); null when there is one or no reason was given. */
  orthomosaic_missing_reason: string | null;
}

/** A layer of the cloud's project details (`outputs.map.layers`, cloud.schemas.ts MapLayer). */
export interface CloudMapLayer {
  name: string;
  layer_type: string;
  output_id?: number;
  s3_key: string;
  s3_bucket?: string | null;
  bounds: { sw: [number, number]; ne: [number, number] } | null;
  min_zoom: number;
  max_zoom: number;
  resolution_m?: number;
  width?: number;
  height?: number;
  epsg?: number;
}

const RESULT_TYPES = { orthomosaic: 'ortho', dsm: 'dsm', dtm: 'dtm' } as const;

/**
 * The project's rasters from its outputs (what is done, and the ortho's note when it is not) and
 * its details' map layers (extent, zooms). `defaultBucket`: the bucket of an output that names none.
 */
export async function rasterLayersOf(cloud: CloudScope, projectId: number, outputs: CloudOutput[], store: ObjectStore, defaultBucket: string): Promise<RasterLayers> {
  const byResult = (resultType: string) => outputs.filter((o) => (o.result_type ?? null) === resultType);
  const anyRaster = Object.values(RESULT_TYPES).some((t) => byResult(t).some((o) => o.availability === 'done' && o.s3_key));
  const layers = anyRaster ? ((await cloud.getProject(projectId)).outputs?.map?.layers ?? []) : [];
  const layerOf = async (resultType: string): Promise<RasterLayer | null> => {
    const output = byResult(resultType).find((o) => o.availability === 'done' && o.s3_key);
    const layer = output && layers.find((l) => l.s3_key === output.s3_key && l.bounds);
    if (!output || !layer?.bounds) return null;
    const bucket = output.s3_bucket ?? layer.s3_bucket ?? defaultBucket;
    const head = await store.headObject(bucket, output.s3_key!);
    if (!head) return null;
    return {
      bucket,
      key: output.s3_key!,
      etag: head.etag,
      bounds: layer.bounds,
      min_zoom: layer.min_zoom,
      max_zoom: layer.max_zoom,
      resolution_m: layer.resolution_m ?? null,
      width: layer.width ?? null,
      height: layer.height ?? null,
      epsg: layer.epsg ?? null,
    };
  };
  const orthomosaic = await layerOf(RESULT_TYPES.orthomosaic);
  const missing = orthomosaic ? null : (byResult(RESULT_TYPES.orthomosaic).find((o) => o.note)?.note ?? null);
  return { orthomosaic, dsm: await layerOf(RESULT_TYPES.dsm), dtm: await layerOf(RESULT_TYPES.dtm), orthomosaic_missing_reason: missing };
}
