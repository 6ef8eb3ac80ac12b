// A fake NodeODM node for tests, following NodeODM's documented API (shared/reference/nodeodm-api.md):
// GET /info and /options; POST /task/new/init (multipart, `set-uuid` header), /task/new/upload/{uuid}
// (multipart `images`), /task/new/commit/{uuid}; GET /task/{uuid}/info (status codes 10/20/30/40/50,
// progress), /task/{uuid}/output?line=N, /task/{uuid}/download/all.zip ({"error": "Asset not
// ready"} before completion); POST /task/cancel and /task/remove ({uuid}, urlencoded or JSON).
// Errors are HTTP 200 with {"error": ...}, as NodeODM answers. It never runs ODM: progress rises
// on each poll, then the task COMPLETES (serving an all.zip with the documented layout, shots
// generated for the uploaded images, orthophoto and DSM real GeoTIFFs: fake-geotiff.ts), FAILS
// with a message, or keeps RUNNING until canceled.
// Knobs: `dropUploads` (that many upload requests are cut halfway: the connection is destroyed
// after part of the body, like NodeODM's --test_drop_uploads), `token`, and `results` (a task's
// point cloud, shots and cameras instead of the generated ones: e.g. a scene's cloud and the
// true camera poses of its flight, test/helpers/tower-scene.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import proj4 from 'proj4';
import yazl from 'yazl';
import { fakeGeoTiff } from './fake-geotiff.ts';

export type FakeOutcome = { kind: 'complete' } | { kind: 'fail'; errorMessage: string; log?: string[] } | { kind: 'hang' };

export interface FakeTask {
  uuid: string;
  name: string;
  options: { name: string; value: unknown }[];
  images: string[];
  committed: boolean;
  status: number;
  progress: number;
  polls: number;
  errorMessage?: string;
  removed: boolean;
  outcome: FakeOutcome;
}

export interface FakeNodeOdm {
  url: string;
  tasks: Map<string, FakeTask>;
  /** Every request: method, path (without query), query, headers. */
  requests: { method: string; path: string; query: URLSearchParams; headers: http.IncomingHttpHeaders }[];
  /** Upload requests that were cut halfway. */
  droppedUploads: number;
  /** The outcome of the next committed task. */
  nextOutcome: FakeOutcome;
  /** Upload requests to cut halfway from now on. */
  dropUploads: number;
  close(): Promise<void>;
}

/** What a completed task's all.zip carries instead of the generated files (startFakeNodeOdm's `results`). */
export interface FakeNodeResults {
  /** odm_georeferencing/odm_georeferenced_model.laz (LAS or LAZ bytes); null: all.zip has no point cloud. */
  pointCloud?: Buffer | null;
  /** The features of odm_report/shots.geojson (one per calibrated image, `properties.filename` the uploaded name). */
  shots?: unknown[];
  /** cameras.json. */
  cameras?: Record<string, unknown>;
}

export const FAKE_ORIGIN = { latitude: 46.8426, longitude: -91.994, altitude: 198.5 };
const UTM15N = '+proj=utm +zone=15 +datum=WGS84 +units=m +no_defs';
/**
 * The extent of the fake orthophoto and DSM (EPSG:32615, metres): from 20 m west and 20 m south of
 * FAKE_ORIGIN, 160 m east and 200 m north; the orthophoto in 0.25 m pixels, the DSM (and DTM) in 2 m.
 */
export const FAKE_RASTER_EXTENT = (() => {
  const [e, n] = proj4('EPSG:4326', UTM15N).forward([FAKE_ORIGIN.longitude, FAKE_ORIGIN.latitude]);
  const west = Math.round(e) - 20;
  const south = Math.round(n) - 20;
  return { west, south, north: south + 200, east: west + 160, width: 160, height: 200, orthoPixel: 0.25, demPixel: 2, epsg: 32615, proj4: UTM15N };
})();

/**
 * `orthophoto`: the file all.zip carries as odm_orthophoto.tif instead of the generated one (e.g. a
 * COG of known colours over FAKE_RASTER_EXTENT); `results`: a task's files instead of the
 * generated ones, read when its all.zip is built (undefined, or a field left out: generated).
 */
