// Which empty cells of an elevation grid belong to the surface, and what height they get.
//
// coverageMask: the cloud's footprint, so that the area outside the cloud stays nodata while gaps
// inside it are filled. A cell is covered when it has a value, when it lies in an enclosed hole (an
// empty region that does not reach the grid's border: a roof the fusion missed, a patch of water,
// a building a ground filter removed), or when the morphological closing of the valued cells by
// `closeCells` covers it (concavities and channels of the outline narrower than 2 x closeCells:
// the ragged edge of a dense cloud; the plane beyond the grid counts as empty). Closing is a
// dilation then an erosion, both read off an exact Euclidean distance transform (Felzenszwalb
// and Huttenlocher), so the mask costs time and memory linear in cells.
//
// fillGaps: every covered empty cell gets a height interpolated from the valued cells around it:
// pull-push (Gortler et al. 1996, "The Lumigraph", section 3.3): a pyramid of 2x2 means of the valued
// cells, then each empty cell takes the bilinear value of the next coarser level, from the
// coarsest up, so that a hole of any size gets a value from the cells around it at its own scale;
// then Gauss-Seidel relaxation of the filled cells alone (each the mean of its four neighbours,
// the valued cells held fixed) removes the blockiness and joins the fill smoothly to its rim (a
// membrane: the discrete Laplace equation, the usual interpolant of a DTM under a removed
// building). Linear in cells (the pyramid holds a third more cells; relaxation sweeps only the
// filled cells a fixed number of times). Unlike an inverse-distance fill within a radius, it
// needs no radius to cover a large hole, and unlike GDAL's gdal_fillnodata it runs in-process.
import { squaredDistanceTo } from './distance-transform.ts';

/**
 * Cells the erosion gives back fewer than the dilation took: on a grid, the cell beyond a one-cell
 * gap of a straight edge at the closing's radius is just out of the dilation, so the gap would stay
 * open (the outline may move out by up to this much).
 */
const ERODE_SLACK = 0.5;

/** 1 where the cell belongs to the surface (see the head comment), 0 outside. */
export function coverageMask(values: Float32Array, width: number, height: number, closeCells: number): Uint8Array {
  const n = width * height;
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (!Number.isNaN(values[i])) mask[i] = 1;

  // Enclosed holes: empty cells not 4-connected through empty cells to the border.
  const outside = new Uint8Array(n);
  const stack = new Int32Array(n);
  let top = 0;
  const seed = (i: number) => {
    if (!mask[i] && !outside[i]) {
      outside[i] = 1;
      stack[top++] = i;
    }
  };
  for (let c = 0; c < width; c++) {
    seed(c);
    seed((height - 1) * width + c);
  }
  for (let r = 0; r < height; r++) {
    seed(r * width);
    seed(r * width + width - 1);
  }
  while (top > 0) {
    const i = stack[--top];
    const c = i % width;
    if (c > 0) seed(i - 1);
    if (c < width - 1) seed(i + 1);
    if (i >= width) seed(i - width);
    if (i < n - width) seed(i + width);
  }

  // Closing: dilate the valued cells by closeCells, then erode the result by closeCells, on the
  // grid padded by closeCells each side: the plane around the grid is empty, so an empty cell on
  // the grid's border between valued cells is closed like any other, and the outline is not
  // stretched along the border where the cloud touches it.
  if (closeCells > 0) {
    const pad = Math.ceil(closeCells) + 1;
    const pw = width + 2 * pad;
    const ph = height + 2 * pad;
    const valued = new Uint8Array(pw * ph);
    for (let r = 0; r < height; r++) valued.set(mask.subarray(r * width, (r + 1) * width), (r + pad) * pw + pad);
    const radius2 = closeCells * closeCells;
    const toValued = squaredDistanceTo(valued, 1, pw, ph);
    const dilated = valued; // reused: every valued cell is dilated
    for (let i = 0; i < dilated.length; i++) dilated[i] = toValued[i] <= radius2 ? 1 : 0;
    const toUndilated = squaredDistanceTo(dilated, 0, pw, ph);
    const eroded2 = (closeCells - ERODE_SLACK) ** 2;
    for (let r = 0; r < height; r++) {
      for (let c = 0; c < width; c++) {
        const j = (r + pad) * pw + c + pad;
        if (dilated[j] && toUndilated[j] > eroded2) mask[r * width + c] = 1;
      }
    }
  }
  for (let i = 0; i < n; i++) if (!outside[i]) mask[i] = 1;
  return mask;
}

