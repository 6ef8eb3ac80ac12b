// PatchMatch multi-view stereo for one reference image, on typed arrays (what each worker runs):
// COLMAP's algorithm (src/mvs/patch_match_cuda.cu, Schönberger et al. 2016) simplified the way
// ACMH does it. Every pixel holds a plane hypothesis (depth along the optical axis and a normal in
// the reference camera frame, facing the camera as COLMAP stores it) and its cost:
// - cost of a hypothesis: the plane induces a homography into each source view; a window of
//   (2r/s+1)^2 samples around the pixel (every s-th pixel) is compared by bilateral-weighted NCC
//   (weights from distance and from the grey-level difference to the centre, so a window straddling
//   a depth edge trusts the side it belongs to); the per-view costs 1 - NCC are aggregated as the
//   mean of the best half of the views (occlusion-robust, as ACMH's view selection approximates);
// - in the geometric pass each view's cost also gets lambda * min(forward-backward reprojection
//   error, 3 px) through that view's photometric depth map (COLMAP's geom_consistency term);
// - checkerboard propagation: red pixels, then black, each trying the planes of 8 neighbours of
//   the other colour (distance 1 and 5 along the axes), the plane carried over to this pixel's ray;
// - random refinement: a random hypothesis, the depth perturbed, the normal perturbed, both; the
//   perturbation halves each iteration.
// The random numbers come from a seeded generator, so a run is reproducible.
// One file past the usual size: the cost, propagation, refinement, pyramid and filter share the
// per-source geometry (SourceGeometry) and the hot closures over one image's typed arrays; split
// apart they would pass a dozen arrays and scalars around on the hottest path.
import { seededRandom } from '../../../shared/seeded-random.ts';

export interface PatchMatchView {
  /** Grey levels in [0, 1], row-major. */
  gray: Float32Array;
  width: number;
  height: number;
  /** PINHOLE intrinsics at this size. */
  fx: number;
  fy: number;
  cx: number;
  cy: number;
  /** World-to-camera, row-major 3x3, and translation. */
  R: ArrayLike<number>;
  t: ArrayLike<number>;
  /** The view's photometric depth map (geometric pass only), same size as gray. */
  depth?: Float32Array;
}

export interface PatchMatchParams {
  iterations: number;
  windowRadius: number;
  windowStep: number;
  /** Bilateral weights: the grey-level difference's sigma (grey in [0, 1]). */
  sigmaColor: number;
  /** Weight of the geometric term, and its cap in pixels (COLMAP: 0.3 and 3). */
  geometricWeight: number;
  geometricMaxError: number;
  seed: number;
  /**
   * Coarse to fine: while the image's longer side halved is at least this, the photometric pass
   * first runs on the half-size images (recursively), and its planes start this level, which then
   * runs fineIterations instead of iterations (0: a single level).
   */
  pyramidMinSize: number;
  fineIterations: number;
  /** Filter: pixels costlier than this, or consistent with fewer views, are set to depth 0. */
  filterMaxCost: number;
  filterMinConsistent: number;
  /** A view is consistent when the forward-backward error is at most this (pixels) ... */
  filterMaxReprojError: number;
  /** ... and the triangulation angle at the point at least this (degrees). */
  filterMinAngle: number;
}

export const DEFAULT_PATCH_MATCH_PARAMS: PatchMatchParams = {
  iterations: 4,
  windowRadius: 4,
  windowStep: 2,
  sigmaColor: 0.2,
  geometricWeight: 0.3,
  geometricMaxError: 3,
  seed: 1,
  pyramidMinSize: 320,
  fineIterations: 2,
  // Measured on lund at 256 px (one reference, 5 sources): 0.6 / 1 px kept 4 % of the pixels,
  // 1.0 / 2 px 19 %; fusion's own consistency checks (fusion.ts) remove what stays inconsistent.
  filterMaxCost: 1,
  filterMinConsistent: 2,
  filterMaxReprojError: 2,
  filterMinAngle: 1.5,
};

export interface PatchMatchInput {
  ref: PatchMatchView;
  sources: PatchMatchView[];
  /** Depth range for random hypotheses. */
  minDepth: number;
  maxDepth: number;
  /** Sparse points seen by the reference: col, row, depth triples at this size. */
  seeds: Float32Array;
  /** Start from these (the photometric result) instead of random hypotheses. */
  initial?: { depth: Float32Array; normal: Float32Array };
  /** Add the geometric term (needs each source's depth). */
  geometric: boolean;
  /** Zero the depths that fail the filter (the last pass). */
  filter: boolean;
  params: PatchMatchParams;
}

