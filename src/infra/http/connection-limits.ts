// Caps on the TCP connections a server holds (issue 27, finding 2). All three servers of a `serve`
// process (inspection, cloud, embedded S3) share one process and so one limit of open file
// descriptors: 19,950 idle connections to the S3 port took the process to that limit, and from
// then on the API servers reset every connection. So each server holds at most a number of
// connections (one more is closed at once, before a byte is read), and at most a number per client
// address, and the defaults are fractions of the open-file limit read at start, which leaves room
// for the other servers, the database, and the files requests read and write. Issue 40 §4: the API
// servers had no cap per address, and 2,048 idle connections from one address (each with an
// unfinished request) took the whole cap, so every other client was reset for the headers
// timeout. A proxy that TRUST_PROXY names is no one client: its connections are not capped per
// address (`exempt`). (Timeouts close the connections that do hold a slot but send nothing: see
// startS3Server and http-edge.ts.)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** What a server logs refusals with (a pino logger). */
export interface ConnectionLogger {
  warn(object: object, message: string): void;
}

export interface ConnectionCaps {
  /** Connections held at once (0: no cap). */
  max: number;
  /** Connections held at once from one client address, an IPv6 /64 counting as one (0: no cap). */
  perAddress?: number;
  /** Addresses not capped per address (trusted proxies: trustedProxies()); the global cap still holds. */
  exempt?: (address: string) => boolean;
}

/**
 * This process's limit of open files (the soft RLIMIT_NOFILE, which Node raises to the hard limit
 * at start), or undefined when it cannot be read. Linux: /proc/self/limits; elsewhere `ulimit -n`
 * of a child shell, which inherits the limit.
 */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft === 'unlimited') return Infinity;
    if (soft && /^\d+$/.test(soft)) return Number(soft);
  } catch {
    // not Linux: ask the shell
  }
  try {
    const out = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2_000 }).trim();
    if (out === 'unlimited') return Infinity;
    if (/^\d+$/.test(out)) return Number(out);
  } catch {
    // unknown
  }
  return undefined;
}

/** Assumed when the limit cannot be read: a common default, so the caps err on the low side. */
const UNKNOWN_LIMIT = 1024;

export interface DefaultConnectionCaps {
  /** The S3 endpoint. */
  storage: Required<Pick<ConnectionCaps, 'max' | 'perAddress'>>;
  /** Each API server (inspection, cloud). */
  api: number;
  /** Each API server, from one client address. */
  apiPerAddress: number;
  /** The limit they were derived from. */
  openFiles: number | undefined;
}

/**
 * Defaults derived from the open-file limit. An S3 connection can hold three descriptors (its
 * socket, the file it streams, a temp file or part), an API connection about one: an eighth of the
 * limit for the S3 endpoint's connections and an eighth for each API server keep, all servers full,
 * three eighths or more for the database, the job queue and the files processing opens. Capped at
 * 1,024 (S3) and 2,048 (API) connections: far more than a team's uploads and consoles need.
 */
export function defaultConnectionCaps(openFiles: number | undefined = openFileLimit()): DefaultConnectionCaps {
  const budget = Math.min(openFiles ?? UNKNOWN_LIMIT, 1 << 24);
  const storage = Math.max(1, Math.min(1024, Math.floor(budget / 8)));
  // One address may take a quarter of the endpoint: aws-cli runs 10 requests at once, rclone 16,
  // the console 4 per upload, and an office behind one NAT address has several such clients.
  const perAddress = Math.max(1, Math.min(128, Math.floor(storage / 4)));
  const api = Math.max(1, Math.min(2048, Math.floor(budget / 8)));
  // A browser holds 6 connections to a host, a script a few: a quarter of the server's, as on the
  // S3 endpoint, at most 256 (an office of dozens behind one NAT address), leaves the rest to others.
  const apiPerAddress = Math.max(1, Math.min(256, Math.floor(api / 4)));
  return { storage: { max: storage, perAddress }, api, apiPerAddress, openFiles };
}

/**
 * Applies the caps to a listening (or about to listen) server. Beyond `max`, Node closes the new
 * connection before it becomes a socket object (`maxConnections`); beyond `perAddress`, the socket
 * is destroyed as soon as it is accepted. Refusals are logged at most once a minute, with counts.
 */
