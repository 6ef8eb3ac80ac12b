// Loads a PLY output in a Web Worker (ply-worker.ts), one worker per file so that the cloud and
// the mesh download and decode side by side; the worker ends with its answer.
import { ApiProblem, problemFrom } from '../../lib/api-problem';
import type { PlyCloud, PlyMesh } from '../../lib/ply';
import type { PlyAnswer, PlyRequest } from './ply-worker';

export function loadPlyCloud(url: string, maxPoints: number): Promise<PlyCloud> {
  return run({ url, kind: 'cloud', maxPoints }) as Promise<PlyCloud>;
}

export function loadPlyMesh(url: string): Promise<PlyMesh> {
  return run({ url, kind: 'mesh' }) as Promise<PlyMesh>;
}

function run(request: PlyRequest): Promise<PlyCloud | PlyMesh> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./ply-worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (event: MessageEvent<PlyAnswer>) => {
      worker.terminate();
      const answer = event.data;
      if (answer.ok) resolve(answer.result);
      else if (answer.status) reject(problemFrom(answer.status, answer.message));
      else reject(unreadable(request, answer.message));
    };
    worker.onerror = (event) => {
      worker.terminate();
      reject(unreadable(request, event.message || 'its reader did not start'));
    };
    worker.postMessage(request);
  });
}

/** Not problemFrom(0, …): that says the server cannot be reached, and this file was reached. */
function unreadable(request: PlyRequest, message: string): ApiProblem {
  return new ApiProblem(0, {}, 'unreadable', `The ${request.kind === 'mesh' ? 'mesh' : 'point cloud'} cannot be read: ${message}`);
}