export interface PatchMatchOutput {
  depth: Float32Array;
  /** nx, ny, nz per pixel, camera frame, facing the camera. */
  normal: Float32Array;
  cost: Float32Array;
}

const MAX_COST = 2;
/** Neighbour planes tried per pixel and iteration (the cheapest of 8). */
const PROPAGATED = 4;

interface SourceGeometry {
  view: PatchMatchView;
  /** A = K_s R_rs K_r^-1 (row-major), b = K_s t_rs: the homography is A + b m^T. */
  A: Float64Array;
  b: Float64Array;
  /** R_rs and t_rs: x_source = R_rs x_ref + t_rs. */
  Rrs: Float64Array;
  trs: Float64Array;
  /** The source camera centre in the reference frame. */
  center: Float64Array;
}

function sourceGeometry(ref: PatchMatchView, view: PatchMatchView): SourceGeometry {
  const Rr = ref.R;
  const Rs = view.R;
  // R_rs = R_s R_r^T, t_rs = t_s - R_rs t_r
  const Rrs = new Float64Array(9);
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) Rrs[3 * i + j] = Rs[3 * i] * Rr[3 * j] + Rs[3 * i + 1] * Rr[3 * j + 1] + Rs[3 * i + 2] * Rr[3 * j + 2];
  const trs = new Float64Array(3);
  for (let i = 0; i < 3; i++) trs[i] = view.t[i] - (Rrs[3 * i] * ref.t[0] + Rrs[3 * i + 1] * ref.t[1] + Rrs[3 * i + 2] * ref.t[2]);
  // K_s R_rs
  const KR = new Float64Array(9);
  for (let j = 0; j < 3; j++) {
    KR[j] = view.fx * Rrs[j] + view.cx * Rrs[6 + j];
    KR[3 + j] = view.fy * Rrs[3 + j] + view.cy * Rrs[6 + j];
    KR[6 + j] = Rrs[6 + j];
  }
  // times K_r^-1 = [1/fx 0 -cx/fx; 0 1/fy -cy/fy; 0 0 1]
  const A = new Float64Array(9);
  for (let i = 0; i < 3; i++) {
    A[3 * i] = KR[3 * i] / ref.fx;
    A[3 * i + 1] = KR[3 * i + 1] / ref.fy;
    A[3 * i + 2] = KR[3 * i + 2] - (KR[3 * i] * ref.cx) / ref.fx - (KR[3 * i + 1] * ref.cy) / ref.fy;
  }
  const b = Float64Array.from([view.fx * trs[0] + view.cx * trs[2], view.fy * trs[1] + view.cy * trs[2], trs[2]]);
  const center = new Float64Array(3);
  for (let j = 0; j < 3; j++) center[j] = -(Rrs[j] * trs[0] + Rrs[3 + j] * trs[1] + Rrs[6 + j] * trs[2]);
  return { view, A, b, Rrs, trs, center };
}