export function limitConnections(server: net.Server, caps: ConnectionCaps, logger: ConnectionLogger, name: string): void {
  let refused = 0;
  let loggedAt = -Infinity;
  const refuse = (reason: 'max' | 'perAddress', address: string | undefined) => {
    refused++;
    const now = Date.now();
    if (now - loggedAt < 60_000) return;
    loggedAt = now;
    logger.warn(
      { server: name, refused, reason, address, maxConnections: caps.max || undefined, maxConnectionsPerAddress: caps.perAddress || undefined },
      `${name}: connections refused (connection cap reached; counted since the last such line)`,
    );
    refused = 0;
  };
  if (caps.max) {
    server.maxConnections = caps.max;
    server.on('drop', (data?: { remoteAddress?: string }) => refuse('max', data?.remoteAddress));
  }
  const perAddress = caps.perAddress;
  if (!perAddress) return;
  const held = new Map<string, number>();
  server.on('connection', (socket: net.Socket) => {
    if (caps.exempt?.(socket.remoteAddress ?? '')) return;
    const group = addressGroup(socket.remoteAddress ?? '');
    const count = held.get(group) ?? 0;
    if (count >= perAddress) {
      socket.destroy();
      refuse('perAddress', socket.remoteAddress);
      return;
    }
    held.set(group, count + 1);
    socket.once('close', () => {
      const left = (held.get(group) ?? 1) - 1;
      if (left > 0) held.set(group, left);
      else held.delete(group);
    });
  });
}

/**
 * The unit the per-address cap counts: an IPv4 address (also when written IPv4-mapped, as a
 * dual-stack server sees it), or the /64 network of an IPv6 address, since one client commonly
 * holds a whole /64.
 */
export function addressGroup(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!net.isIPv6(address)) return address;
  const bare = address.split('%')[0];
  const [head, tail] = bare.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = groups(tail);
  // An embedded IPv4 tail (::1.2.3.4 forms) counts as two groups; only the first four matter here.
  const missing = 8 - left.length - right.length - (right.some((g) => g.includes('.')) || left.some((g) => g.includes('.')) ? 1 : 0);
  const full = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, missing)).fill('0'), ...right];
  return `${full
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/**
 * The addresses whose connections are a trusted proxy's (Fastify's `trustProxy`, TRUST_PROXY), as
 * a test for `ConnectionCaps.exempt`: every address for `true` or a number of hops (every peer may
 * be the proxy: name the proxies to keep the cap for direct clients), the listed addresses and
 * CIDRs for a list (an IPv4 entry also matches its IPv4-mapped IPv6 form), none for false.
 */
export function trustedProxies(trustProxy: boolean | number | string | string[] | undefined): ((address: string) => boolean) | undefined {
  if (trustProxy === true || (typeof trustProxy === 'number' && trustProxy > 0)) return () => true;
  const items = typeof trustProxy === 'string' ? trustProxy.split(',') : Array.isArray(trustProxy) ? trustProxy : [];
  const list = new net.BlockList();
  let entries = 0;
  for (const item of items.map((x) => x.trim())) {
    const [address, prefix] = item.split('/');
    const type = net.isIPv6(address) ? 'ipv6' : net.isIPv4(address) ? 'ipv4' : undefined;
    if (!type) continue; // not an address: Fastify refuses it at start
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
    entries++;
  }
  if (entries === 0) return undefined;
  return (address) => {
    const bare = address.split('%')[0];
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
    if (mapped) return list.check(mapped[1], 'ipv4');
    return net.isIPv6(bare) ? list.check(bare, 'ipv6') : net.isIPv4(bare) && list.check(bare, 'ipv4');
  };
}

/**
 * How often Node looks for connections past their headers (or request) timeout: by default every
 * 30 s, so a 10 s limit held a silent connection up to 40 s. A quarter of the shortest limit keeps
 * it within a quarter of its value (between 250 ms and 5 s).
 */
export function checkingIntervalMs(headersTimeoutMs: number, requestTimeoutMs = 0): number {
  const shortest = Math.min(headersTimeoutMs, requestTimeoutMs || headersTimeoutMs);
  return Math.max(250, Math.min(5_000, Math.floor(shortest / 4)));
}

/** The S3 endpoint's caps: the configured ones (STORAGE_MAX_CONNECTIONS[_PER_ADDRESS]), else the defaults. */
export function storageConnectionCaps(
  configured: { storageMaxConnections: number | undefined; storageMaxConnectionsPerAddress: number | undefined },
  defaults: DefaultConnectionCaps = defaultConnectionCaps(),
): Required<Pick<ConnectionCaps, 'max' | 'perAddress'>> {
  return { max: configured.storageMaxConnections ?? defaults.storage.max, perAddress: configured.storageMaxConnectionsPerAddress ?? defaults.storage.perAddress };
}
