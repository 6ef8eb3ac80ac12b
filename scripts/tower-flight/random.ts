// The generator's one source of randomness: a seeded PRNG (sfc32 from a splitmix32-expanded seed),
// so a seed gives the same scene, flight and noise on every machine. Each part of the generator
// takes its own stream (`forkRandom(seed, 'flight')`) so adding a draw to one part does not move
// the others' numbers.

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [min, max). */
  between(min: number, max: number): number;
  /** An integer in [min, max], both included. */
  integer(min: number, max: number): number;
  /** Standard normal (Box-Muller). */
  gaussian(): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** True with probability p. */
  chance(p: number): boolean;
}

function splitmix32(state: number): () => number {
  return () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function hashString(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function createRandom(seed: number): Random {
  const init = splitmix32(seed >>> 0);
  let a = init(), b = init(), c = init(), d = init();
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  let spare: number | undefined;
  const random: Random = {
    next,
    between: (min, max) => min + (max - min) * next(),
    integer: (min, max) => min + Math.floor(next() * (max - min + 1)),
    gaussian: () => {
      if (spare !== undefined) {
        const value = spare;
        spare = undefined;
        return value;
      }
      const u = Math.max(next(), 1e-12);
      const v = next();
      const r = Math.sqrt(-2 * Math.log(u));
      spare = r * Math.sin(2 * Math.PI * v);
      return r * Math.cos(2 * Math.PI * v);
    },
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
  };
  return random;
}

/** An independent stream for one part of the generator, derived from the scene's seed and a name. */
export function forkRandom(seed: number, stream: string): Random {
  return createRandom((seed ^ hashString(stream)) >>> 0);
}