export function runPatchMatch(input: PatchMatchInput): PatchMatchOutput {
  const { ref } = input;
  let params = input.params;
  if (!input.initial && params.pyramidMinSize > 0 && Math.max(ref.width, ref.height) / 2 >= params.pyramidMinSize) {
    const coarse = runPatchMatch({
      ...input,
      ref: halfView(ref),
      sources: input.sources.map((s) => halfView(s)),
      seeds: input.seeds.map((v, k) => (k % 3 === 2 ? v : (v - 0.5) / 2)),
      filter: false,
    });
    input = { ...input, initial: upsamplePlanes(coarse, halfView(ref, false), ref) };
    params = { ...params, iterations: params.fineIterations };
  }
  const { width, height, fx, fy, cx, cy } = ref;
  const sources = input.sources.map((s) => sourceGeometry(ref, s));
  const nViews = sources.length;
  const bestViews = Math.max(1, Math.ceil(nViews / 2));
  const random = seededRandom(params.seed);
  const n = width * height;
  const depth = new Float32Array(n);
  const normal = new Float32Array(3 * n);
  const cost = new Float32Array(n).fill(MAX_COST);
  const { minDepth, maxDepth } = input;

  // Window offsets and spatial weights.
  const offsets: number[] = [];
  for (let dv = -params.windowRadius; dv <= params.windowRadius; dv += params.windowStep) for (let du = -params.windowRadius; du <= params.windowRadius; du += params.windowStep) offsets.push(du, dv);
  const samples = offsets.length / 2;
  const side = Math.round(Math.sqrt(samples));
  const spatial = new Float32Array(samples);
  const sigmaSpatial = params.windowRadius;
  for (let i = 0; i < samples; i++) spatial[i] = Math.exp(-(offsets[2 * i] ** 2 + offsets[2 * i + 1] ** 2) / (2 * sigmaSpatial * sigmaSpatial));
  const colorFactor = -1 / (2 * params.sigmaColor * params.sigmaColor);
  const weights = new Float32Array(samples);
  const centered = new Float32Array(samples);
  let weightSum = 0;
  let refVariance = 0;
  const viewCosts = new Float64Array(nViews);

  /** Fills weights/centered for the window at (x, y); false when the window is textureless. */
  const prepareRef = (x: number, y: number): boolean => {
    const g = ref.gray;
    const centre = g[y * width + x];
    let sw = 0;
    let swr = 0;
    let swrr = 0;
    for (let i = 0; i < samples; i++) {
      const px = Math.min(width - 1, Math.max(0, x + offsets[2 * i]));
      const py = Math.min(height - 1, Math.max(0, y + offsets[2 * i + 1]));
      const v = g[py * width + px];
      const d = v - centre;
      const w = spatial[i] * Math.exp(d * d * colorFactor);
      weights[i] = w;
      centered[i] = v;
      sw += w;
      swr += w * v;
      swrr += w * v * v;
    }
    const mean = swr / sw;
    weightSum = sw;
    refVariance = swrr / sw - mean * mean;
    for (let i = 0; i < samples; i++) centered[i] = weights[i] * (centered[i] - mean);
    return refVariance > 1e-5;
  };

  /** Aggregated cost of the plane (d, n) at pixel (x, y); prepareRef(x, y) must have run. */
  const evaluate = (x: number, y: number, d: number, nx: number, ny: number, nz: number): number => {
    const rx = (x - cx) / fx;
    const ry = (y - cy) / fy;
    const X0 = d * rx;
    const Y0 = d * ry;
    const Z0 = d;
    const c = nx * X0 + ny * Y0 + nz * Z0;
    if (!(d > 0) || Math.abs(c) < 1e-9) return MAX_COST;
    // m = K_r^-T n / c
    const m0 = nx / fx / c;
    const m1 = ny / fy / c;
    const m2 = (nz - (cx * nx) / fx - (cy * ny) / fy) / c;
    const x0 = x - params.windowRadius;
    const y0 = y - params.windowRadius;
    const step = params.windowStep;
    for (let v = 0; v < nViews; v++) {
      const s = sources[v];
      const { A, b } = s;
      const sv = s.view;
      const H0 = A[0] + b[0] * m0, H1 = A[1] + b[0] * m1, H2 = A[2] + b[0] * m2;
      const H3 = A[3] + b[1] * m0, H4 = A[4] + b[1] * m1, H5 = A[5] + b[1] * m2;
      const H6 = A[6] + b[2] * m0, H7 = A[7] + b[2] * m1, H8 = A[8] + b[2] * m2;
      const sw = sv.width;
      const sh = sv.height;
      const sg = sv.gray;
      let sws = 0;
      let swss = 0;
      let srs = 0;
      let inside = true;
      let i = 0;
      for (let row = 0; row < side && inside; row++) {
        const py = y0 + row * step;
        let hx = H0 * x0 + H1 * py + H2;
        let hy = H3 * x0 + H4 * py + H5;
        let hz = H6 * x0 + H7 * py + H8;
        const dx = H0 * step, dy = H3 * step, dz = H6 * step;
        for (let col = 0; col < side; col++, i++) {
          if (hz <= 0) {
            inside = false;
            break;
          }
          const inverse = 1 / hz;
          const sx = hx * inverse;
          const sy = hy * inverse;
          if (!(sx >= 0 && sy >= 0 && sx < sw - 1 && sy < sh - 1)) {
            inside = false;
            break;
          }
          const ix = sx | 0;
          const iy = sy | 0;
          const fxr = sx - ix;
          const fyr = sy - iy;
          const o = iy * sw + ix;
          const top = sg[o] + (sg[o + 1] - sg[o]) * fxr;
          const bottom = sg[o + sw] + (sg[o + sw + 1] - sg[o + sw]) * fxr;
          const val = top + (bottom - top) * fyr;
          const w = weights[i];
          sws += w * val;
          swss += w * val * val;
          srs += centered[i] * val;
          hx += dx;
          hy += dy;
          hz += dz;
        }
      }
      let viewCost = MAX_COST;
      if (inside) {
        const mean = sws / weightSum;
        const variance = swss / weightSum - mean * mean;
        if (variance > 1e-5) {
          const ncc = srs / weightSum / Math.sqrt(refVariance * variance);
          viewCost = 1 - Math.max(-1, Math.min(1, ncc));
        }
      }
      if (input.geometric) viewCost += params.geometricWeight * Math.min(params.geometricMaxError, forwardBackwardError(s, ref, x, y, X0, Y0, Z0));
      viewCosts[v] = viewCost;
    }
    return meanOfBest(viewCosts, bestViews);
  };

  const randomNormal = (x: number, y: number, out: Float64Array) => {
    // uniform on the sphere, then turned to face the camera (negative dot with the viewing ray)
    const z = 2 * random() - 1;
    const a = 2 * Math.PI * random();
    const r = Math.sqrt(1 - z * z);
    let nx = r * Math.cos(a), ny = r * Math.sin(a), nz = z;
    if (nx * (x - cx) / fx + ny * (y - cy) / fy + nz > 0) {
      nx = -nx;
      ny = -ny;
      nz = -nz;
    }
    out[0] = nx;
    out[1] = ny;
    out[2] = nz;
  };
  const scratch = new Float64Array(3);

  // Initialisation: the previous pass's planes, or random ones with the sparse points as seeds.
  if (input.initial) {
    depth.set(input.initial.depth);
    normal.set(input.initial.normal);
  } else {
    for (let p = 0; p < n; p++) {
      depth[p] = minDepth + random() * (maxDepth - minDepth);
      randomNormal(p % width, (p / width) | 0, scratch);
      normal.set(scratch, 3 * p);
    }
    for (let k = 0; k + 2 < input.seeds.length; k += 3) {
      const x = Math.round(input.seeds[k]);
      const y = Math.round(input.seeds[k + 1]);
      if (x < 0 || y < 0 || x >= width || y >= height) continue;
      const p = y * width + x;
      depth[p] = input.seeds[k + 2];
      // fronto-parallel to the viewing ray
      const rx = (x - cx) / fx, ry = (y - cy) / fy;
      const len = Math.hypot(rx, ry, 1);
      normal[3 * p] = -rx / len;
      normal[3 * p + 1] = -ry / len;
      normal[3 * p + 2] = -1 / len;
    }
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      if (prepareRef(x, y)) cost[p] = evaluate(x, y, depth[p], normal[3 * p], normal[3 * p + 1], normal[3 * p + 2]);
    }
  }

  const neighbours = [-1, 0, 1, 0, 0, -1, 0, 1, -5, 0, 5, 0, 0, -5, 0, 5];
  const candidateCosts = new Float64Array(PROPAGATED);
  const candidatePixels = new Int32Array(PROPAGATED);
  const tryPlane = (p: number, x: number, y: number, d: number, nx: number, ny: number, nz: number) => {
    if (!(d >= minDepth * 0.5 && d <= maxDepth * 2)) return;
    // a neighbour that already holds this pixel's plane (converged regions) costs nothing to skip
    if (d === depth[p] && nx === normal[3 * p] && ny === normal[3 * p + 1] && nz === normal[3 * p + 2]) return;
    const c = evaluate(x, y, d, nx, ny, nz);
    if (c < cost[p]) {
      cost[p] = c;
      depth[p] = d;
      normal[3 * p] = nx;
      normal[3 * p + 1] = ny;
      normal[3 * p + 2] = nz;
    }
  };

  for (let iteration = 0; iteration < params.iterations; iteration++) {
    const perturbation = 0.5 ** (iteration + 1);
    for (let colour = 0; colour < 2; colour++) {
      for (let y = 0; y < height; y++) {
        for (let x = (y + colour) % 2; x < width; x += 2) {
          if (!prepareRef(x, y)) continue;
          const p = y * width + x;
          const rx = (x - cx) / fx;
          const ry = (y - cy) / fy;
          // propagation: the planes of the PROPAGATED neighbours with the lowest costs (of the 8),
          // each met by this pixel's ray (ACMH's cheap pick: their own costs rank them)
          let picked = 0;
          for (let k = 0; k < neighbours.length; k += 2) {
            const qx = x + neighbours[k];
            const qy = y + neighbours[k + 1];
            if (qx < 0 || qy < 0 || qx >= width || qy >= height) continue;
            const q = qy * width + qx;
            const c = cost[q];
            let slot = Math.min(picked, PROPAGATED);
            while (slot > 0 && candidateCosts[slot - 1] > c) {
              if (slot < PROPAGATED) {
                candidateCosts[slot] = candidateCosts[slot - 1];
                candidatePixels[slot] = candidatePixels[slot - 1];
              }
              slot--;
            }
            if (slot < PROPAGATED) {
              candidateCosts[slot] = c;
              candidatePixels[slot] = q;
            }
            picked++;
          }
          for (let k = 0; k < Math.min(picked, PROPAGATED); k++) {
            const q = candidatePixels[k];
            const qx = q % width;
            const qy = (q - qx) / width;
            const nx = normal[3 * q], ny = normal[3 * q + 1], nz = normal[3 * q + 2];
            const c = depth[q] * (nx * (qx - cx) / fx + ny * (qy - cy) / fy + nz);
            const denominator = nx * rx + ny * ry + nz;
            if (Math.abs(denominator) < 1e-6) continue;
            tryPlane(p, x, y, c / denominator, nx, ny, nz);
          }
          // refinement
          const d = depth[p];
          const nx = normal[3 * p], ny = normal[3 * p + 1], nz = normal[3 * p + 2];
          randomNormal(x, y, scratch);
          tryPlane(p, x, y, minDepth + random() * (maxDepth - minDepth), scratch[0], scratch[1], scratch[2]);
          const perturbedDepth = d * (1 + perturbation * 0.2 * (2 * random() - 1));
          tryPlane(p, x, y, perturbedDepth, nx, ny, nz);
          perturbNormal(nx, ny, nz, perturbation, random, scratch);
          if (scratch[0] * rx + scratch[1] * ry + scratch[2] < 0) {
            tryPlane(p, x, y, d, scratch[0], scratch[1], scratch[2]);
            tryPlane(p, x, y, perturbedDepth, scratch[0], scratch[1], scratch[2]);
          }
        }
      }
    }
  }

  if (input.filter) filterDepths(input, sources, depth, normal, cost);
  return { depth, normal, cost };
}

