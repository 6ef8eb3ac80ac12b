// The colmap engine's stage runtime. A stage is a module with a name, a human title, a weight (its
// share of the engine's progress, against the other stages' weights) and `run(context, inputs)`:
// it gets the records of the earlier stages it needs and returns its own record, read-only; the
// files it makes live in the work folder under the names its record gives. Nothing else passes
// between stages (OpenDroneMap's stages share one mutable `outputs` dict; these do not).
//
// The runtime (`StageRuntime`) owns what every stage shares and no stage should own: the work
// folder, the processing log (a section per stage: `== <name> ==` ... `== <name>: 12.3 s ==`),
// the progress (each stage reports 0..1 of its own share; the engine's percent never goes
// backwards), the COLMAP runner (colmap-process.ts; each command's time and command line are
// recorded for the quality report), the time limit and the cancel: an abort becomes the time-limit
// error (10002) or the cancel's reason, naming the step it stopped.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { EngineError, type EngineInput } from '../../engine.ts';
import { colmapFailure, runColmap } from '../colmap-process.ts';

export interface Stage<Inputs, Outputs> {
  /** Short, for the log and the timings (`features`). */
  readonly name: string;
  /** For the progress text's owner (`Extracting features`). */
  readonly title: string;
  /** Share of the engine's progress against the other stages' weights. */
  readonly weight: number;
  run(context: StageContext, inputs: Inputs): Promise<Outputs>;
}

/** What a stage gets of the run. */
export interface StageContext {
  /** The run's work folder (the stages' files, the log, glog's files). */
  readonly work: string;
  /** Where glog writes COLMAP's INFO files (colmap-process.ts). */
  readonly glogDir: string;
  readonly input: EngineInput;
  readonly signal: AbortSignal;
  /** Progress within the stage's share: `fraction` 0..1 (clamped; never backwards). */
  progress(fraction: number, text: string): Promise<void>;
  /** A line (or lines) in the stage's section of the processing log. */
  log(text: string): void;
  /**
   * Runs one COLMAP command named `command` (the step an error or the time limit names, the key of
   * its time in the quality report); true when it succeeded. `parse` turns an output line into a
   * fraction of `within` (a part of the stage's share, default all of it) or null. With `mayFail`,
   * an exit code 1 (a command that ran and found nothing) answers false instead of failing the run.
   */
  colmap(command: string, args: string[], options: ColmapOptions): Promise<boolean>;
  /** The run so far, for the quality report. */
  record(): RunRecord;
}

/** What a progress line of COLMAP's output tells: the fraction done, with a detail for the text (`12/29 photos`). */
export type LineProgress = number | { fraction: number; detail: string };

export interface ColmapOptions {
  /** The progress text; a parsed line's detail is added in parentheses. */
  text: string;
  parse?: (line: string) => LineProgress | null;
  within?: { start: number; end: number };
  mayFail?: boolean;
}

export interface RunRecord {
  /** Seconds per COLMAP command name (summed over its runs). */
  commandSeconds: Readonly<Record<string, number>>;
  /** Seconds per finished stage. */
  stageSeconds: Readonly<Record<string, number>>;
  /** Each finished stage's title in words (`Extracting features`): the quality report's `stage_titles`, for people. */
  stageTitles: Readonly<Record<string, string>>;
  commands: readonly (readonly string[])[];
  started: number;
}

export interface StageRuntimeOptions {
  binary: string;
  workDir: string;
  /** 0: no limit. */
  timeLimitSeconds: number;
  /** The progress text is reported again, with the stage's time, after this long without a report (default HEARTBEAT_SECONDS). */
  heartbeatSeconds?: number;
}

/**
 * COLMAP can print nothing for minutes (matching a block of pairs, a bundle adjustment): the last
 * progress text is then reported again with the stage's elapsed time at least this often, so the
 * console shows the run alive ("Matching features (40/133 pairs, 52 s)").
 */
export const HEARTBEAT_SECONDS = 10;
/** A new text at the same percent is reported at most this often (each report is a database write). */
const TEXT_INTERVAL_MS = 1000;

/** `text` with the elapsed seconds added in its parentheses (or in new ones). */
export function withElapsed(text: string, seconds: number): string {
  return text.endsWith(')') ? `${text.slice(0, -1)}, ${seconds} s)` : `${text} (${seconds} s)`;
}

/** Where the processing log is stored, beside the outputs. */
export function processingLogKey(input: Pick<EngineInput, 'outputPrefix'>): string {
  return `${input.outputPrefix}processing_log.txt`;
}

