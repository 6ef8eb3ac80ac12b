// Brute-force throttling of a service's token call (issue 10; CONTRACT §1: 429 `throttled` with
// Retry-After), on @fastify/rate-limit's counters. Each attempt comes from an *origin*: the client
// address (an IPv6 address counts by its /64, as the per-address limit does), split further, when
// the route says a credential besides the password ties the request to the account (`vouch`: the
// inspection service's API key of one of the user's organizations), by that credential.
// - per origin: every attempt that reaches the credential check counts (a generous limit: it also
//   bounds the password-hashing work one address can ask for); then 429;
// - per account (username, client_id) and origin: failed attempts only (401); then that account's
//   attempts from that origin are 429 until the window ends, right password or not. Guessing one
//   account's password from one address stops after a few tries;
// - per account from all origins: failed attempts only. Issue 27: this used to refuse too, so
//   anyone could lock a user out by failing from enough addresses (or from one, behind a proxy
//   without TRUST_PROXY). Now it only slows: once more attempts have failed than one origin may
//   make, an attempt waits before its password is checked, 100 ms doubling with each further
//   failure up to `slowdownMaxMs` (a timer: the event loop runs on), which bounds the rate of a
//   distributed guess without refusing anyone. An attempt from an address that logged in to this
//   account successfully in the last KNOWN_ADDRESS_DAYS does not wait.
// The rule: failures refuse only the origin they came from, so others' failures from other
// addresses never refuse the account's owner: from an address they logged in from before the
// right password works at once, from any other after the wait. Issue 40: a vouching credential
// used to be an origin of its own, whatever the address; but an organization's API key is held by
// every member and by whoever it leaked to, so an attacker's failures sent with it, from anywhere,
// refused the owner's attempts with it (and spared the attacker the wait). Now it only tells apart,
// at one address (a NAT, a proxy all clients share), the attempts that carry it from those that do
// not, and it is no reason not to wait.
// Attempts on one account from one origin are checked one after the other, so a burst of parallel
// guesses cannot all pass the check before the first failure is counted; attempts from different
// origins do not wait for each other. The counters and known addresses are in memory, per process.
import net from 'node:net';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { ApiError } from './errors.ts';

export interface LoginRateLimit {
  /** Attempts per client address per window (0: no limit). */
  perAddress: number;
  /** Failed attempts per account and origin per window (0: no limit, and no slowdown). */
  perAccount: number;
  windowSeconds: number;
  /** Longest wait before an attempt on an account failing from many origins, ms (0: no wait; default 3000). */
  slowdownMaxMs?: number;
}

export interface LoginRoute {
  /** The token route's URL as registered, e.g. /v1/auth/token/. */
  url: string;
  /** The account a request tries (from its parsed body or query), if it names one. */
  account(request: FastifyRequest): string | undefined;
  /**
   * A credential of the request, besides the password, that ties it to `account` (a key naming it,
   * e.g. `api-key:12`), or undefined. Such an attempt is counted under its address and that
   * credential together: apart from the address's other attempts, never merged with other
   * addresses' (others may hold the credential too).
   */
  vouch?(request: FastifyRequest, account: string): Promise<string | undefined>;
}

/** An address that logged in to an account is known to it this long after its last success. */
export const KNOWN_ADDRESS_DAYS = 30;
/** Known (account, address) pairs remembered per process; the oldest are forgotten first. */
const MAX_KNOWN_ADDRESSES = 100_000;
const FIRST_DELAY_MS = 100;
/** The all-origin counter only counts: it never refuses. */
const COUNT_ONLY = Number.MAX_SAFE_INTEGER;

interface Attempt {
  release(): void;
}

const kAttempt = Symbol('loginAttempt');
const kOrigin = Symbol('loginOrigin');
type WithAttempt = FastifyRequest & { [kAttempt]?: Attempt; [kOrigin]?: string };

const throttled = (seconds: number) =>
  new ApiError(429, 'throttled', `Too many login attempts; try again in ${seconds} seconds.`, { 'Retry-After': String(Math.max(1, seconds)) });

/** The wait before an attempt on an account that `failures` attempts from all origins failed this window, ms. */
export function slowdownMs(failures: number, perAccount: number, maxMs: number): number {
  const beyond = failures - perAccount;
  if (beyond <= 0 || maxMs <= 0) return 0;
  return Math.min(maxMs, FIRST_DELAY_MS * 2 ** Math.min(beyond - 1, 30));
}

