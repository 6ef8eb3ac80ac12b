// Each request's logger (request.log), made only when the request logs something.
//
// Why (bench/README.md, "API"): Fastify gives every request a child of the service's logger with
// its reqId bound. Making a pino child runs the redaction of the logger (createLogger's
// '*.password'-style paths apply to every binding) and costs ~3 KB of allocations per request, on
// every request, while at LOG_LEVEL=warn almost none of them ever writes a line. This logger has
// the same methods and makes the child on the first call at an enabled level, so every line a
// request writes is the line pino's child would have written (its bindings, its redaction).
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilent } from 'pino';

type Log = (...args: unknown[]) => void;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Parent = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

export class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Parent,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): LevelWithSilent | string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilent | string) {
    this.#real().level = level;
  }

  // A child logs what its parent logs unless it was given a level of its own.
  #enabled(level: Level): boolean {
    return this.#child || this.options.level ? true : this.parent.isLevelEnabled(level);
  }

  #log(level: Level, args: unknown[]): void {
    if (!this.#enabled(level)) return;
    const real = this.#real();
    (real[level] as Log).apply(real, args);
  }

  // Methods on the prototype, not arrow functions in fields: nothing more is made per request.
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's childLoggerFactory option. */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger as Parent, bindings, options);
}
