// POST /v1/inspections/retry/ -> 201 with the new retry (see retry.service.ts).
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import * as S from '../inspection.schemas.ts';

export function registerRetryRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.post(
    '/v1/inspections/retry/',
    {
      schema: {
        tags: ['inspections'],
        description:
          'Retries an inspection: all five conditions of the spec must hold (409 otherwise; 404 for an inspection the request cannot see). The retry gets its own cloud project, a copy of the original inputs, and starts processing on its own, recycling the allowance of its original (no units spent).',
        headers: S.AuthHeaders,
        body: S.RetryBody,
        response: { 201: S.Inspection, ...S.errorResponses, ...S.purgedResponse },
      },
    },
    async (request, reply) => {
      const retry = await deps.retries.retry(request.auth, request.body);
      reply.status(201);
      return retry;
    },
  );
}
