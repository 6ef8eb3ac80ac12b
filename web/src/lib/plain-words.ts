// Plain names for the service's codes (issue 29 §2): allowance types ("projects", "Tower
// inventory" in the API) and processing backends ("mapper", "vortex"), each with a one-line
// explanation the page shows beside it; and dates in the reader's locale (Intl.DateTimeFormat:
// "28 Nov 2026, 14:05" in en-GB, "Nov 28, 2026, 2:05 PM" in en-US), never an ISO string.
// Framework-free, unit-tested in test/web-annotation-list.test.ts.

interface Words {
  /** The name in a list or a table ("Processing runs"). */
  name: string;
  /** One unit, in a sentence ("processing run"). */
  one: string;
  explanation: string;
}

const ALLOWANCE: Record<string, Words> = {
  projects: { name: 'Processing runs', one: 'processing run', explanation: 'One is used each time an inspection’s photos are processed into a 3D model and maps.' },
  tower_inventory: { name: 'Equipment inventories', one: 'equipment inventory', explanation: 'One is used when processing also finds the antennas and boxes on a tower in the 3D model (“Detect antennas”).' },
};

/** The allowance type's plain words; an unknown code keeps the API's name (or the code). */
export function allowanceWords(code: string, apiName?: string): Words {
  return ALLOWANCE[code] ?? { name: apiName || code, one: `${apiName || code} unit`, explanation: '' };
}

/** "1 processing run", "2 processing runs". */
export function allowanceAmount(code: string, amount: number): string {
  const { one } = allowanceWords(code);
  return `${amount} ${one}${amount === 1 ? '' : 's'}`;
}

export const PROCESSING_BACKENDS = [
  { value: 'mapper', name: 'Standard', explanation: 'The installation’s usual photogrammetry engine. Keep it unless told otherwise.' },
  { value: 'vortex', name: 'Alternative', explanation: 'A second engine the administrator may set up; where none is, it runs the same engine as Standard.' },
] as const;

export type ProcessingBackend = (typeof PROCESSING_BACKENDS)[number]['value'];

/** "Standard", or the code itself when unknown. */
export function backendName(value: string): string {
  return PROCESSING_BACKENDS.find((b) => b.value === value)?.name ?? value;
}

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** A date and time in the reader's locale and time zone; '—' for none or an unreadable value. */
export function formatDateTime(iso: string | null | undefined, format: Intl.DateTimeFormat = DATE_TIME): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : format.format(date);
}

/** A date alone, in the reader's locale. */
export function formatDate(iso: string | null | undefined): string {
  return formatDateTime(iso, DATE);
}

/**
 * The sign-in lock-out in words (the server's 429 `throttled` says "try again in N seconds"): the
 * time it ends, and that until then the right password is refused too — a user who then types the
 * right one must not conclude that it is wrong. undefined when the detail names no delay.
 */
export function lockoutMessage(detail: string, now: Date, format = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' })): string | undefined {
  const seconds = /try again in (\d+) seconds?/i.exec(detail)?.[1];
  if (seconds === undefined) return undefined;
  // Rounded up to the next minute: the time shown never comes before the lock-out ends.
  const until = new Date(Math.ceil((now.getTime() + Number(seconds) * 1000) / 60_000) * 60_000);
  return `Too many failed sign-ins for this account from this network. Until ${format.format(until)}, every attempt is refused, even with the right password; try again after that time.`;
}

const ENGINES: Record<string, string> = {
  exif: 'photo positions only (no 3D reconstruction)',
  colmap: 'COLMAP on this server',
  nodeodm: 'OpenDroneMap (NodeODM)',
};

/** The photogrammetry engine that ran, in words ("COLMAP on this server"); unknown codes as they are. */
export function engineName(code: string): string {
  return ENGINES[code] ?? code;
}
