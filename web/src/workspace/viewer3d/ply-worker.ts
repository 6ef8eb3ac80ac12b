// The 3D tab's Web Worker: fetches a PLY output by its presigned URL and decodes it (lib/ply.ts)
// off the main thread, so that a dense cloud of a few million points (tens of MB) neither freezes
// the page while it downloads and parses nor keeps its file in the page's memory. The arrays come
// back transferred, not copied. Answers { ok: false, status, message } when the download or the
// file fails.
import { parsePly, parsePlyMesh, type PlyCloud, type PlyMesh } from '../../lib/ply';

export type PlyRequest = { url: string; kind: 'cloud'; maxPoints: number } | { url: string; kind: 'mesh' };
export type PlyAnswer = { ok: true; kind: 'cloud'; result: PlyCloud } | { ok: true; kind: 'mesh'; result: PlyMesh } | { ok: false; status: number; message: string };

self.onmessage = async (event: MessageEvent<PlyRequest>) => {
  const request = event.data;
  const post = (answer: PlyAnswer, transfer: Transferable[] = []) => (self as unknown as Worker).postMessage(answer, transfer);
  try {
    const response = await fetch(request.url);
    if (!response.ok) return post({ ok: false, status: response.status, message: await response.text() });
    const buffer = await response.arrayBuffer();
    if (request.kind === 'cloud') {
      const result = parsePly(buffer, request.maxPoints);
      post({ ok: true, kind: 'cloud', result }, [result.positions.buffer, ...(result.colors ? [result.colors.buffer] : [])]);
    } else {
      const result = parsePlyMesh(buffer);
      post({ ok: true, kind: 'mesh', result }, [result.positions.buffer, result.indices.buffer, ...(result.colors ? [result.colors.buffer] : [])]);
    }
  } catch (err) {
    post({ ok: false, status: 0, message: (err as Error).message });
  }
};
