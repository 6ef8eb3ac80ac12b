// An exclusive lock on the data folder. PGlite is a single-process database: two processes
// opening the same folder corrupt it (a probe here saw the second one hang while the first was
// still writing). The lock is a file created with O_EXCL holding the owner's pid and host; a lock
// left by a process that no longer exists on this host (SIGKILL, power loss) is taken over.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
  ) {
    super(
      `The data folder ${dataDir} is in use by another process (pid ${ownerPid}). ` +
        `Stop it first, or set DATA_DIR to another folder. To run workers beside a server, use a PostgreSQL server (DATABASE_URL).`,
    );
    this.name = 'DataDirLockedError';
  }
}

interface LockRecord {
  pid: number;
  host: string;
  startedAt: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface DataDirLock {
  release(): void;
}

export function lockDataDir(dataDir: string): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, 'data.lock');
  const record: LockRecord = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    // Written to a private file first and hard-linked into place: link() fails when the lock
    // exists, and the lock never exists half-written.
    const candidate = `${lockPath}.${process.pid}`;
    fs.writeFileSync(candidate, JSON.stringify(record));
    try {
      fs.linkSync(candidate, lockPath);
      fs.rmSync(candidate, { force: true });
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            const current = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as LockRecord;
            if (current.pid === process.pid) fs.unlinkSync(lockPath);
          } catch {
            // already gone
          }
        },
      };
    } catch (err) {
      fs.rmSync(candidate, { force: true });
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let owner: LockRecord | undefined;
    try {
      owner = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as LockRecord;
    } catch {
      owner = undefined; // unreadable: treat as stale
    }
    const stale = !owner || (owner.host === os.hostname() && owner.pid !== process.pid && !isAlive(owner.pid));
    if (!stale) throw new DataDirLockedError(dataDir, owner!.pid);
    fs.rmSync(lockPath, { force: true });
  }
  throw new Error(`Could not lock ${dataDir}`);
}
