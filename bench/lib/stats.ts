// Rounds, medians and the result table.

export interface Summary {
  median: number;
  min: number;
  max: number;
  values: number[];
}

export function summarise(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0] ?? NaN, max: sorted[sorted.length - 1] ?? NaN, values };
}

/** One line of the table. */
export interface Row {
  benchmark: string;
  metric: string;
  unit: string;
  /** Measured value per round (the median and the range are derived). */
  summary: Summary;
  /** Ratio to the anchor, per round (project / anchor of the same round), when there is one. */
  ratio?: Summary;
  anchor?: string;
  target?: string;
  /** undefined: no target on this line. */
  met?: boolean;
  note?: string;
}

export function fmt(n: number, digits?: number): string {
  if (!Number.isFinite(n)) return '-';
  const d = digits ?? (Math.abs(n) >= 1000 ? 0 : Math.abs(n) >= 100 ? 1 : Math.abs(n) >= 10 ? 1 : 2);
  return n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

function range(s: Summary, digits?: number): string {
  return s.values.length > 1 ? `${fmt(s.min, digits)}–${fmt(s.max, digits)}` : '';
}

export function renderTable(rows: Row[]): string {
  const header = ['benchmark', 'metric', 'median', '(min–max)', 'vs anchor (min–max)', 'target', 'met'];
  const lines = rows.map((r) => [
    r.benchmark,
    `${r.metric}${r.unit ? ` [${r.unit}]` : ''}${r.note ? ` (${r.note})` : ''}`,
    fmt(r.summary.median),
    range(r.summary),
    r.ratio ? `${fmt(r.ratio.median, 2)}× ${r.anchor ?? ''} (${range(r.ratio, 2)})` : '',
    r.target ?? '',
    r.met === undefined ? '' : r.met ? 'MET' : 'NOT MET',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 && i <= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...lines.map(line)].join('\n');
}

/** Runs `fn` for each of `sides` in each round, rotating the order so no side always goes first. */
export async function alternate<S extends string>(rounds: number, sides: readonly S[], fn: (side: S, round: number) => Promise<void>): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const order = sides.map((_, i) => sides[(i + round) % sides.length]);
    for (const side of order) await fn(side, round);
  }
}

export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
