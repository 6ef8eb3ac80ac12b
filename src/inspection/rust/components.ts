// Connected components (8-connectivity) of a one-byte mask, with each component's bounding box
// and pixel count. A flood fill with an explicit stack (no recursion: a component may have
// hundreds of thousands of pixels).

export interface Component {
  /** Pixels, right and bottom exclusive. */
  left: number;
  top: number;
  right: number;
  bottom: number;
  /** Pixels of the component. */
  area: number;
  /** The component's pixels, as indexes y * width + x (for measures over the original mask). */
  pixels: Int32Array;
}

export function connectedComponents(mask: Uint8Array, width: number, height: number): Component[] {
  const seen = new Uint8Array(mask.length);
  const stack = new Int32Array(mask.length);
  const components: Component[] = [];
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || seen[start]) continue;
    let top = 0;
    let count = 0;
    const members: number[] = [];
    stack[top++] = start;
    seen[start] = 1;
    let left = width;
    let right = 0;
    let up = height;
    let down = 0;
    while (top > 0) {
      const i = stack[--top];
      members.push(i);
      count++;
      const x = i % width;
      const y = (i - x) / width;
      if (x < left) left = x;
      if (x > right) right = x;
      if (y < up) up = y;
      if (y > down) down = y;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          if (nx < 0 || nx >= width) continue;
          const j = ny * width + nx;
          if (mask[j] && !seen[j]) {
            seen[j] = 1;
            stack[top++] = j;
          }
        }
      }
    }
    components.push({ left, top: up, right: right + 1, bottom: down + 1, area: count, pixels: Int32Array.from(members) });
  }
  return components;
}