/** The address as the counters see it: IPv4 as is, IPv6 by its /64 (one host's privacy addresses, one attacker's subnet). */
export function addressKey(ip: string): string {
  const address = ip.replace(/%.*$/, '');
  if (!net.isIPv6(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const [head, tail] = address.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const full = tail === undefined ? groups(head) : [...groups(head), ...Array<string>(Math.max(0, missing)).fill('0'), ...groups(tail)];
  return `${full
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** (account, address) pairs that logged in successfully, with the time of the last success. */
class KnownAddresses {
  private readonly lastSuccess = new Map<string, number>();

  remember(key: string): void {
    this.lastSuccess.delete(key); // re-inserted last: the map iterates oldest first
    this.lastSuccess.set(key, Date.now());
    if (this.lastSuccess.size > MAX_KNOWN_ADDRESSES) this.lastSuccess.delete(this.lastSuccess.keys().next().value!);
  }

  has(key: string): boolean {
    const at = this.lastSuccess.get(key);
    if (at === undefined) return false;
    if (Date.now() - at <= KNOWN_ADDRESS_DAYS * 24 * 3600 * 1000) return true;
    this.lastSuccess.delete(key);
    return false;
  }
}

export async function throttleLogins(app: FastifyInstance, route: LoginRoute, limits: LoginRateLimit): Promise<void> {
  if (!limits.perAddress && !limits.perAccount) return;
  // Room for many counters: a full cache forgets the oldest, which would let an attacker who fills
  // it with other keys start their own count again.
  await app.register(rateLimit, { global: false, cache: 100_000 });
  const timeWindow = limits.windowSeconds * 1000;
  const slowdownMax = limits.slowdownMaxMs ?? 3000;
  const originOf = (request: WithAttempt) => request[kOrigin] ?? `address:${addressKey(request.ip)}`;
  const perOrigin = limits.perAddress ? app.createRateLimit({ max: limits.perAddress, timeWindow, keyGenerator: (request) => originOf(request) }) : undefined;
  const counter = (max: number, key: (request: FastifyRequest) => string) => app.createRateLimit({ max, timeWindow, keyGenerator: key });
  const perAccountAndOrigin = limits.perAccount ? counter(limits.perAccount, (request) => `account:${route.account(request)}\u0000${originOf(request)}`) : undefined;
  const perAccountEverywhere = limits.perAccount ? counter(COUNT_ONLY, (request) => `account:${route.account(request)}`) : undefined;
  const known = new KnownAddresses();
  const knownKey = (account: string, request: FastifyRequest) => `${account}\u0000${addressKey(request.ip)}`;
  const queues = new Map<string, Promise<void>>();

  // Both hooks are the token route's own (added to it when it is registered, below): no other
  // request runs them (bench/README.md, "API").
  // preHandler: after the body is parsed and validated, so the account is known and malformed
  // requests (400, no password check) do not count.
  const preHandler = (request: WithAttempt, reply: FastifyReply, done: (err?: Error) => void) => {
    checkAttempt(request, reply).then(() => done(), done);
  };
  const checkAttempt = async (request: WithAttempt, reply: FastifyReply): Promise<void> => {
    const account = route.account(request);
    const voucher = account && route.vouch ? await route.vouch(request, account) : undefined;
    if (voucher) request[kOrigin] = `address:${addressKey(request.ip)}\u0000vouched:${voucher}`;
    if (perOrigin) {
      const state = await perOrigin(request);
      if (!state.isAllowed && state.isExceeded) throw throttled(state.ttlInSeconds);
    }
    if (!perAccountAndOrigin || !perAccountEverywhere || !account) return;
    const queueKey = `${account}\u0000${originOf(request)}`;
    const previous = queues.get(queueKey) ?? Promise.resolve();
    let done!: () => void;
    const gate = new Promise<void>((resolve) => (done = resolve));
    const mine = previous.then(() => gate);
    queues.set(queueKey, mine);
    await previous;
    let released = false;
    const attempt: Attempt = {
      release() {
        if (released) return;
        released = true;
        done();
        if (queues.get(queueKey) === mine) queues.delete(queueKey);
      },
    };
    request[kAttempt] = attempt;
    reply.raw.once('close', attempt.release); // an exchange cut short still lets the next one in
    const state = await perAccountAndOrigin(request, { increment: false });
    if (!state.isAllowed && state.remaining === 0) {
      attempt.release();
      request[kAttempt] = undefined;
      throw throttled(state.ttlInSeconds);
    }
    if (known.has(knownKey(account, request))) return;
    const everywhere = await perAccountEverywhere(request, { increment: false });
    const failures = everywhere.isAllowed ? 0 : COUNT_ONLY - everywhere.remaining;
    const wait = slowdownMs(failures, limits.perAccount, slowdownMax);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
  // onSend runs for answers and errors alike: the outcome is known; count a failure or remember a
  // success's address, and let the next attempt in.
  const onSend = (request: WithAttempt, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => {
    const attempt = request[kAttempt];
    if (!attempt) return done(null, payload);
    request[kAttempt] = undefined;
    const count = async () => {
      try {
        if (reply.statusCode === 401) {
          await perAccountAndOrigin!(request);
          await perAccountEverywhere!(request);
        } else if (reply.statusCode === 200) {
          known.remember(knownKey(route.account(request)!, request));
        }
      } finally {
        attempt.release();
      }
    };
    count().then(() => done(null, payload), (err: Error) => done(err));
  };
  let attached = false;
  app.addHook('onRoute', (options) => {
    if (options.url !== route.url || ![options.method].flat().includes('POST')) return;
    options.preHandler = [...[options.preHandler ?? []].flat(), preHandler as preHandlerHookHandler];
    options.onSend = [...[options.onSend ?? []].flat(), onSend as onSendHookHandler];
    attached = true;
  });
  // A token route registered under another URL would go unthrottled: refuse to start instead.
  app.addHook('onReady', (done) => done(attached ? undefined : new Error(`login throttling: no POST route ${route.url} was registered`)));
}
