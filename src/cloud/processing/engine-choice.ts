// The `engine` field of start_processing (an extension, docs/cloud-service.md): one of the engines
// this deployment offers (ENGINE and ENGINES), the default one when not given.
import { ValidationError } from '../../infra/http/errors.ts';

export interface OfferedEngines {
  defaultName: string;
  names: readonly string[];
}

export function resolveEngine(raw: unknown, offered: OfferedEngines): string {
  // A form sends an empty field for "not given", as it does for tags.
  if (raw === undefined || raw === null || raw === '') return offered.defaultName;
  const list = `Offered: ${offered.names.join(', ')} (default ${offered.defaultName}).`;
  if (typeof raw !== 'string') throw ValidationError.field('engine', `Expected one engine name. ${list}`);
  const name = raw.trim().toLowerCase();
  if (!offered.names.includes(name)) throw ValidationError.field('engine', `Engine "${raw.trim()}" is not offered by this deployment. ${list}`);
  return name;
}
