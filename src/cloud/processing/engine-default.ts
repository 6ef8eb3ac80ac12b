// Which engine a start without `ENGINE` uses, and what the start banner says of it. The issue this
// answers: `npm start` used to run the `exif` engine, which reconstructs nothing (no refined
// cameras, no point cloud, no coords_3d), even on machines where COLMAP was installed. Now the
// default is `colmap` wherever its executable resolves (COLMAP_BINARY, else `colmap` on the PATH),
// and `exif` elsewhere; tests build their configuration without a PATH and so stay on `exif`.
import fs from 'node:fs';
import path from 'node:path';

/** Whether `binary` (a name looked up on `pathVariable`, or a path) is an executable file. */
export type ExecutableProbe = (binary: string, pathVariable: string | undefined) => boolean;

export const findsExecutable: ExecutableProbe = (binary, pathVariable) => {
  const candidates = binary.includes('/') || binary.includes(path.sep) ? [binary] : (pathVariable ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, binary));
  return candidates.some((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  });
};

/** `colmap` when its executable resolves, else `exif`. */
export function defaultEngineName(colmapBinary: string, pathVariable: string | undefined, probe: ExecutableProbe = findsExecutable): 'colmap' | 'exif' {
  return probe(colmapBinary, pathVariable) ? 'colmap' : 'exif';
}

/** Engines that reconstruct (refined cameras, a point cloud); `exif` does not. */
const RECONSTRUCTING = new Set(['colmap', 'nodeodm']);

/** The start banner's line on engines, and a warning when none of them reconstructs. */
export function engineBanner(engine: string, engines: readonly string[]): { line: string; warning: string | undefined } {
  const others = engines.filter((e) => e !== engine);
  const line = `Photogrammetry:     ${engine} engine${others.length ? ` (also offered: ${others.join(', ')})` : ''}`;
  const warning = [engine, ...others].some((e) => RECONSTRUCTING.has(e))
    ? undefined
    : 'No reconstructing photogrammetry engine: the exif engine only records the cameras as the photos give them ' +
      '(no refined cameras, no point cloud, no coords_3d, no clipping). Install COLMAP (Debian/Ubuntu: `sudo apt-get install colmap`) ' +
      'and start again, or set NODEODM_URL and ENGINE=nodeodm.';
  return { line, warning };
}
