// Marks at the documented caps (issue 40 §5): 100,000 marks (10 photos x 10,000 GCPs) registered
// in ten calls of 10,000 (the most one call may carry), one after the other, and one GET of the mark list (~10 MB), each while another client sends cheap GETs
// (`GET /project/api/v3/projects/{id}/` of another project, one after the other). Everything runs
// in this one process, as `npm start` runs both services over the embedded database (PGlite runs
// inside the process: a long statement holds every request of both APIs). Prints, per phase, the
// cheap GETs' count, p50 and p99, the call's own time, and the event loop's longest stall
// (perf_hooks monitorEventLoopDelay, 10 ms resolution). The request body is serialised and the
// 10 MB answer parsed outside the measured windows, since this process is also the client.
//
//   node --no-wasm-code-gc --import tsx bench/marks.ts            (PGlite)
//   DATABASE_URL=postgres://… node --no-wasm-code-gc --import tsx bench/marks.ts
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startTestSystem } from '../test/helpers/test-system.ts';
import { CLOUD_UA, cloudClient } from '../test/helpers/cloud-api.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';

const P = '/project/api/v3/projects';
const POINTS = 10_000;
const PHOTOS = 10;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : NaN;
};

const system = await startTestSystem();
try {
  const api = await cloudClient(system);
  const project = await api.call('POST', `${P}/`, { name: 'Marks at the cap' }, { expect: 201 });
  const bystander = await api.call('POST', `${P}/`, { name: 'Bystander' }, { expect: 201 });
  const keys: string[] = [];
  for (let seed = 0; seed < PHOTOS; seed++) {
    keys.push(await api.put(project, `p${seed}.jpg`, await generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.5, altitude: 400, seed, width: 64, height: 48 })));
  }
  await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
  const names = Array.from({ length: POINTS }, (_, i) => `G${i}`);
  await api.call('POST', `${P}/${project.id}/gcp/register`, { gcps: names.map((name) => ({ name, x: 1, y: 2, z: 3 })) }, { expect: 201 });
  // One body per photo: its 10,000 marks, the photo named relative to the project's prefix (as the API allows).
  const bodies = keys.map((key) => JSON.stringify({ marks: names.map((gcp, i) => ({ gcp, photo: key.slice(key.lastIndexOf('/') + 1), x: i % 64, y: i % 48 })) }));
  const headers = { authorization: `Bearer ${api.token}`, 'user-agent': CLOUD_UA };

  /** Cheap GETs one after the other until `work` settles; the latencies, the loop's longest stall, the work's time. */
  async function phase<T>(name: string, work: () => Promise<T>): Promise<T> {
    const latencies: number[] = [];
    const loop = monitorEventLoopDelay({ resolution: 10 });
    let done = false;
    const started = performance.now();
    loop.enable();
    const cheap = (async () => {
      while (!done) {
        const t0 = performance.now();
        const res = await fetch(`${system.urls.cloud}${P}/${bystander.id}/`, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`cheap GET: ${res.status}`);
        latencies.push(performance.now() - t0);
      }
    })();
    let result: T;
    try {
      result = await work();
    } finally {
      done = true;
      await cheap;
      loop.disable();
    }
    const took = performance.now() - started;
    console.log(
      `${name.padEnd(34)} ${(took / 1000).toFixed(2).padStart(6)} s | cheap GETs ${String(latencies.length).padStart(5)}, p50 ${percentile(latencies, 0.5).toFixed(1).padStart(7)} ms, p99 ${percentile(latencies, 0.99).toFixed(1).padStart(7)} ms | longest event-loop stall ${(loop.max / 1e6).toFixed(0).padStart(5)} ms`,
    );
    return result;
  }

  console.log(`database: ${system.database.kind}; ${POINTS} GCPs x ${PHOTOS} photos = ${POINTS * PHOTOS} marks; ${bodies.length} calls of ${(bodies[0].length / 1e6).toFixed(2)} MB`);
  await phase('baseline (2 s)', () => new Promise((resolve) => setTimeout(resolve, 2000)));
  await phase('POST mark/register/ (10 x 10,000)', async () => {
    for (const body of bodies) {
      const res = await fetch(`${system.urls.cloud}${P}/${project.id}/mark/register/`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status !== 201) throw new Error(`registration: ${res.status} ${bytes.subarray(0, 300).toString()}`);
    }
  });
  const listed = await phase('GET mark/ (100,000)', async () => {
    const res = await fetch(`${system.urls.cloud}${P}/${project.id}/mark/`, { headers });
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  });
  const count = (JSON.parse(listed.bytes.toString()) as { marks: unknown[] }).marks.length;
  console.log(`listed ${count} marks, ${(listed.bytes.length / 1e6).toFixed(1)} MB`);
  if (count !== POINTS * PHOTOS) throw new Error(`listed ${count} marks`);
} finally {
  await system.stop();
}