/**
 * The view at half size: 2x2 box-filtered grey, intrinsics for the new pixel grid (half-size pixel
 * j covers full pixels 2j and 2j+1, centred at 2j + 0.5). `withGray` false: the geometry only.
 */
function halfView(view: PatchMatchView, withGray = true): PatchMatchView {
  const width = view.width >> 1;
  const height = view.height >> 1;
  const gray = new Float32Array(withGray ? width * height : 0);
  if (withGray) {
    const g = view.gray;
    const w = view.width;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const o = 2 * y * w + 2 * x;
        gray[y * width + x] = 0.25 * (g[o] + g[o + 1] + g[o + w] + g[o + w + 1]);
      }
    }
  }
  return { gray, width, height, fx: view.fx / 2, fy: view.fy / 2, cx: (view.cx - 0.5) / 2, cy: (view.cy - 0.5) / 2, R: view.R, t: view.t };
}

/** The coarse planes carried to the fine pixels: each fine pixel's ray meets its nearest coarse pixel's plane. */
function upsamplePlanes(coarse: PatchMatchOutput, from: PatchMatchView, to: PatchMatchView): { depth: Float32Array; normal: Float32Array } {
  const depth = new Float32Array(to.width * to.height);
  const normal = new Float32Array(3 * to.width * to.height);
  for (let y = 0; y < to.height; y++) {
    const qy = Math.min(from.height - 1, Math.max(0, Math.round((y - 0.5) / 2)));
    for (let x = 0; x < to.width; x++) {
      const qx = Math.min(from.width - 1, Math.max(0, Math.round((x - 0.5) / 2)));
      const q = qy * from.width + qx;
      const p = y * to.width + x;
      const nx = coarse.normal[3 * q], ny = coarse.normal[3 * q + 1], nz = coarse.normal[3 * q + 2];
      const c = coarse.depth[q] * (nx * (qx - from.cx) / from.fx + ny * (qy - from.cy) / from.fy + nz);
      const denominator = nx * (x - to.cx) / to.fx + ny * (y - to.cy) / to.fy + nz;
      const d = Math.abs(denominator) > 1e-6 ? c / denominator : coarse.depth[q];
      depth[p] = d > 0 ? d : coarse.depth[q];
      normal[3 * p] = nx;
      normal[3 * p + 1] = ny;
      normal[3 * p + 2] = nz;
    }
  }
  return { depth, normal };
}

