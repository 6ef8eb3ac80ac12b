// COLMAP's dense matrices (depth maps, normal maps: src/mvs/mat.h, Mat<float>::Read/Write): a text
// header `width&height&channels&` followed by float32 little-endian values in COLMAP's order, which
// is planar: value (row, col, channel) sits at channel * width * height + row * width + col. Here a
// matrix is row-major with its channels interleaved (pixel (row, col) channel c at
// (row * width + col) * channels + c), the order every caller in this project indexes by; the
// conversion happens only in these two functions. The orthomosaic reads depth maps through
// readColmapMat for occlusion, PatchMatch writes its maps through writeColmapMat.
import fs from 'node:fs/promises';

export interface ColmapMat {
  width: number;
  height: number;
  channels: number;
  /** Row-major, channels interleaved: length width * height * channels. */
  data: Float32Array;
}

const HEADER = /^(\d+)&(\d+)&(\d+)&/;

export async function readColmapMat(filePath: string): Promise<ColmapMat> {
  const bytes = await fs.readFile(filePath);
  const head = HEADER.exec(bytes.toString('latin1', 0, Math.min(bytes.length, 64)));
  if (!head) throw new Error(`${filePath} is not a COLMAP matrix (no width&height&channels& header)`);
  const width = Number(head[1]);
  const height = Number(head[2]);
  const channels = Number(head[3]);
  const count = width * height * channels;
  const start = head[0].length;
  if (count === 0 || bytes.length - start !== 4 * count) {
    throw new Error(`${filePath}: a ${width}x${height}x${channels} matrix needs ${4 * count} bytes of data, the file has ${bytes.length - start}`);
  }
  const planar = new Float32Array(count);
  for (let i = 0; i < count; i++) planar[i] = bytes.readFloatLE(start + 4 * i);
  const plane = width * height;
  if (channels === 1) return { width, height, channels, data: planar };
  const data = new Float32Array(count);
  for (let c = 0; c < channels; c++) for (let p = 0; p < plane; p++) data[p * channels + c] = planar[c * plane + p];
  return { width, height, channels, data };
}

export async function writeColmapMat(filePath: string, mat: ColmapMat): Promise<void> {
  const { width, height, channels, data } = mat;
  const plane = width * height;
  if (data.length !== plane * channels) throw new Error(`a ${width}x${height}x${channels} matrix needs ${plane * channels} values, got ${data.length}`);
  const header = Buffer.from(`${width}&${height}&${channels}&`, 'latin1');
  const body = Buffer.alloc(4 * data.length);
  for (let c = 0; c < channels; c++) for (let p = 0; p < plane; p++) body.writeFloatLE(data[p * channels + c], 4 * (c * plane + p));
  await fs.writeFile(filePath, Buffer.concat([header, body]));
}
