// Seam feathering weights. Each cell of the orthomosaic is labelled with its best camera; a cell is
// then coloured by every camera labelled within `radius` cells of it, each weighted by how many
// cells of the (2 radius + 1)^2 window around the cell carry its label. Inside a camera's region
// that is the camera alone (its details untouched); across a seam the weights ramp linearly from
// one camera to the other over 2 radius + 1 cells (a box filter of a step), so exposure steps and
// small misregistrations fade instead of cutting. A box filter of the label masks, made separable
// with running sums, costs a few operations per cell for each camera present near the block.

/** Window counts per camera for rows [firstRow, endRow) of a labelled grid (labels: camera index, -1 none). */
export function labelWindowCounts(labels: Int16Array, width: number, height: number, firstRow: number, endRow: number, radius: number): Map<number, Uint16Array> {
  if (radius > 127) throw new RangeError('seam radius above 127 cells'); // (2 * 127 + 1)^2 fits a Uint16
  const top = Math.max(0, firstRow - radius);
  const bottom = Math.min(height, endRow + radius);
  const present = labelsNear(labels, width, height, firstRow, endRow, radius);

  const rows = bottom - top;
  const prefix = new Int32Array(width + 1);
  const columnSums = new Int32Array(width);
  const counts = new Map<number, Uint16Array>();
  for (const camera of present) {
    // Horizontal window sums of the mask (label == camera), rows [top, bottom).
    const horizontal = new Uint16Array(rows * width);
    for (let r = 0; r < rows; r++) {
      const row = (top + r) * width;
      for (let c = 0; c < width; c++) prefix[c + 1] = prefix[c] + (labels[row + c] === camera ? 1 : 0);
      const out = r * width;
      for (let c = 0; c < width; c++) horizontal[out + c] = prefix[Math.min(width, c + radius + 1)] - prefix[Math.max(0, c - radius)];
    }
    // Vertical running sums of the horizontal ones, rows [firstRow, endRow).
    const block = new Uint16Array((endRow - firstRow) * width);
    columnSums.fill(0);
    for (let row = Math.max(top, firstRow - radius); row <= Math.min(bottom - 1, firstRow + radius); row++) {
      const h = (row - top) * width;
      for (let c = 0; c < width; c++) columnSums[c] += horizontal[h + c];
    }
    for (let row = firstRow; row < endRow; row++) {
      if (row > firstRow) {
        const entering = row + radius;
        const leaving = row - radius - 1;
        if (entering < bottom) for (let c = 0, h = (entering - top) * width; c < width; c++) columnSums[c] += horizontal[h + c];
        if (leaving >= top) for (let c = 0, h = (leaving - top) * width; c < width; c++) columnSums[c] -= horizontal[h + c];
      }
      const out = (row - firstRow) * width;
      for (let c = 0; c < width; c++) block[out + c] = columnSums[c];
    }
    counts.set(camera, block);
  }
  return counts;
}

/** The cameras labelled within `radius` rows of rows [firstRow, endRow): those whose photos the block's colours read. */
export function labelsNear(labels: Int16Array, width: number, height: number, firstRow: number, endRow: number, radius: number): Set<number> {
  const present = new Set<number>();
  let last = -1;
  for (let i = Math.max(0, firstRow - radius) * width, end = Math.min(height, endRow + radius) * width; i < end; i++) {
    const label = labels[i];
    if (label !== last && label >= 0) present.add(label);
    last = label;
  }
  return present;
}
