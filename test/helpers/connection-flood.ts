// Many idle TCP connections to one port, no byte sent (issue 27, finding 2), spread over loopback
// addresses 127.0.0.1, 127.0.0.2, ... (all of 127/8 is the loopback interface on Linux) so that a
// cap per address and a global cap can both be reached from one machine. Used by
// test/storage-connection-limits.test.ts and, as a separate attacker process, by
// bench/connection-flood.ts.
import net from 'node:net';

export interface Flood {
  sockets: net.Socket[];
  /** Sockets still open (connected and not closed by the server). */
  open(): net.Socket[];
  /** Sockets the server closed (or refused). */
  closed(): net.Socket[];
  /** Resolves once `n` sockets in all have been closed by the other side, or rejects after `timeoutMs`. */
  closedCount(n: number, timeoutMs: number): Promise<void>;
  end(): Promise<void>;
}

/**
 * Opens `count` connections to `port` on 127.0.0.1 from `addresses` local addresses in turn, `batch`
 * at a time; resolves once each has connected or failed. Nothing is ever written.
 */
export async function openIdleConnections(port: number, count: number, options: { addresses?: number; firstAddress?: number; batch?: number } = {}): Promise<Flood> {
  const addresses = options.addresses ?? 1;
  const first = options.firstAddress ?? 1;
  const batch = options.batch ?? 200;
  const sockets: net.Socket[] = [];
  const closedSet = new Set<net.Socket>();
  const waiters: (() => void)[] = [];
  const onClosed = (socket: net.Socket) => {
    closedSet.add(socket);
    for (const wake of waiters.splice(0)) wake();
  };
  for (let start = 0; start < count; start += batch) {
    const settled: Promise<void>[] = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const localAddress = `127.0.0.${first + (i % addresses)}`;
      const socket = net.connect({ port, host: '127.0.0.1', localAddress });
      socket.on('error', () => {}); // resets are what a refused connection looks like
      socket.resume(); // read (and drop) what comes, so that the server's close is seen
      socket.once('close', () => onClosed(socket));
      sockets.push(socket);
      settled.push(new Promise((resolve) => {
        socket.once('connect', () => resolve());
        socket.once('close', () => resolve());
      }));
    }
    await Promise.all(settled);
  }
  return {
    sockets,
    open: () => sockets.filter((s) => !closedSet.has(s)),
    closed: () => sockets.filter((s) => closedSet.has(s)),
    async closedCount(n, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (closedSet.size < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${closedSet.size} of ${sockets.length} connections closed after ${timeoutMs} ms, expected ${n}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    async end() {
      await Promise.all(
        sockets.map(
          (s) =>
            new Promise<void>((resolve) => {
              if (closedSet.has(s)) return resolve();
              s.once('close', () => resolve());
              s.destroy();
            }),
        ),
      );
    },
  };
}