/** Mean of the k smallest values (a few views: partial selection in place). */
function meanOfBest(values: Float64Array, k: number): number {
  let sum = 0;
  for (let i = 0; i < k; i++) {
    let min = i;
    for (let j = i + 1; j < values.length; j++) if (values[j] < values[min]) min = j;
    const v = values[min];
    values[min] = values[i];
    values[i] = v;
    sum += v;
  }
  return sum / k;
}

/** The normal turned by up to `amount` * 0.5 rad about a random axis, renormalised. */
function perturbNormal(nx: number, ny: number, nz: number, amount: number, random: () => number, out: Float64Array): void {
  const scale = amount * 0.5;
  const px = nx + scale * (2 * random() - 1);
  const py = ny + scale * (2 * random() - 1);
  const pz = nz + scale * (2 * random() - 1);
  const len = Math.hypot(px, py, pz);
  out[0] = px / len;
  out[1] = py / len;
  out[2] = pz / len;
}

/**
 * COLMAP's filter (patch_match.cc options filter_*): a pixel keeps its depth when its cost is at
 * most filterMaxCost and at least filterMinConsistent source views agree with it (forward-backward
 * reprojection error within filterMaxReprojError through their depth maps, triangulation angle at
 * least filterMinAngle). The others get depth 0 and a zero normal, which fusion skips.
 */
