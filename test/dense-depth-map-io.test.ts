// The COLMAP matrix reader/writer: a round trip keeps every value, and the bytes on disk are in
// COLMAP's planar order (channel, row, column) behind its `width&height&channels&` header.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readColmapMat, writeColmapMat } from '../src/cloud/processing/dense/depth-map-io.ts';

test('writeColmapMat writes COLMAP planar order and readColmapMat reads it back interleaved', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dense-io-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const width = 3;
  const height = 2;
  const channels = 3;
  // value = 100 * channel + 10 * row + col
  const data = new Float32Array(width * height * channels);
  for (let row = 0; row < height; row++) for (let col = 0; col < width; col++) for (let c = 0; c < channels; c++) data[(row * width + col) * channels + c] = 100 * c + 10 * row + col + 0.5;
  const file = path.join(dir, 'n.bin');
  await writeColmapMat(file, { width, height, channels, data });

  const bytes = await fs.readFile(file);
  const header = '3&2&3&';
  assert.equal(bytes.toString('latin1', 0, header.length), header);
  assert.equal(bytes.length, header.length + 4 * data.length);
  // COLMAP's Mat::Get(row, col, slice) = data_[slice * w * h + row * w + col]
  const at = (row: number, col: number, c: number) => bytes.readFloatLE(header.length + 4 * (c * width * height + row * width + col));
  assert.equal(at(1, 2, 0), 12.5);
  assert.equal(at(0, 1, 2), 201.5);
  assert.equal(at(1, 0, 1), 110.5);

  const back = await readColmapMat(file);
  assert.deepEqual({ width: back.width, height: back.height, channels: back.channels }, { width, height, channels });
  assert.deepEqual(Array.from(back.data), Array.from(data));
});

test('readColmapMat rejects a file whose size does not match its header', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dense-io-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'd.bin');
  await fs.writeFile(file, Buffer.concat([Buffer.from('4&4&1&'), Buffer.alloc(4 * 15)]));
  await assert.rejects(readColmapMat(file), /needs 64 bytes/);
});