export class StageRuntime {
  readonly started = Date.now();
  readonly signal: AbortSignal;
  private readonly timeLimit = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly shares = new Map<string, { start: number; end: number }>();
  private readonly commandSeconds: Record<string, number> = {};
  private readonly stageSeconds: Record<string, number> = {};
  private readonly stageTitles: Record<string, string> = {};
  private readonly commands: string[][] = [];
  private percent = 0;
  /** The latest progress text (reported or not) and when a report last went out. */
  private text = '';
  private reportedAt = 0;
  private stageStarted = Date.now();
  private heartbeat: NodeJS.Timeout | undefined;
  private heartbeatsOn = false;
  /** The step an abort or a failure names: the running command, else the running stage. */
  private step = 'preparation';
  private work = '';
  private glogDir = '';
  private log: fs.WriteStream | null = null;

  /** `stages`: every stage the run will take, in order (their weights make the shares). */
  constructor(
    private readonly input: EngineInput,
    stages: readonly Pick<Stage<unknown, unknown>, 'name' | 'weight'>[],
    private readonly options: StageRuntimeOptions,
  ) {
    const limit = options.timeLimitSeconds;
    this.timer = limit > 0 ? setTimeout(() => this.timeLimit.abort(new Error('time limit')), limit * 1000) : undefined;
    this.signal = AbortSignal.any([input.signal, this.timeLimit.signal]);
    const total = stages.reduce((sum, s) => sum + s.weight, 0) || 1;
    let at = 0;
    for (const stage of stages) {
      this.shares.set(stage.name, { start: (100 * at) / total, end: (100 * (at + stage.weight)) / total });
      at += stage.weight;
    }
  }

  /** Makes the work folder and opens the log with `headline`. */
  async open(headline: string): Promise<void> {
    await fsp.mkdir(this.options.workDir, { recursive: true });
    this.work = await fsp.mkdtemp(path.join(this.options.workDir, `colmap-${this.input.projectUuid}-`));
    this.glogDir = path.join(this.work, 'glog');
    await fsp.mkdir(this.glogDir);
    this.log = fs.createWriteStream(path.join(this.work, 'processing_log.txt'));
    this.log.write(`${headline}\n`);
  }

  async run<I, O>(stage: Stage<I, O>, inputs: I): Promise<O> {
    const share = this.shares.get(stage.name);
    if (!share) throw new Error(`stage ${stage.name} is not in the run's list`);
    this.step = stage.name;
    this.write(`\n== ${stage.name} ==\n`);
    const t0 = Date.now();
    this.stageStarted = t0;
    this.heartbeatsOn = true;
    await this.report(share.start, stage.title, true);
    const outputs = await stage.run(this.context(share), inputs);
    const seconds = (Date.now() - t0) / 1000;
    this.stageSeconds[stage.name] = seconds;
    this.stageTitles[stage.name] = stage.title;
    this.write(`== ${stage.name}: ${seconds.toFixed(1)} s ==\n`);
    return outputs;
  }

  /** A line in the log outside any stage's own writing (a stage's failure that the run survives). */
  note(text: string): void {
    this.write(`${text}\n`);
  }

  /** After the last stage: the log closed and stored, progress 100 (Done); answers the log's key. */
  async finish(): Promise<string> {
    this.stopHeartbeats();
    this.write(`\ndone in ${((Date.now() - this.started) / 1000).toFixed(1)} s\n`);
    await this.storeLog();
    await this.report(100, 'Done');
    return processingLogKey(this.input);
  }

  /** A failed run: the error to throw (an abort named as such), logged; the log stored all the same. */
  async fail(err: unknown): Promise<unknown> {
    this.stopHeartbeats();
    const failure = this.signal.aborted && !(err instanceof EngineError) ? this.abortError(this.step) : err;
    this.write(`\nfailed during ${this.step}: ${failure instanceof Error ? failure.message : String(failure)}\n`);
    // The log of a failed run is kept too (not listed as an output: the run has none).
    await this.storeLog().catch(() => undefined);
    return failure;
  }

  /** Always, last: the timer stopped and the work folder removed. */
  async close(): Promise<void> {
    this.stopHeartbeats();
    if (this.timer) clearTimeout(this.timer);
    if (this.log && !this.log.closed) await new Promise<void>((resolve) => this.log!.end(resolve));
    if (this.work) await fsp.rm(this.work, { recursive: true, force: true }).catch(() => undefined);
  }

