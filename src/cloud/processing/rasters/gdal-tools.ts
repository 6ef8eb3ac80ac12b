// Runs one GDAL command-line tool (gdal_translate, gdalinfo, gdaldem) as a child process, so that
// a raster's encoding (deflate, overviews) runs beside the event loop rather than on it, and an
// abort signal (a cancel, the engine's time limit) stops it: Node's execFile kills the child with
// SIGTERM when the signal fires and the promise rejects with the signal's reason.
import { execFile } from 'node:child_process';

/** Where the Debian package gdal-bin puts its tools. */
export const GDAL_BIN_DIR = '/usr/bin';

export class GdalError extends Error {
  constructor(
    message: string,
    readonly tool: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'GdalError';
  }
}

export interface GdalRun {
  signal?: AbortSignal;
  /** Folder of the tools (default /usr/bin). */
  binDir?: string;
}

/** Runs `tool args...`; resolves with its standard output, rejects with a GdalError (or the abort reason). */
export function runGdal(tool: string, args: string[], run: GdalRun = {}): Promise<string> {
  const binary = `${run.binDir ?? GDAL_BIN_DIR}/${tool}`;
  return new Promise((resolve, reject) => {
    if (run.signal?.aborted) return reject(run.signal.reason);
    execFile(binary, args, { signal: run.signal, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GDAL_PAM_ENABLED: 'NO' } }, (err, stdout, stderr) => {
      if (run.signal?.aborted) return reject(run.signal.reason);
      if (!err) return resolve(String(stdout));
      const text = String(stderr ?? '').trim();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new GdalError(`${binary} is not installed (Debian package gdal-bin)`, tool, text));
      const lastLine = text.split('\n').filter(Boolean).at(-1) ?? err.message;
      reject(new GdalError(`${tool} failed: ${lastLine.slice(0, 300)}`, tool, text));
    });
  });
}
