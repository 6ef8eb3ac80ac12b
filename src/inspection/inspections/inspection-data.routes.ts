// What an inspection produced: extras, outputs, inventory items and the inputs ZIP.
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { ListOf, respondList } from '../http/lists.ts';
import * as S from '../inspection.schemas.ts';
import { ProcessingState } from '../processing-status/processing-status.service.ts';

const errors = S.errorResponses;
const tags = ['results'];

export function registerInspectionDataRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.get(
    '/v1/inspections/:id/extras/',
    {
      schema: {
        tags,
        description: 'coordinate_system: OGC WKT of the output system, whatever the engine: the system the cloud wrote its outputs in, else the WGS 84 / UTM zone of the photos + EGM96 height; offset_3d_xyz: the offset outputs are written relative to (the photos\' centre, whole metres) ("" and [0, 0, 0] before anything is known).',
        headers: S.AuthHeaders,
        params: S.IdParams,
        response: { 200: S.Extras, ...errors },
      },
    },
    async (request) => deps.extras.get(request.auth, request.params.id),
  );
  r.get(
    '/v1/inspections/:id/processing/',
    {
      schema: {
        tags,
        summary: 'State of the processing, with the cloud project detail (web console; not in the spec)',
        headers: S.AuthHeaders,
        params: S.IdParams,
        response: { 200: ProcessingState, ...errors },
      },
    },
    async (request) => deps.processingStatus.get(request.auth, request.params.id),
  );
  r.get(
    '/v1/inspections/:id/outputs/',
    {
      schema: {
        tags,
        description:
          'Presigned GET URLs (valid 6 hours) of the files that exist: the cloud project\'s outputs that are done (cloud names, e.g. calibrated_camera_parameters_json), input_zip, report_pdf and report_json. Once retention deleted the inspection\'s data (status 24), report_pdf and report_json only.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        querystring: S.PageQuery,
        response: { 200: ListOf(S.Output), ...errors },
      },
    },
    async (request) => respondList(request, request.query, await deps.outputs.list(request.auth, request.params.id)),
  );
  r.get(
    '/v1/inspections/:id/inventory/',
    {
      schema: { tags, description: 'Items entered by hand (POST …/inventory/); no automatic detection ships.', headers: S.AuthHeaders, params: S.IdParams, querystring: S.PageQuery, response: { 200: ListOf(S.InventoryItem), ...errors } },
    },
    async (request) => respondList(request, request.query, await deps.inventory.list(request.auth, request.params.id)),
  );
  r.get(
    '/v1/inspections/:id/inputs/',
    {
      schema: {
        tags,
        description:
          '200 `{url}` when the ZIP of the original inputs exists; 202 when it does not (its generation starts; call again in a few minutes; the creator gets an e-mail when it is ready); 404 for an unknown inspection; 409 when no inputs are registered; 410 `purged` once retention deleted them.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        response: { 200: S.InputsReady, 202: S.InputsPending, ...errors, ...S.purgedResponse },
      },
    },
    async (request, reply) => {
      const answer = await deps.inputs.request(request.auth, request.params.id);
      reply.status(answer.status);
      return answer.body;
    },
  );
}