  private context(share: { start: number; end: number }): StageContext {
    const scale = (fraction: number, within = { start: 0, end: 1 }) => {
      const f = within.start + Math.min(1, Math.max(0, fraction)) * (within.end - within.start);
      return share.start + f * (share.end - share.start);
    };
    return {
      work: this.work,
      glogDir: this.glogDir,
      input: this.input,
      signal: this.signal,
      progress: (fraction, text) => this.report(scale(fraction), text),
      log: (text) => this.write(text.endsWith('\n') ? text : `${text}\n`),
      colmap: (command, args, options) => this.colmap(command, args, options, (fraction) => scale(fraction, options.within)),
      record: () => ({ commandSeconds: { ...this.commandSeconds }, stageSeconds: { ...this.stageSeconds }, stageTitles: { ...this.stageTitles }, commands: this.commands.map((c) => [...c]), started: this.started }),
    };
  }

  private async colmap(command: string, args: string[], options: ColmapOptions, toPercent: (fraction: number) => number): Promise<boolean> {
    this.step = command;
    this.commands.push([this.options.binary, ...args]);
    const t0 = Date.now();
    let pending: Promise<void> = Promise.resolve();
    const outcome = await runColmap({
      binary: this.options.binary,
      args,
      cwd: this.work,
      glogDir: this.glogDir,
      log: this.log!,
      signal: this.signal,
      onLine: (line) => {
        const parsed = options.parse?.(line);
        if (parsed === null || parsed === undefined) return;
        const { fraction, detail } = typeof parsed === 'number' ? { fraction: parsed, detail: null } : parsed;
        const text = detail ? `${options.text} (${detail})` : options.text;
        pending = pending.then(() => this.report(toPercent(fraction), text)).catch(() => undefined);
      },
    });
    await pending;
    this.commandSeconds[command] = (this.commandSeconds[command] ?? 0) + (Date.now() - t0) / 1000;
    if (outcome.aborted || this.signal.aborted) throw this.abortError(command);
    if (options.mayFail && outcome.code === 1 && !outcome.signal) return false;
    if (outcome.code !== 0 || outcome.signal) throw colmapFailure(command, outcome);
    return true;
  }

  /**
   * The engine's progress: whole percents, never backwards. The same percent is reported again
   * when `force`d (a stage's start) or with a new text, at most every TEXT_INTERVAL_MS.
   */
  private async report(value: number, text: string, force = false): Promise<void> {
    const next = Math.max(this.percent, Math.min(100, Math.floor(value)));
    const newText = text !== this.text;
    this.text = text;
    if (!force && next === this.percent && value !== 0 && !(newText && Date.now() - this.reportedAt >= TEXT_INTERVAL_MS)) return;
    this.percent = next;
    await this.send(next, text);
  }

  private async send(percent: number, text: string): Promise<void> {
    this.reportedAt = Date.now();
    this.armHeartbeat();
    await this.input.reportProgress(percent, text);
  }

  /** The latest text again, with the stage's time, when nothing was reported for the heartbeat's period. */
  private armHeartbeat(): void {
    if (this.heartbeat) clearTimeout(this.heartbeat);
    if (!this.heartbeatsOn) return;
    this.heartbeat = setTimeout(() => {
      const seconds = Math.round((Date.now() - this.stageStarted) / 1000);
      // A failed report (the project canceled) is the cancel's business, not the heartbeat's.
      this.send(this.percent, withElapsed(this.text, seconds)).catch(() => undefined);
    }, 1000 * (this.options.heartbeatSeconds ?? HEARTBEAT_SECONDS));
  }

  private stopHeartbeats(): void {
    this.heartbeatsOn = false;
    if (this.heartbeat) clearTimeout(this.heartbeat);
  }

  private write(text: string): void {
    this.log?.write(text);
  }

  private async storeLog(): Promise<void> {
    const log = this.log;
    if (!log) return;
    if (!log.closed) await new Promise<void>((resolve) => log.end(resolve));
    await this.input.store.putObject(this.input.bucket, processingLogKey(this.input), fs.createReadStream(path.join(this.work, 'processing_log.txt')), { contentType: 'text/plain; charset=utf-8' });
  }

  /** The error of an aborted run: the time limit (10002) or the caller's cancel (its reason). */
  private abortError(step: string): unknown {
    if (this.timeLimit.signal.aborted && !this.input.signal.aborted) {
      return new EngineError(10002, `Processing exceeded the allotted time of ${this.options.timeLimitSeconds} s (ENGINE_TIME_LIMIT_SECONDS) during ${step}.`);
    }
    return this.input.signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
  }
}
