// Brute-force throttling of a service's token call (issue 10; CONTRACT §1: 429 `throttled` with
// Retry-After), on @fastify/rate-limit's counters:
// - per client address: every attempt that reaches the credential check counts (a generous
//   limit: it also bounds the password-hashing work one address can ask for);
// - per account (username, client_id) and address: failed attempts only (401), so that a user who
//   logs in often is never locked out, while guessing one account's password from one address
//   stops after a few tries;
// - per account from all addresses: failed attempts only, ten times the per-account limit, which
//   bounds guesses spread over many addresses.
// Attempts on one account are checked one after the other, so a burst of parallel guesses cannot
// all pass the check before the first failure is counted. Hammering an account from one address
// therefore does not lock its owner out: the right password from another address still works
// (until a distributed attack passes the all-address limit), and another user is never affected.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { ApiError } from './errors.ts';

export interface LoginRateLimit {
  /** Attempts per client address per window (0: no limit). */
  perAddress: number;
  /** Failed attempts per account and address per window (0: no limit); ten times this from all addresses. */
  perAccount: number;
  windowSeconds: number;
}

export interface LoginRoute {
  /** The token route's URL as registered, e.g. /v1/auth/token/. */
  url: string;
  /** The account a request tries (from its parsed body or query), if it names one. */
  account(request: FastifyRequest): string | undefined;
}

interface Attempt {
  release(): void;
}

const kAttempt = Symbol('loginAttempt');
type WithAttempt = FastifyRequest & { [kAttempt]?: Attempt };

const throttled = (seconds: number) =>
  new ApiError(429, 'throttled', `Too many login attempts; try again in ${seconds} seconds.`, { 'Retry-After': String(Math.max(1, seconds)) });

export async function throttleLogins(app: FastifyInstance, route: LoginRoute, limits: LoginRateLimit): Promise<void> {
  if (!limits.perAddress && !limits.perAccount) return;
  await app.register(rateLimit, { global: false });
  const timeWindow = limits.windowSeconds * 1000;
  const perAddress = limits.perAddress ? app.createRateLimit({ max: limits.perAddress, timeWindow }) : undefined;
  const accountLimit = (max: number, key: (request: FastifyRequest) => string) => app.createRateLimit({ max, timeWindow, keyGenerator: key });
  const perAccountLimiters = limits.perAccount
    ? [
        accountLimit(limits.perAccount, (request) => `account:${route.account(request)}\u0000${request.ip}`),
        accountLimit(limits.perAccount * 10, (request) => `account:${route.account(request)}`),
      ]
    : [];
  const perAccount = perAccountLimiters.length > 0;
  const queues = new Map<string, Promise<void>>();

  // Both hooks are the token route's own (added to it when it is registered, below): no other
  // request runs them (bench/README.md, "API").
  // preHandler: after the body is parsed and validated, so the account is known and malformed
  // requests (400, no password check) do not count.
  const preHandler = (request: WithAttempt, reply: FastifyReply, done: (err?: Error) => void) => {
    checkAttempt(request, reply).then(() => done(), done);
  };
  const checkAttempt = async (request: WithAttempt, reply: FastifyReply): Promise<void> => {
    if (perAddress) {
      const state = await perAddress(request);
      if (!state.isAllowed && state.isExceeded) throw throttled(state.ttlInSeconds);
    }
    const account = perAccount && route.account(request);
    if (!perAccount || !account) return;
    const previous = queues.get(account) ?? Promise.resolve();
    let done!: () => void;
    const gate = new Promise<void>((resolve) => (done = resolve));
    const mine = previous.then(() => gate);
    queues.set(account, mine);
    await previous;
    let released = false;
    const attempt: Attempt = {
      release() {
        if (released) return;
        released = true;
        done();
        if (queues.get(account) === mine) queues.delete(account);
      },
    };
    request[kAttempt] = attempt;
    reply.raw.once('close', attempt.release); // an exchange cut short still lets the next one in
    for (const limiter of perAccountLimiters) {
      const state = await limiter(request, { increment: false });
      if (!state.isAllowed && state.remaining === 0) {
        attempt.release();
        request[kAttempt] = undefined;
        throw throttled(state.ttlInSeconds);
      }
    }
  };
  // onSend runs for answers and errors alike: the outcome is known, count a failure, let the next attempt in.
  const onSend = (request: WithAttempt, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => {
    const attempt = request[kAttempt];
    if (!attempt) return done(null, payload);
    request[kAttempt] = undefined;
    const count = async () => {
      try {
        if (reply.statusCode === 401) for (const limiter of perAccountLimiters) await limiter(request);
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
