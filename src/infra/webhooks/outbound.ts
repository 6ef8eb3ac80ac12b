// Requests this platform sends to addresses its customers give (webhook receivers), made safe to
// send from inside a deployment's network: without `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_ADDRESSES)
// no request goes to a private, loopback, link-local, unique-local, shared (CGNAT), multicast,
// reserved or unspecified address, IPv4 or IPv6. An IPv6 address that carries an IPv4 address is
// judged by the IPv4 address inside (embeddedIpv4s: IPv4-mapped, -translated and -compatible, NAT64
// 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32); the local-use NAT64 prefix 64:ff9b:1::/48, whose
// operator chooses where the IPv4 address sits, is refused as a whole. The host name is resolved once and the connection pinned to the address that
// was checked (http.request's `lookup`), so a DNS answer that changes between the check and the
// connection (DNS rebinding) cannot lead it elsewhere. Redirects are not followed (a 3xx is an
// answer like any other), the whole exchange has a time limit, the request body is at most
// MAX_BODY_BYTES and at most MAX_RESPONSE_BYTES of the answer are read.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export const MAX_BODY_BYTES = 256 * 1024;
export const MAX_RESPONSE_BYTES = 256 * 1024;
export const MAX_URL_LENGTH = 2000;
export const DEFAULT_TIMEOUT_MS = 10_000;

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
  ['100::', 64], // discard
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): reaches IPv4 addresses, possibly private ones
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/**
 * The IPv4 addresses an IPv6 address carries, by the form's own rule (none for other addresses):
 * IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d and
 * NAT64 64:ff9b::a.b.c.d in the last 32 bits; 6to4 2002:AABB:CCDD::/48 in bits 16-47; Teredo
 * 2001:0:SSSS:SSSS:…:CCCC:CCCC the server's address in bits 32-63 and the client's in the last 32
 * bits, inverted (both are checked: either may be private).
 */
export function embeddedIpv4s(address: string): string[] {
  const g = expandIpv6(address);
  if (!g) return [];
  const v4 = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const mapped = zeros(0, 5) && g[5] === 0xffff;
  const translated = zeros(0, 4) && g[4] === 0xffff && g[5] === 0;
  const compatible = zeros(0, 6) && (g[6] !== 0 || g[7] > 1); // not :: or ::1
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6);
  if (mapped || translated || compatible || nat64) return [v4(g[6], g[7])];
  if (g[0] === 0x2002) return [v4(g[1], g[2])];
  if (g[0] === 0x2001 && g[1] === 0) return [v4(g[2], g[3]), v4(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  return [];
}

/** The eight 16-bit groups of an IPv6 address (dotted IPv4 tail and `::` expanded). */
function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const b = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  const groups = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** Whether a request may not go to this IP address (see the top of the file). */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all
  const inner = embeddedIpv4s(address);
  if (inner.length > 0) return inner.some((v4) => blocked.check(v4, 'ipv4'));
  return blocked.check(address, 'ipv6');
}

/** Why a receiver URL is refused when it is given (undefined: acceptable); the address rule applies at delivery too. */
export function urlProblem(value: string, allowPrivate: boolean): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `At most ${MAX_URL_LENGTH} characters.`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'Enter a valid URL.';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Only http and https URLs are accepted.';
  if (url.username || url.password) return 'A URL with credentials is not accepted; use the signature to authenticate deliveries.';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && net.isIP(host) && isForbiddenAddress(host)) return 'Private, loopback, link-local and unique-local addresses are not accepted.';
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) return 'Private, loopback, link-local and unique-local addresses are not accepted.';
  return undefined;
}

export interface OutboundOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  /** Resolver (tests replace it to play DNS rebinding); default dns.lookup. */
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
}

export interface OutboundResponse {
  status: number;
  /** At most MAX_RESPONSE_BYTES of the body, as text. */
  body: string;
}

/** A refusal or failure before an answer: the message is safe to show the subscription's owner. */
export class OutboundError extends Error {}

const defaultResolve = (host: string) => dns.promises.lookup(host, { all: true, verbatim: true });

/** POSTs `body` to `target` under the rules above; an answer of any status resolves, anything else throws OutboundError. */
export async function postSafely(target: string, body: string, headers: Record<string, string>, options: OutboundOptions): Promise<OutboundResponse> {
  const problem = urlProblem(target, options.allowPrivate);
  if (problem) throw new OutboundError(problem);
  const bytes = Buffer.from(body, 'utf8');
  if (bytes.length > MAX_BODY_BYTES) throw new OutboundError(`Request body over ${MAX_BODY_BYTES} bytes.`);
  const url = new URL(target);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);

  // Resolved once; the connection uses exactly this address.
  let pinned: { address: string; family: number };
  if (net.isIP(host)) {
    pinned = { address: host, family: net.isIP(host) };
  } else {
    let addresses: { address: string; family: number }[];
    try {
      // The lookup counts against the same time limit as the rest.
      addresses = await Promise.race([
        (options.resolve ?? defaultResolve)(host),
        new Promise<never>((_resolve, reject) => deadline.addEventListener('abort', () => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })), { once: true })),
      ]);
    } catch (err) {
      throw new OutboundError(`DNS lookup of ${host} failed (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
    if (addresses.length === 0) throw new OutboundError(`DNS lookup of ${host} found no address.`);
    // Every address must pass: a name that also points inside is refused as a whole.
    if (!options.allowPrivate && addresses.some((a) => isForbiddenAddress(a.address))) {
      throw new OutboundError(`${host} resolves to a private, loopback, link-local or unique-local address; refused.`);
    }
    pinned = addresses[0];
  }
  if (!options.allowPrivate && isForbiddenAddress(pinned.address)) throw new OutboundError('Private, loopback, link-local and unique-local addresses are refused.');

  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<OutboundResponse>((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(bytes.length) },
        signal: deadline,
        agent: false, // no pooled connection made for another address
        // The pinned address, whatever the name resolves to now (Node calls this with all: true or not).
        lookup: ((_hostname: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          if (opts?.all) callback(null, [pinned]);
          else callback(null, pinned.address, pinned.family);
        }) as unknown as net.LookupFunction,
        ...(url.protocol === 'https:' ? { servername: net.isIP(host) ? undefined : host } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let length = 0;
        response.on('data', (chunk: Buffer) => {
          if (length >= MAX_RESPONSE_BYTES) return;
          chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - length));
          length += chunk.length;
          if (length >= MAX_RESPONSE_BYTES) {
            // Enough read: the status is what counts; the rest is not waited for.
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
            response.destroy();
          }
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', (err) => reject(new OutboundError(describe(err, timeoutMs))));
        // Cut before its end (time limit, reset): no answer (a settled promise ignores this).
        response.on('close', () => reject(new OutboundError(deadline.aborted ? `No answer within ${timeoutMs / 1000} s.` : 'Connection closed before the answer ended.')));
      },
    );
    request.on('error', (err) => reject(new OutboundError(describe(err, timeoutMs))));
    request.end(bytes);
  });
}

function describe(err: Error, timeoutMs: number): string {
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return `No answer within ${timeoutMs / 1000} s.`;
  const code = (err as NodeJS.ErrnoException).code;
  return code ? `Connection failed (${code}).` : `Connection failed (${err.message}).`;
}
