// GET /v1/inspections/{id}/ortho/ (where the orthomosaic is and how far to zoom) and
// GET /v1/inspections/{id}/ortho/tiles/{z}/{x}/{y}.png (its Web Mercator tiles), for the console's
// map and any XYZ map client (not in the spec; issue 28). A route of its own rather than a field of
// the inspection record: the record is the spec's. An inspection without an orthomosaic answers
// 200 `{available: false, reason, detail}` (the cloud's reason, which the console shows), not a
// 404: the console asks for every inspection it opens, and browsers log each 404 as a failed load;
// the tiles of such an inspection are still 404. Same authentication as the inspection's other
// reads, share tokens included (auth/share-tokens.ts SHAREABLE_READS).
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { Id } from '../../shared/schemas/limits.ts';
import * as S from '../inspection.schemas.ts';
import { MAX_TILE_ZOOM } from './ortho.service.ts';

const tags = ['results'];
const LatLon = Type.Tuple([Type.Number(), Type.Number()], { description: '[latitude, longitude]' });

const OrthoAvailable = Type.Object({
  available: Type.Literal(true),
  bounds: Type.Object({ sw: LatLon, ne: LatLon }, { description: 'Extent in WGS 84 (EPSG:4326)' }),
  min_zoom: Type.Integer({ description: 'Web-map zoom at which the whole orthomosaic fits in one 256-pixel tile' }),
  max_zoom: Type.Integer({ description: 'Deepest zoom whose pixels are no finer than the orthomosaic\'s (deeper tiles are magnified)' }),
  resolution_m: Type.Union([Type.Number(), Type.Null()], { description: 'Ground size of a pixel, metres' }),
  width: Type.Union([Type.Integer(), Type.Null()], { description: 'Pixels across' }),
  height: Type.Union([Type.Integer(), Type.Null()], { description: 'Pixels down' }),
  photos: Type.Union([Type.Integer(), Type.Null()], { description: 'Photos the reconstruction registered' }),
  tile_url: Type.String({ description: 'Tile URL template (XYZ, {z}/{x}/{y}), a path of this service; the same credentials as this call' }),
});
const OrthoMissing = Type.Object({
  available: Type.Literal(false),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'The cloud\'s reason when it gave one (e.g. the photos look at the horizon), else null' }),
  detail: Type.String({ description: 'A sentence for people: why this inspection has no orthomosaic' }),
});
const OrthoRecord = Type.Union([OrthoAvailable, OrthoMissing], { description: '`available` says which: the orthomosaic on the map, or why there is none' });

// Strings checked by the service: a z, x or y that is no tile address is a 400 naming the field with
// its range (an integer schema would make it a 404 like an unknown id: http/input-guards.ts).
const TileParams = Type.Object({
  id: Id(),
  z: Type.String({ maxLength: 32, description: `Zoom, 0 to ${MAX_TILE_ZOOM}` }),
  x: Type.String({ maxLength: 32, description: 'Column, 0 to 2^z - 1, from the west' }),
  y: Type.String({ maxLength: 32, description: 'Row, 0 to 2^z - 1, from the north' }),
});

export function registerOrthoRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.addHook('onClose', async () => deps.ortho.close());
  r.get(
    '/v1/inspections/:id/ortho/',
    {
      schema: {
        tags,
        summary: 'The orthomosaic on a web map: extent, zooms and tile URL (web console; not in the spec)',
        description:
          'Once processing is done, the orthomosaic the cloud made (result_type `ortho`): `available: true` with its extent, zooms and tile URL. ' +
          'When the inspection has none (not processed yet, not requested: `processing_parameters.generate_ortho`, or an engine or photos that make none), still 200: `available: false` with the cloud\'s reason in `reason` when it gave one and a sentence in `detail`. ' +
          '404 only for an inspection that is not found; 410 `purged` once retention deleted its data.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        response: { 200: OrthoRecord, ...S.errorResponses, ...S.purgedResponse },
      },
    },
    async (request) => deps.ortho.info(request.auth, request.params.id),
  );
  r.get(
    '/v1/inspections/:id/ortho/tiles/:z/:x/:y.png',
    {
      schema: {
        tags,
        summary: 'A 256 x 256 Web Mercator tile of the orthomosaic, PNG with transparency (XYZ addressing, as OpenStreetMap\'s)',
        description:
          'Rendered from the Cloud-Optimized GeoTIFF by windowed reads of the overview matching the zoom. A tile outside the orthomosaic is a transparent PNG; every zoom 0-24 is served (beyond max_zoom the pixels are magnified). ' +
          'Cached per file: `ETag` (304 on `If-None-Match`), `Cache-Control: private, immutable`. 400 on a z, x or y outside its range; 404 when the inspection has no orthomosaic; ' +
          '422 `raster_unreadable`, `raster_unsupported` or `raster_too_large` with the reason when the file cannot be tiled (not a readable GeoTIFF, not 8-bit RGB(A), no overview for the zoom); 409 when the file is gone from storage.',
        headers: S.AuthHeaders,
        params: TileParams,
        response: {
          200: { description: 'PNG, 256 x 256, RGBA', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } },
          304: { description: 'Not modified (If-None-Match)', type: 'null' },
          ...S.errorResponses,
          422: S.ErrorBody,
          ...S.purgedResponse,
        },
      },
    },
    async (request, typedReply) => {
      // The PNG is a Buffer sent as is; the typed reply only knows the JSON bodies.
      const reply = typedReply as unknown as FastifyReply;
      const { id, z, x, y } = request.params;
      const ifNoneMatch = request.headers['if-none-match'];
      const tile = await deps.ortho.tile(request.auth, id, z, x, y, typeof ifNoneMatch === 'string' ? ifNoneMatch : undefined);
      reply.header('Cache-Control', 'private, max-age=31536000, immutable').header('ETag', tile.etag);
      if (tile.png === null) return reply.status(304).send();
      reply.type('image/png');
      return reply.send(tile.png);
    },
  );
}
