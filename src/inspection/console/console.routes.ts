// The web console (web/, built by Vite into web/dist) served by the inspection service at `/`.
// The console uses the public API like any client; the one route added for it is
// GET /v1/console/settings/, which hands the page what it cannot know from its static files: the
// console's API key (which names the application, it authenticates nobody: docs/web-console.md),
// the storage endpoint it uploads to, the optional basemap, and the processing options it
// disables (this installation cannot act on them). The same page is served at `/share/<token>`,
// a share link: the console opens there as a read-only viewer, without sign-in.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { HttpServer } from '../../infra/http/http-server.ts';
import { SHARE_VIEWER_PATH } from '../auth/share-tokens.ts';
import { UNAVAILABLE_PROCESSING_OPTIONS } from '../pipeline/unavailable-options.ts';

export interface ConsoleOptions {
  apiKey: string;
  /** Base URL of the S3 endpoint the console uploads to (the storage credentials' endpoint_override). */
  storageUrl: string;
  basemapUrl: string | undefined;
  /** The built console; absent folder: the settings route still answers, `/` says how to build. */
  distDir?: string;
  /** The outputs the cloud's engine cannot make, with why (pipeline/output-availability.ts); never fails. */
  unavailableOutputs?: () => Promise<Record<string, string>>;
}

export const CONSOLE_DIST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../web/dist');

const ConsoleSettings = Type.Object(
  {
    api_key: Type.String({ description: 'API key of the web console application (names the application; not a secret)' }),
    storage_url: Type.String({ description: 'S3 endpoint the console uploads to' }),
    basemap_url: Type.Union([Type.String(), Type.Null()], { description: 'Tile URL template of the map background; null: plain background' }),
    unavailable_options: Type.Record(Type.String(), Type.String(), {
      description: 'Processing parameters this installation cannot act on, each with the reason (roof_segmentation; generate_* and clip_point_cloud when the cloud\'s engine cannot make the output); the console disables them',
    }),
  },
  { description: 'Settings of the web console. Not in the spec: the sign-in page needs an API key before any other call.' },
);

export async function registerConsole(app: HttpServer, options: ConsoleOptions): Promise<void> {
  app.get(
    '/v1/console/settings/',
    { schema: { tags: ['console'], summary: 'Settings of the web console (open, no authentication)', response: { 200: ConsoleSettings } } },
    async (_request, reply) => {
      reply.header('Cache-Control', 'no-store');
      const unavailable = { ...UNAVAILABLE_PROCESSING_OPTIONS, ...(await options.unavailableOutputs?.()) };
      return { api_key: options.apiKey, storage_url: options.storageUrl, basemap_url: options.basemapUrl ?? null, unavailable_options: unavailable };
    },
  );

  const distDir = options.distDir ?? CONSOLE_DIST_DIR;
  if (!fs.existsSync(path.join(distDir, 'index.html'))) {
    const notBuilt = async (_request: FastifyRequest, reply: FastifyReply) => {
      reply.status(503).type('text/plain; charset=utf-8');
      return 'The web console is not built. Run `npm start` (it builds web/ first) or `npm run build:web`.\nThe API is at /v1 and its documentation at /docs.\n';
    };
    app.get('/', { schema: { hide: true } }, notBuilt);
    app.get(`${SHARE_VIEWER_PATH}/:token`, { schema: { hide: true } }, notBuilt);
    return;
  }
  // One route per built file (wildcard: false): no catch-all GET that would hide the API's 404 and
  // 405 answers. Hashed bundles are immutable; index.html is revalidated so a new build shows at once.
  await app.register(fastifyStatic, {
    root: distDir,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    cacheControl: false,
    setHeaders(reply, filePath) {
      const immutable = filePath.includes(`${path.sep}static${path.sep}`);
      reply.header('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  // A share link (share-tokens.ts linkFor): the console's page, which reads the token from its
  // path. The token is a secret in the address: no Referer carries it to the storage endpoint or a
  // basemap's tiles, and the request log blanks it out (system.ts createLogger). Any token-shaped
  // or not, the page answers: it says itself when a link is malformed, expired or revoked.
  app.get(`${SHARE_VIEWER_PATH}/:token`, { schema: { hide: true } }, (_request, reply) => {
    reply.header('Referrer-Policy', 'no-referrer');
    return reply.sendFile('index.html');
  });
}

/**
 * CSP directives of the console's page in place of helmet's defaults: uploads and point clouds go
 * to the S3 endpoint (connect-src), thumbnails and photos come from it as presigned URLs (img-src),
 * and a basemap's tiles from its own origin. Styles and fonts only from the service's own files
 * (helmet's defaults allow inline styles and any https: origin): markup slipped into a name could
 * otherwise restyle the page or fetch a font from elsewhere, i.e. call home. The console's styles
 * are its stylesheets plus the `style` properties React, Leaflet and three.js set through the DOM,
 * which style-src does not govern; the same server's API docs (/docs) need nothing more either.
 */
export function consoleCspDirectives(options: Pick<ConsoleOptions, 'storageUrl' | 'basemapUrl'>): Record<string, string[]> {
  const storage = new URL(options.storageUrl).origin;
  const images = ["'self'", 'data:', 'blob:', storage];
  if (options.basemapUrl) {
    try {
      images.push(new URL(options.basemapUrl.replace(/\{[a-z]\}/g, 'a')).origin);
    } catch {
      // an unparseable template shows no tiles; the console still works on a plain background
    }
  }
  return {
    'connect-src': ["'self'", storage],
    'img-src': images,
    'worker-src': ["'self'", 'blob:'],
    'style-src': ["'self'"],
    'font-src': ["'self'", 'data:'],
  };
}