export async function startFakeNodeOdm(options: { token?: string; pollsToFinish?: number; orthophoto?: Buffer; results?: (task: FakeTask) => FakeNodeResults | undefined } = {}): Promise<FakeNodeOdm> {
  const tasks = new Map<string, FakeTask>();
  const requests: FakeNodeOdm['requests'] = [];
  const pollsToFinish = options.pollsToFinish ?? 3;
  const state = { droppedUploads: 0, dropUploads: 0, nextOutcome: { kind: 'complete' } as FakeOutcome };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers });
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (options.token && url.searchParams.get('token') !== options.token) return json(200, { error: 'Invalid authentication token' });
    const parts = url.pathname.split('/').filter(Boolean);

    // Cut an upload halfway: read some of the body, then drop the connection.
    if (req.method === 'POST' && parts[0] === 'task' && parts[1] === 'new' && parts[2] === 'upload' && state.dropUploads > 0) {
      state.dropUploads--;
      state.droppedUploads++;
      let seen = 0;
      req.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > 1000) req.socket.destroy();
      });
      req.on('end', () => req.socket.destroy());
      return;
    }

    const body = await readBody(req);
    const text = body.toString('latin1');
    try {
      if (req.method === 'GET' && url.pathname === '/info') {
        return json(200, { version: '2.2.4', taskQueueCount: tasks.size, maxImages: null, maxParallelTasks: 1, cpuCores: 2, totalMemory: 8e9, availableMemory: 4e9, engine: 'odm', engineVersion: '3.5.0' });
      }
      if (req.method === 'GET' && url.pathname === '/options') {
        return json(200, ['dsm', 'dtm', 'auto-boundary', 'fast-orthophoto', 'pc-quality', 'mesh-size', 'use-3dmesh', 'feature-quality', 'skip-orthophoto', 'skip-3dmodel'].map((name) => ({ name, type: 'string', value: '', domain: '', help: '' })));
      }
      if (req.method === 'POST' && url.pathname === '/task/new/init') {
        const fields = formFields(text);
        const uuid = String(req.headers['set-uuid'] ?? crypto.randomUUID());
        if (tasks.has(uuid)) return json(200, { error: `Invalid set-uuid header: ${uuid} is in use` });
        tasks.set(uuid, { uuid, name: fields.name ?? '', options: JSON.parse(fields.options ?? '[]'), images: [], committed: false, status: 10, progress: 0, polls: 0, removed: false, outcome: state.nextOutcome });
        return json(200, { uuid });
      }
      if (req.method === 'POST' && parts[0] === 'task' && parts[1] === 'new' && (parts[2] === 'upload' || parts[2] === 'commit')) {
        const task = tasks.get(parts[3]);
        if (!task) return json(200, { error: `Invalid uuid (not found)` });
        if (parts[2] === 'upload') {
          const names = [...text.matchAll(/name="images"; filename="([^"]+)"/g)].map((m) => m[1]);
          if (names.length === 0) return json(200, { error: 'No files uploaded' });
          for (const name of names) if (!task.images.includes(name)) task.images.push(name);
          return json(200, { success: true });
        }
        task.committed = true;
        task.status = 20;
        return json(200, { uuid: task.uuid });
      }
      if (req.method === 'GET' && parts[0] === 'task' && parts[2] === 'info') {
        const task = tasks.get(parts[1]);
        if (!task || task.removed) return json(200, { error: `${parts[1]} not found` });
        if (task.committed && task.status === 20) {
          task.polls++;
          task.progress = Math.min(100, Math.round((100 * task.polls) / (pollsToFinish + 1)));
          if (task.polls >= pollsToFinish && task.outcome.kind !== 'hang') {
            if (task.outcome.kind === 'complete') {
              task.status = 40;
              task.progress = 100;
            } else {
              task.status = 30;
              task.errorMessage = task.outcome.errorMessage;
            }
          }
        }
        return json(200, {
          uuid: task.uuid,
          name: task.name,
          dateCreated: Date.now(),
          processingTime: task.polls * 1000,
          status: { code: task.status, ...(task.errorMessage ? { errorMessage: task.errorMessage } : {}) },
          options: task.options,
          imagesCount: task.images.length,
          progress: task.progress,
        });
      }
      if (req.method === 'GET' && parts[0] === 'task' && parts[2] === 'output') {
        const task = tasks.get(parts[1]);
        if (!task) return json(200, { error: 'not found' });
        const lines = ['[INFO] Initializing ODM', `[INFO] ${task.images.length} images`, ...(task.outcome.kind === 'fail' ? (task.outcome.log ?? []) : ['[INFO] ODM app finished'])];
        const line = Number(url.searchParams.get('line') ?? 0);
        return json(200, line < 0 ? lines.slice(line) : lines.slice(line));
      }
      if (req.method === 'GET' && parts[0] === 'task' && parts[2] === 'download' && parts[3] === 'all.zip') {
        const task = tasks.get(parts[1]);
        if (!task || task.status !== 40) return json(200, { error: 'Asset not ready' });
        const zip = await allZip(task, options.orthophoto, options.results?.(task));
        res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length });
        return res.end(zip);
      }
      if (req.method === 'POST' && (url.pathname === '/task/cancel' || url.pathname === '/task/remove')) {
        const uuid = (req.headers['content-type'] ?? '').includes('json') ? JSON.parse(text).uuid : new URLSearchParams(text).get('uuid');
        const task = tasks.get(uuid ?? '');
        if (!task) return json(200, { success: false, error: 'Invalid uuid' });
        if (url.pathname === '/task/cancel') {
          if (task.status === 10 || task.status === 20) task.status = 50;
        } else task.removed = true;
        return json(200, { success: true });
      }
      json(404, { error: `Not found: ${req.method} ${url.pathname}` });
    } catch (err) {
      json(500, { error: String(err) });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tasks,
    requests,
    get droppedUploads() {
      return state.droppedUploads;
    },
    get nextOutcome() {
      return state.nextOutcome;
    },
    set nextOutcome(outcome: FakeOutcome) {
      state.nextOutcome = outcome;
    },
    get dropUploads() {
      return state.dropUploads;
    },
    set dropUploads(n: number) {
      state.dropUploads = n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Text fields of a multipart body (enough for init's `name` and `options`). */
function formFields(body: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of body.matchAll(/Content-Disposition: form-data; name="([^"]+)"\r\n\r\n([\s\S]*?)\r\n--/gi)) fields[m[1]] = m[2];
  return fields;
}

/** all.zip with the documented layout; one shot per uploaded image, along a line to the north-east. */
async function allZip(task: FakeTask, orthophoto?: Buffer, results: FakeNodeResults = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const project = proj4('EPSG:4326', UTM15N);
  const features = task.images.map((filename, i) => {
    const lat = FAKE_ORIGIN.latitude + i * 0.0001;
    const lon = FAKE_ORIGIN.longitude + i * 0.0001;
    const [e, n] = project.forward([lon, lat]);
    return {
      type: 'Feature',
      properties: { filename, focal: 0.85, width: 160, height: 120, translation: [e, n, FAKE_ORIGIN.altitude], rotation: [Math.PI, 0, 0] }, // looking straight down
      geometry: { type: 'Point', coordinates: [lon, lat, FAKE_ORIGIN.altitude] },
    };
  });
  // As ODM: no orthophoto with skip-orthophoto, no DSM without dsm, no full 3D model with skip-3dmodel.
  const option = (name: string) => task.options.find((o) => o.name === name)?.value;
  // Rasters: real GeoTIFFs in UTM 15N over FAKE_RASTER_EXTENT, as ODM's (map layers are read from them).
  const raster = FAKE_RASTER_EXTENT;
  if (option('skip-orthophoto') !== true) {
    zip.addBuffer(orthophoto ?? fakeGeoTiff({ kind: 'rgb', width: raster.width / raster.orthoPixel, height: raster.height / raster.orthoPixel, pixel: raster.orthoPixel, originX: raster.west, originY: raster.north, epsg: 32615 }), 'odm_orthophoto/odm_orthophoto.tif');
  }
  const dem = () => fakeGeoTiff({ kind: 'elevation', width: raster.width / raster.demPixel, height: raster.height / raster.demPixel, pixel: raster.demPixel, originX: raster.west, originY: raster.north, epsg: 32615 });
  if (option('dsm') === true) zip.addBuffer(dem(), 'odm_dem/dsm.tif');
  if (option('dtm') === true) zip.addBuffer(dem(), 'odm_dem/dtm.tif');
  if (results.pointCloud !== null) zip.addBuffer(results.pointCloud ?? Buffer.from('LASF fake laz'), 'odm_georeferencing/odm_georeferenced_model.laz');
  if (option('skip-3dmodel') !== true) {
    zip.addBuffer(Buffer.from('mtllib odm_textured_model_geo.mtl\nv 0 0 0\n'), 'odm_texturing/odm_textured_model_geo.obj');
    zip.addBuffer(Buffer.from('newmtl material0\n'), 'odm_texturing/odm_textured_model_geo.mtl');
  }
  const cameras = results.cameras ?? { 'v2 fake 160 120 brown 0.85': { projection_type: 'brown', width: 160, height: 120, focal_x: 0.85, focal_y: 0.85, c_x: 0.01, c_y: -0.01, k1: -0.1, k2: 0.01, p1: 0, p2: 0, k3: 0 } };
  zip.addBuffer(Buffer.from(JSON.stringify(cameras)), 'cameras.json');
  zip.addBuffer(Buffer.from(JSON.stringify({ type: 'FeatureCollection', features: results.shots ?? features })), 'odm_report/shots.geojson');
  zip.addBuffer(Buffer.from(JSON.stringify({ reconstruction_statistics: { reconstructed_shots_count: features.length } })), 'odm_report/stats.json');
  zip.addBuffer(Buffer.from('%PDF-1.4 fake report'), 'odm_report/report.pdf');
  zip.addBuffer(Buffer.from('[INFO] fake ODM console output\n'), 'task_output.txt');
  zip.addBuffer(Buffer.from('{}'), 'entwine_pointcloud/ept.json');
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
