// The grid part of a 2.5D volume, shared by the point cloud's (volume.ts) and the DSM's
// (dsm-volume.ts): which cells of a square grid lie inside a polygon, heights of cells without a
// value of their own filled from their neighbours, and the sums above and below the base.
// The grid: nu x nv cells of side `cell` from (minU, minV), cell (i, j) at index j * nu + i; rings
// are given in the grid's frame (only their first two coordinates are read).

/** Cells whose centre is inside the rings (even-odd: holes out), one scanline per row of cells. */
export function insideCells(rings: number[][][], minU: number, minV: number, cell: number, nu: number, nv: number): Uint8Array {
  const inside = new Uint8Array(nu * nv);
  for (let j = 0; j < nv; j++) {
    const vc = minV + (j + 0.5) * cell;
    const crossings: number[] = [];
    for (const ring of rings) {
      for (let k = 0; k < ring.length - 1; k++) {
        const [au, av] = ring[k];
        const [bu, bv] = ring[k + 1];
        if (av <= vc !== bv <= vc) crossings.push(au + ((vc - av) / (bv - av)) * (bu - au));
      }
    }
    crossings.sort((a, b) => a - b);
    for (let k = 0; k + 1 < crossings.length; k += 2) {
      const first = Math.max(0, Math.ceil((crossings[k] - minU) / cell - 0.5));
      const last = Math.min(nu - 1, Math.floor((crossings[k + 1] - minU) / cell - 0.5));
      for (let i = first; i <= last; i++) inside[j * nu + i] = 1;
    }
  }
  return inside;
}

/**
 * Fills, in place, the cells of `height` that are NaN with the mean of their filled neighbours
 * (8-connected), ring after ring outwards from the cells that have a value: a gap in the surface is
 * bridged, not counted as 0. All NaN stays all NaN.
 */
export function fillHeights(height: Float64Array, nu: number, nv: number): void {
  let frontier: number[] = [];
  for (let c = 0; c < nu * nv; c++) if (!Number.isNaN(height[c])) frontier.push(c);
  const queued = new Uint8Array(nu * nv);
  for (const c of frontier) queued[c] = 1;
  while (frontier.length > 0) {
    // The empty neighbours of this ring of filled cells are the next ring.
    const next: number[] = [];
    for (const c of frontier) {
      const i = c % nu;
      const j = (c - i) / nu;
      for (let dj = -1; dj <= 1; dj++) {
        for (let di = -1; di <= 1; di++) {
          const ni = i + di;
          const nj = j + dj;
          if (ni < 0 || nj < 0 || ni >= nu || nj >= nv) continue;
          const neighbour = nj * nu + ni;
          if (!queued[neighbour]) {
            queued[neighbour] = 1;
            next.push(neighbour);
          }
        }
      }
    }
    const values = next.map((c) => {
      const i = c % nu;
      const j = (c - i) / nu;
      let total = 0;
      let n = 0;
      for (let dj = -1; dj <= 1; dj++) {
        for (let di = -1; di <= 1; di++) {
          const ni = i + di;
          const nj = j + dj;
          if (ni < 0 || nj < 0 || ni >= nu || nj >= nv) continue;
          const h = height[nj * nu + ni];
          if (Number.isNaN(h)) continue;
          total += h;
          n++;
        }
      }
      return n > 0 ? total / n : NaN;
    });
    next.forEach((c, k) => (height[c] = values[k]));
    frontier = next;
  }
}

export interface GridSums {
  /** Cells whose centre is inside the polygon. */
  cells: number;
  /** Of those, the cells that had a value of their own. */
  covered: number;
  /** Sum of the inside cells' heights above the base, and of their depths below it. */
  above: number;
  below: number;
}

/** Sums of the filled heights over the inside cells; `had`: whether a cell had a value before filling. */
export function sumInside(height: Float64Array, inside: Uint8Array, had: (cell: number) => boolean): GridSums {
  const sums: GridSums = { cells: 0, covered: 0, above: 0, below: 0 };
  for (let c = 0; c < height.length; c++) {
    if (!inside[c]) continue;
    sums.cells++;
    if (had(c)) sums.covered++;
    const h = height[c];
    if (Number.isNaN(h)) continue;
    if (h > 0) sums.above += h;
    else sums.below -= h;
  }
  return sums;
}
