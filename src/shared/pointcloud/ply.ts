// Binary little-endian PLY: `double x, y, z` (absolute coordinates survive) and `uchar red, green,
// blue` when the cloud has colours. Comments carry free text (e.g. the coordinate system's name).
import { createPointCloud, type PointCloud } from './point-cloud.ts';

export function writePly(cloud: PointCloud, comments: string[] = []): Buffer {
  const lines = ['ply', 'format binary_little_endian 1.0', ...comments.map((c) => `comment ${c.replace(/[\r\n]+/g, ' ')}`), `element vertex ${cloud.count}`, 'property double x', 'property double y', 'property double z'];
  if (cloud.colors) lines.push('property uchar red', 'property uchar green', 'property uchar blue');
  lines.push('end_header');
  const header = Buffer.from(`${lines.join('\n')}\n`, 'ascii');
  const record = 24 + (cloud.colors ? 3 : 0);
  const out = Buffer.alloc(header.length + cloud.count * record);
  header.copy(out, 0);
  for (let i = 0; i < cloud.count; i++) {
    const o = header.length + i * record;
    out.writeDoubleLE(cloud.positions[3 * i], o);
    out.writeDoubleLE(cloud.positions[3 * i + 1], o + 8);
    out.writeDoubleLE(cloud.positions[3 * i + 2], o + 16);
    if (cloud.colors) {
      out[o + 24] = cloud.colors[3 * i];
      out[o + 25] = cloud.colors[3 * i + 1];
      out[o + 26] = cloud.colors[3 * i + 2];
    }
  }
  return out;
}

/** Reads what writePly writes (binary little-endian, double or float x/y/z, optional uchar colours). */
export function readPly(data: Buffer): PointCloud {
  const end = data.indexOf('end_header\n');
  if (data.toString('ascii', 0, 3) !== 'ply' || end < 0) throw new Error('not a PLY file');
  const header = data.toString('ascii', 0, end).split('\n');
  if (!header.includes('format binary_little_endian 1.0')) throw new Error('only binary little-endian PLY is read');
  const count = Number(header.find((l) => l.startsWith('element vertex '))?.split(' ')[2] ?? NaN);
  const props = header.filter((l) => l.startsWith('property ')).map((l) => l.split(' '));
  const size: Record<string, number> = { double: 8, float: 4, uchar: 1, uint8: 1 };
  let stride = 0;
  const at: Record<string, { offset: number; type: string }> = {};
  for (const [, type, name] of props) {
    if (!(type in size)) throw new Error(`PLY property type ${type} is not read`);
    at[name] = { offset: stride, type };
    stride += size[type];
  }
  const colors = 'red' in at && 'green' in at && 'blue' in at;
  const cloud = createPointCloud(count, colors);
  const start = end + 'end_header\n'.length;
  const read = (o: number, p: { offset: number; type: string }) =>
    p.type === 'double' ? data.readDoubleLE(o + p.offset) : p.type === 'float' ? data.readFloatLE(o + p.offset) : data[o + p.offset];
  for (let i = 0; i < count; i++) {
    const o = start + i * stride;
    cloud.positions[3 * i] = read(o, at.x);
    cloud.positions[3 * i + 1] = read(o, at.y);
    cloud.positions[3 * i + 2] = read(o, at.z);
    if (colors) {
      cloud.colors![3 * i] = read(o, at.red);
      cloud.colors![3 * i + 1] = read(o, at.green);
      cloud.colors![3 * i + 2] = read(o, at.blue);
    }
  }
  return cloud;
}