function filterDepths(input: PatchMatchInput, sources: SourceGeometry[], depth: Float32Array, normal: Float32Array, cost: Float32Array): void {
  const { ref, params } = input;
  const { width, height, fx, fy, cx, cy } = ref;
  const minCosAngle = Math.cos((params.filterMinAngle * Math.PI) / 180);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      const d = depth[p];
      let keep = cost[p] <= params.filterMaxCost && d > 0;
      if (keep && sources.some((s) => s.view.depth)) {
        const X = (d * (x - cx)) / fx, Y = (d * (y - cy)) / fy, Z = d;
        let consistent = 0;
        for (const s of sources) {
          const ax = X - s.center[0], ay = Y - s.center[1], az = Z - s.center[2];
          const cosAngle = (X * ax + Y * ay + Z * az) / (Math.hypot(X, Y, Z) * Math.hypot(ax, ay, az));
          if (cosAngle > minCosAngle) continue;
          if (forwardBackwardError(s, ref, x, y, X, Y, Z) <= params.filterMaxReprojError) consistent++;
        }
        keep = consistent >= params.filterMinConsistent;
      }
      if (!keep) {
        depth[p] = 0;
        normal[3 * p] = normal[3 * p + 1] = normal[3 * p + 2] = 0;
      }
    }
  }
}

/** Forward-backward error (pixels) of the reference point (X, Y, Z) through the source's depth map. */
function forwardBackwardError(s: SourceGeometry, ref: PatchMatchView, x: number, y: number, X: number, Y: number, Z: number): number {
  const sv = s.view;
  const sd = sv.depth;
  if (!sd) return Infinity;
  const R = s.Rrs;
  const t = s.trs;
  const xs = R[0] * X + R[1] * Y + R[2] * Z + t[0];
  const ys = R[3] * X + R[4] * Y + R[5] * Z + t[1];
  const zs = R[6] * X + R[7] * Y + R[8] * Z + t[2];
  if (zs <= 0) return Infinity;
  const u = Math.round((sv.fx * xs) / zs + sv.cx);
  const w = Math.round((sv.fy * ys) / zs + sv.cy);
  if (u < 0 || w < 0 || u >= sv.width || w >= sv.height) return Infinity;
  const ds = sd[w * sv.width + u];
  if (!(ds > 0)) return Infinity;
  const bx = (ds * (u - sv.cx)) / sv.fx - t[0];
  const by = (ds * (w - sv.cy)) / sv.fy - t[1];
  const bz = ds - t[2];
  const rxw = R[0] * bx + R[3] * by + R[6] * bz;
  const ryw = R[1] * bx + R[4] * by + R[7] * bz;
  const rzw = R[2] * bx + R[5] * by + R[8] * bz;
  if (rzw <= 0) return Infinity;
  return Math.hypot((ref.fx * rxw) / rzw + ref.cx - x, (ref.fy * ryw) / rzw + ref.cy - y);
}
