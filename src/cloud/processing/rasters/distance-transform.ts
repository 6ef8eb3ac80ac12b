// The exact Euclidean distance transform of a grid of flags, which the footprint's closing
// (gap-fill.ts) and the ground filter's buffer around what it removed (ground-filter.ts) read.
const FAR = 1e20;

/**
 * Squared Euclidean distance (in cells) from each cell to the nearest cell whose flag equals
 * `target` (about 1e20 when there is none): Felzenszwalb and Huttenlocher's exact transform
 * ("Distance transforms of sampled functions", Theory of Computing 8, 2012), along the columns
 * and then along the rows, each the lower envelope of parabolas: linear in cells.
 */
export function squaredDistanceTo(flags: Uint8Array, target: 0 | 1, width: number, height: number): Float64Array {
  const d = new Float64Array(width * height);
  const longest = Math.max(width, height);
  const f = new Float64Array(longest);
  const out = new Float64Array(longest);
  const v = new Int32Array(longest);
  const z = new Float64Array(longest + 1);
  for (let c = 0; c < width; c++) {
    for (let r = 0; r < height; r++) f[r] = flags[r * width + c] === target ? 0 : FAR;
    envelope(f, height, out, v, z);
    for (let r = 0; r < height; r++) d[r * width + c] = out[r];
  }
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) f[c] = d[r * width + c];
    envelope(f, width, out, v, z);
    for (let c = 0; c < width; c++) d[r * width + c] = out[c];
  }
  return d;
}

/** out[q] = min over p of (q - p)^2 + f[p], for q < n (the 1-D transform of the paper). */
function envelope(f: Float64Array, n: number, out: Float64Array, v: Int32Array, z: Float64Array): void {
  let k = 0;
  v[0] = 0;
  z[0] = -Infinity;
  z[1] = Infinity;
  for (let q = 1; q < n; q++) {
    let s = (f[q] + q * q - (f[v[k]] + v[k] * v[k])) / (2 * q - 2 * v[k]);
    while (s <= z[k]) {
      k--;
      s = (f[q] + q * q - (f[v[k]] + v[k] * v[k])) / (2 * q - 2 * v[k]);
    }
    k++;
    v[k] = q;
    z[k] = s;
    z[k + 1] = Infinity;
  }
  k = 0;
  for (let q = 0; q < n; q++) {
    while (z[k + 1] < q) k++;
    out[q] = (q - v[k]) * (q - v[k]) + f[v[k]];
  }
}
