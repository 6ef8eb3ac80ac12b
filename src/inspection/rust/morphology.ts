// Binary morphology on one-byte-per-pixel masks, with a square structuring element of side
// 2 * radius + 1. Erosion and dilation are separable for a square: a horizontal then a vertical
// pass, each counting the set pixels in a sliding window, so the cost does not grow with the radius.
// Pixels outside the image count as unset (erosion shrinks regions touching the border, as a
// rust patch cut by the photo's edge is still cut there).

/** Dilation: set where any pixel of the square around is set. */
export function dilate(mask: Uint8Array, width: number, height: number, radius: number): Uint8Array {
  return slide(slide(mask, width, height, radius, 1, true), width, height, radius, width, true);
}

/** Erosion: set where every pixel of the square around is set. */
export function erode(mask: Uint8Array, width: number, height: number, radius: number): Uint8Array {
  return slide(slide(mask, width, height, radius, 1, false), width, height, radius, width, false);
}

/** Opening (erosion then dilation): removes specks and threads thinner than the square. */
export function open(mask: Uint8Array, width: number, height: number, radius: number): Uint8Array {
  return radius > 0 ? dilate(erode(mask, width, height, radius), width, height, radius) : mask;
}

/** Closing (dilation then erosion): fills pits and gaps narrower than the square, joins close spots. */
export function close(mask: Uint8Array, width: number, height: number, radius: number): Uint8Array {
  return radius > 0 ? erode(dilate(mask, width, height, radius), width, height, radius) : mask;
}

/**
 * One pass along rows (`step` 1) or columns (`step` width): each pixel becomes "any set" (dilation)
 * or "all set" (erosion) over the 2 * radius + 1 pixels of its line around it.
 */
function slide(mask: Uint8Array, width: number, height: number, radius: number, step: number, any: boolean): Uint8Array {
  const out = new Uint8Array(mask.length);
  const lines = step === 1 ? height : width;
  const length = step === 1 ? width : height;
  const lineStep = step === 1 ? width : 1;
  const window = 2 * radius + 1;
  for (let line = 0; line < lines; line++) {
    const base = line * lineStep;
    let count = 0;
    for (let k = 0; k < Math.min(radius, length); k++) count += mask[base + k * step];
    for (let k = 0; k < length; k++) {
      const enter = k + radius;
      const leave = k - radius - 1;
      if (enter < length) count += mask[base + enter * step];
      if (leave >= 0) count -= mask[base + leave * step];
      out[base + k * step] = any ? (count > 0 ? 1 : 0) : count === window ? 1 : 0;
    }
  }
  return out;
}
