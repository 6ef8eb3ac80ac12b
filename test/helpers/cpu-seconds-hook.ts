// Loaded into every test file's process by scripts/run-tests.ts (--import): when the process exits
// it writes the CPU seconds the file cost into TEST_CPU_DIR, where the slowest-files reporter reads
// them. Wall time says which file the run waits on; CPU time says which file takes the machine
// from the others (two cores, two files at a time: issue 41). Counted: the file's own process with
// its worker threads (PatchMatch, detection), and the child processes it waited for (COLMAP,
// Chromium, spawned servers): utime + stime + cutime + cstime of /proc/self/stat, in Linux's
// USER_HZ of 100 ticks a second. Elsewhere (no /proc) it writes nothing.
import fs from 'node:fs';
import path from 'node:path';

const USER_HZ = 100;
const directory = process.env.TEST_CPU_DIR;
const file = process.argv[1];

if (directory && file) {
  process.on('exit', () => {
    try {
      const stat = fs.readFileSync('/proc/self/stat', 'utf8');
      // "pid (comm) state ppid ...": after comm's closing parenthesis, utime is the 12th field.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
      fs.writeFileSync(path.join(directory, encodeURIComponent(path.resolve(file))), String(ticks / USER_HZ));
    } catch {
      // no /proc (not Linux): the reporter shows no CPU column
    }
  });
}
