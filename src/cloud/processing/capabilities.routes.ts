// GET /project/api/v3/capabilities/ (an extension, docs/cloud-service.md "Capabilities"): which of
// the four requestable outputs this installation's engines can make, and why not (engine-capabilities.ts).
// Any token reads it, a read-only one too; it names no project and no organization's data.
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { capabilitiesRecord } from './engine-capabilities.ts';
import type { EngineSet } from './engines.ts';
import * as S from '../cloud.schemas.ts';

const OutputCapability = Type.Object({
  available: Type.Boolean({ description: 'Whether the engine makes this output at all on this installation' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Why not (the note its runs list the output `not available` with); null when available' }),
  note: Type.Union([Type.String(), Type.Null()], { description: 'What a made output still depends on (e.g. photos that look down); null when nothing' }),
});

const Outputs = Type.Object(
  { point_cloud: OutputCapability, mesh: OutputCapability, dsm: OutputCapability, ortho: OutputCapability },
  { description: 'The outputs start_processing\'s `outputs` asks for' },
);

const EngineCapabilities = Type.Object({ engine: Type.String({ description: 'Engine name (ENGINE, ENGINES)' }), outputs: Outputs });

const Capabilities = Type.Object(
  {
    engine: Type.String({ description: 'The default engine: the one start_processing runs without `engine`' }),
    outputs: Outputs,
    engines: Type.Array(EngineCapabilities, { description: 'Every engine start_processing may choose, the default first' }),
  },
  { description: 'What this installation\'s engines can make (extension)' },
);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function registerCapabilitiesRoute(scope: FastifyInstance<any, any, any, any, TypeBoxTypeProvider>, engines: EngineSet): void {
  const answer = capabilitiesRecord(engines); // fixed at startup, as the engines are
  scope.get(
    '/project/api/v3/capabilities/',
    {
      schema: {
        tags: ['processing'],
        summary: 'What this installation\'s engines can make (extension)',
        description:
          'For the default engine (`engine`, `outputs`) and each offered one (`engines`): whether each of the outputs start_processing\'s `outputs` asks for ' +
          '(`point_cloud`, `mesh`, `dsm`, `ortho`) can be made, and if not why, in the words a run lists it `not available` with. ' +
          'An available output may still be missing from a run (e.g. no orthophoto of photos looking at the horizon): the run\'s outputs say why.',
        response: { 200: Capabilities, 401: S.ErrorBody, 403: S.ErrorBody },
      },
    },
    async () => answer,
  );
}