export interface FillOptions {
  /** Gauss-Seidel sweeps over the filled cells after pull-push (default 40). */
  relaxSweeps?: number;
}

/** Gives every empty cell with mask 1 an interpolated value, in place; other empty cells stay NaN. */
export function fillGaps(values: Float32Array, width: number, height: number, mask: Uint8Array, options: FillOptions = {}): void {
  const n = width * height;
  let holeCount = 0;
  for (let i = 0; i < n; i++) if (mask[i] && Number.isNaN(values[i])) holeCount++;
  if (holeCount === 0) return;
  const holes = new Int32Array(holeCount);
  for (let i = 0, h = 0; i < n; i++) if (mask[i] && Number.isNaN(values[i])) holes[h++] = i;

  // Pull: levels of 2x2 means of the valued cells.
  const levels: { values: Float32Array; width: number; height: number }[] = [{ values: Float32Array.from(values), width, height }];
  while (levels.at(-1)!.width > 1 || levels.at(-1)!.height > 1) {
    const fine = levels.at(-1)!;
    const w = Math.ceil(fine.width / 2);
    const h = Math.ceil(fine.height / 2);
    const coarse = new Float32Array(w * h);
    for (let r = 0; r < h; r++) {
      for (let c = 0; c < w; c++) {
        let sum = 0;
        let count = 0;
        for (let dr = 0; dr < 2; dr++) {
          const fr = 2 * r + dr;
          if (fr >= fine.height) continue;
          for (let dc = 0; dc < 2; dc++) {
            const fc = 2 * c + dc;
            if (fc >= fine.width) continue;
            const v = fine.values[fr * fine.width + fc];
            if (!Number.isNaN(v)) {
              sum += v;
              count++;
            }
          }
        }
        coarse[r * w + c] = count ? sum / count : NaN;
      }
    }
    levels.push({ values: coarse, width: w, height: h });
  }
  // Push: empty cells of each level take the bilinear value of the coarser level (already full).
  for (let k = levels.length - 2; k >= 0; k--) {
    const fine = levels[k];
    const coarse = levels[k + 1];
    for (let r = 0; r < fine.height; r++) {
      const v = Math.min(Math.max((r + 0.5) / 2 - 0.5, 0), coarse.height - 1);
      const r0 = Math.floor(v);
      const r1 = Math.min(r0 + 1, coarse.height - 1);
      const fv = v - r0;
      for (let c = 0; c < fine.width; c++) {
        const i = r * fine.width + c;
        if (!Number.isNaN(fine.values[i])) continue;
        const u = Math.min(Math.max((c + 0.5) / 2 - 0.5, 0), coarse.width - 1);
        const c0 = Math.floor(u);
        const c1 = Math.min(c0 + 1, coarse.width - 1);
        const fu = u - c0;
        const a = coarse.values;
        const cw = coarse.width;
        fine.values[i] = (1 - fv) * ((1 - fu) * a[r0 * cw + c0] + fu * a[r0 * cw + c1]) + fv * ((1 - fu) * a[r1 * cw + c0] + fu * a[r1 * cw + c1]);
      }
    }
  }
  const filled = levels[0].values;
  if (Number.isNaN(filled[holes[0]])) return; // no valued cell at all
  for (const i of holes) values[i] = filled[i];

  // Relaxation of the filled cells: each the mean of its covered 4-neighbours.
  const sweeps = options.relaxSweeps ?? 40;
  for (let s = 0; s < sweeps; s++) {
    for (const i of holes) {
      const c = i % width;
      let sum = 0;
      let count = 0;
      // (inlined: a closure here would be made per cell and per sweep)
      if (c > 0 && mask[i - 1]) {
        sum += values[i - 1];
        count++;
      }
      if (c < width - 1 && mask[i + 1]) {
        sum += values[i + 1];
        count++;
      }
      if (i >= width && mask[i - width]) {
        sum += values[i - width];
        count++;
      }
      if (i < n - width && mask[i + width]) {
        sum += values[i + width];
        count++;
      }
      if (count) values[i] = sum / count;
    }
  }
}
