// GET /v1/inspections/{id}/photos/{photo_id}/preview/?size=thumb|large|original (web console).
import { Type } from 'typebox';
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { Id } from '../../shared/schemas/limits.ts';
import * as S from '../inspection.schemas.ts';

const PreviewParams = Type.Object({ id: Id(), photo_id: Id() });
const PreviewQuery = Type.Object({
  size: Type.Optional(Type.Union([Type.Literal('thumb'), Type.Literal('large'), Type.Literal('original')], { default: 'thumb', description: 'thumb: longest side 320 px; large: 2048 px; original: the uploaded photo' })),
});
const PreviewRecord = Type.Object({
  url: Type.String({ description: 'Presigned GET URL of the JPEG (valid 6 hours)' }),
  size: Type.String({ description: 'The size asked for' }),
  width: Type.Integer({ description: 'Width in pixels as displayed (EXIF orientation applied)' }),
  height: Type.Integer({ description: 'Height in pixels as displayed (EXIF orientation applied)' }),
});

export function registerPreviewRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.get(
    '/v1/inspections/:id/photos/:photo_id/preview/',
    {
      schema: {
        tags: ['results'],
        summary: 'A preview of a camera photo (not in the spec: the web console needs small thumbnails, never the originals)',
        description:
          'Made by the server once (EXIF orientation applied, JPEG) and kept, so that a client never downloads a 5–10 MB original to draw a thumbnail. `photo_id` is the camera\'s; before processing there are no cameras, hence 404. ' +
          'A photo over the image limits (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS) or that cannot be decoded has no preview of any size: 422 `image_too_large` or `image_unreadable` with the reason in `detail`.',
        headers: S.AuthHeaders,
        params: PreviewParams,
        querystring: PreviewQuery,
        response: { 200: PreviewRecord, ...S.errorResponses, 422: S.ErrorBody, ...S.purgedResponse },
      },
    },
    async (request) => deps.previews.preview(request.auth, request.params.id, request.params.photo_id, request.query.size ?? 'thumb'),
  );
}
