// How well the detector finds labelled rust (test/rust-detection.test.ts, bench/rust-detection.ts):
// findings and labelled rectangles matched one to one, best IoU first, a pair counting when its
// IoU (intersection over union of the rectangles) is at least `minIoU` (0.5, the usual
// detection criterion). Precision = matched findings / findings; recall = matched labels / labels.

export interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export function iou(a: Rect, b: Rect): number {
  const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
  const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / ((a.right - a.left) * (a.bottom - a.top) + (b.right - b.left) * (b.bottom - b.top) - inter);
}

/** Matches of one photo: how many of its findings and labels pair up at `minIoU`. */
export function matchPhoto(found: Rect[], truth: Rect[], minIoU = 0.5): number {
  const pairs: { f: number; t: number; iou: number }[] = [];
  for (const [f, a] of found.entries()) {
    for (const [t, b] of truth.entries()) {
      const value = iou(a, b);
      if (value >= minIoU) pairs.push({ f, t, iou: value });
    }
  }
  pairs.sort((x, y) => y.iou - x.iou);
  const usedF = new Set<number>();
  const usedT = new Set<number>();
  for (const p of pairs) {
    if (usedF.has(p.f) || usedT.has(p.t)) continue;
    usedF.add(p.f);
    usedT.add(p.t);
  }
  return usedF.size;
}

export interface Score {
  found: number;
  labelled: number;
  matched: number;
  precision: number;
  recall: number;
}

/** Totals over photos (each with its findings and labels in the same units). */
export function score(photos: { found: Rect[]; truth: Rect[] }[], minIoU = 0.5): Score {
  let found = 0;
  let labelled = 0;
  let matched = 0;
  for (const p of photos) {
    found += p.found.length;
    labelled += p.truth.length;
    matched += matchPhoto(p.found, p.truth, minIoU);
  }
  return { found, labelled, matched, precision: found ? matched / found : 1, recall: labelled ? matched / labelled : 1 };
}
