// Inventory items by hand (issue 30 §4): create, change and delete an inspection's items (by hand,
// or the automatic detection's: antenna-detection.ts), and complete its review. The list (GET …/inventory/) is with the inspection's other results
// (inspections/inspection-data.routes.ts). Share tokens reach none of these (share-tokens.ts).
import { Type } from 'typebox';
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { emptyBodyAsObject } from '../http/empty-body.ts';
import * as S from '../inspection.schemas.ts';
import * as I from './inventory.schemas.ts';

const errors = S.errorResponses;
const tags = ['inventory'];
const geometry =
  'With `coords_2d` marking the front face on two or more calibrated photos, the service computes `coords_3d` ([x, y, z] of the face centre, output coordinate system, metres), `azimuth` (degrees clockwise from true north of the facing direction: the grid north of the output system turned by the meridian convergence at the asset; grid north when the system is not georeferenced or the asset has no position, as `computation.azimuth_reference` says), `downtilt` (degrees of the facing direction below the horizontal), `plumb` (degrees between the vertical axis and the vertical, within the front plane), `width` (metres) and `height` (metres of the centre above `base_plate_location.z` when set, else above `ground_reference_altitude`), and says how in `computation`. Without marks those five may be entered by hand. Any change moves `additional_statuses.inventory` to 4 (review ongoing).';

export function registerInventoryRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.post(
    '/v1/inspections/:id/inventory/',
    {
      schema: { tags, description: `\`model_type\` required; \`number\` is generated per inspection; \`source\` is "manual". ${geometry}`, headers: S.AuthHeaders, params: S.IdParams, body: I.CreateInventoryItemBody, response: { 201: S.InventoryItem, ...errors } },
    },
    async (request, reply) => {
      const created = await deps.inventory.create(request.auth, request.params.id, request.body);
      reply.status(201);
      return created;
    },
  );
  r.patch(
    '/v1/inspections/:id/inventory/:item_id/',
    {
      preValidation: emptyBodyAsObject,
      schema: { tags, description: `Only the fields given change; new \`coords_2d\` recomputes the geometry, \`{}\` clears it. ${geometry}`, headers: S.AuthHeaders, params: I.InventoryItemParams, body: I.PatchInventoryItemBody, response: { 200: S.InventoryItem, ...errors } },
    },
    async (request) => deps.inventory.update(request.auth, request.params.id, request.params.item_id, request.body),
  );
  r.delete(
    '/v1/inspections/:id/inventory/:item_id/',
    { schema: { tags, headers: S.AuthHeaders, params: I.InventoryItemParams, response: { 204: S.NoContent, ...errors } } },
    async (request, reply) => {
      await deps.inventory.remove(request.auth, request.params.id, request.params.item_id);
      return reply.status(204).send(null);
    },
  );
  r.post(
    '/v1/inspections/:id/inventory/review_done/',
    {
      preValidation: emptyBodyAsObject,
      schema: {
        tags,
        description:
          'The inventory review is complete: `additional_statuses.inventory` becomes 5 (completed) with at least one item, 6 (completed without compatible inventory) with none. 409 unless it is unset, 3 (review pending: the automatic detection\'s items are written), 4 or 9 (detected on a borderline cloud); a completed review is reopened by changing an item.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        response: { 200: Type.Object({ inventory: Type.Integer() }), ...errors },
      },
    },
    async (request) => deps.inventory.reviewDone(request.auth, request.params.id),
  );
}
