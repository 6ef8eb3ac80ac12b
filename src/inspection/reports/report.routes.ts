// POST /v1/inspections/{id}/report/ -> 202 {} (see report.service.ts).
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { emptyBodyAsObject } from '../http/empty-body.ts';
import { ReportBody } from './report-options.ts';
import { localeOfAcceptLanguage } from './report-locale.ts';
import * as S from '../inspection.schemas.ts';
import { Type } from 'typebox';

export function registerReportRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.post(
    '/v1/inspections/:id/report/',
    {
      preValidation: emptyBodyAsObject,
      schema: {
        tags: ['reports'],
        description:
          'Builds a PDF and a JSON report in the background; report_status goes processing -> available (or error); the files appear in outputs as report_pdf and report_json. 409 while a report is being built; 410 `purged` once retention deleted the photos (the report made before stays in outputs).',
        headers: Type.Object({
          ...S.AuthHeaders.properties,
          'accept-language': Type.Optional(
            Type.String({ description: "The report JSON's reported_by.preferred_language and country: the language and region of the preferred tag (de-CH: de, CH); none: null" }),
          ),
        }),
        params: S.IdParams,
        body: ReportBody,
        response: { 202: S.EmptyObject, ...S.errorResponses, ...S.purgedResponse },
      },
    },
    async (request, reply) => {
      reply.status(202);
      return deps.reports.request(request.auth, request.params.id, request.body, localeOfAcceptLanguage(request.headers['accept-language']));
    },
  );
}
