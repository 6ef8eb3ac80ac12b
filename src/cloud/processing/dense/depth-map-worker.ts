// The worker thread of computeDepthMaps (depth-maps.ts): one reference image at a time, through
// runPatchMatch; the results go back transferred, not copied. Its grey images and source depth
// maps arrive in SharedArrayBuffers, so no worker holds a copy of another's inputs.
import { parentPort } from 'node:worker_threads';
import { runPatchMatch, type PatchMatchInput } from './patch-match.ts';

parentPort?.on('message', (message: { id: number; input: PatchMatchInput }) => {
  try {
    const out = runPatchMatch(message.input);
    parentPort?.postMessage({ id: message.id, out }, [out.depth.buffer, out.normal.buffer, out.cost.buffer] as ArrayBuffer[]);
  } catch (err) {
    parentPort?.postMessage({ id: message.id, error: err instanceof Error ? err.stack ?? err.message : String(err) });
  }
});
