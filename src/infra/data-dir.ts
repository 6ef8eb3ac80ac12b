// The data folder (DATA_DIR) holds the embedded database, the stored objects, keys and mail: it is
// private to the service's user. Three layers, because no single one covers everything:
//   1. main.ts sets umask 077, so whatever this process creates is private (folders 0700, files
//      0600). A library user of startSystem (the tests) keeps its own umask.
//   2. The data folder itself is created 0700 and set to 0700 at every start: nothing inside can
//      be reached by another user (except root), whatever the modes inside are.
//   3. The modes inside are fixed by a walk that removes group/other bits: of the whole folder once
//      (a folder written by an older version, marker file below), and of the embedded database's
//      folder at every start and stop. PGlite sets its files' modes itself, ignoring the umask:
//      0666 for the files of its template database, 0644 for those PostgreSQL creates later
//      (measured: 968 of 1,181 files were 0666).
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

/** Written once the whole data folder has been walked; delete it to walk again at the next start. */
const WALKED_MARKER = '.permissions-private';
/** The embedded database's folder, walked at every start and stop (see above). */
export const PGLITE_FOLDER = 'pglite';

/** Creates the data folder (0700) or makes an existing one 0700 (if this user owns it). */
export function prepareDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodIfOwned(dataDir, 0o700);
}

/** chmod, except that an entry of another user (EPERM) is left as it is: that must not stop a start. */
function chmodIfOwned(target: string, mode: number): 'changed' | 'not owned' | 'gone' {
  try {
    fs.chmodSync(target, mode);
    return 'changed';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPERM') return 'not owned';
    if (code === 'ENOENT') return 'gone';
    throw err;
  }
}

/**
 * Step 3 above, once the system has started (the database created and migrated; step 2,
 * prepareDataDir, ran first): returns how many entries had their mode changed.
 */
export function secureDataDir(dataDir: string, logger?: Logger): number {
  const marker = path.join(dataDir, WALKED_MARKER);
  let result: PrivateResult;
  if (!fs.existsSync(marker)) {
    result = makePrivate(dataDir);
    fs.writeFileSync(marker, 'The data folder was made private to its user (src/infra/data-dir.ts). Delete this file to check it again at the next start.\n', { mode: 0o600 });
  } else {
    const pglite = path.join(dataDir, PGLITE_FOLDER);
    result = fs.existsSync(pglite) ? makePrivate(pglite) : { changed: 0, notOwned: [] };
  }
  if (result.changed > 0) logger?.debug({ dataDir, changed: result.changed }, 'data folder: group/other permissions removed');
  if (result.notOwned.length > 0) logger?.warn({ dataDir, count: result.notOwned.length, examples: result.notOwned.slice(0, 5) }, 'data folder: entries of another user keep their group/other permissions');
  return result.changed;
}

export interface PrivateResult {
  /** Entries whose mode was changed. */
  changed: number;
  /** Entries with group/other bits that belong to another user (left as they are). */
  notOwned: string[];
}

/**
 * Removes the group and other permission bits of `root` and everything below it. Symbolic links
 * are neither followed nor changed; entries that vanish during the walk (a temporary file) are
 * skipped, and so are entries of another user (reported).
 */
export function makePrivate(root: string): PrivateResult {
  const result: PrivateResult = { changed: 0, notOwned: [] };
  const pending = [root];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(current);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    if (stat.isSymbolicLink()) continue;
    if (stat.mode & 0o077) {
      const outcome = chmodIfOwned(current, stat.mode & 0o700);
      if (outcome === 'changed') result.changed++;
      else if (outcome === 'not owned') result.notOwned.push(current);
    }
    if (stat.isDirectory()) {
      let names: string[];
      try {
        names = fs.readdirSync(current);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      for (const name of names) pending.push(path.join(current, name));
    }
  }
  return result;
}
