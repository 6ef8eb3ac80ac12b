// One seeded pseudo-random generator for everything that must be reproducible: PatchMatch's
// random initialisation and refinement (a run can be repeated exactly), the fixture and demo
// image generators (the same files from the same seed), and the tests' fuzzing.
// Mulberry32: 32 bits of state, fast, and good enough for sampling; not for anything secret.

/** A generator of numbers in [0, 1) from `seed`: the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
