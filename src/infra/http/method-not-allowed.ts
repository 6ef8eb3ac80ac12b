// CONTRACT §1: a path the service serves, called with a method it does not serve, is 405
// `method_not_allowed` with `Allow`, not 404. Every route is also added, as it is registered, to a
// second router of the kind Fastify uses (find-my-way, with the same path options), so that the
// not-found handler can ask which methods would have routed the path, matched exactly as Fastify
// matches it.
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';

export type AllowedMethods = (path: string) => string[];

export function trackRouteMethods(app: FastifyInstance): AllowedMethods {
  const router = FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true });
  const methods = new Set<HTTPMethod>();
  app.addHook('onRoute', (route) => {
    const routeMethods = [route.method].flat() as HTTPMethod[];
    for (const method of routeMethods) methods.add(method);
    router.on(routeMethods, route.url, () => undefined);
  });
  return (path) => {
    const allowed = new Set([...methods].filter((method) => router.find(method, path) !== null));
    // In the usual order; HEAD goes without saying where GET is (Fastify serves it for every GET).
    if (allowed.has('GET')) allowed.delete('HEAD');
    return [...allowed].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  };
}

const ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const rank = (method: string) => (ORDER.includes(method) ? ORDER.indexOf(method) : ORDER.length);
