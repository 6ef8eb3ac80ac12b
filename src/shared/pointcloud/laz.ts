// LAZ (compressed LAS) reading, with laz-perf (the LASzip decoder compiled to WebAssembly, as
// PDAL's and Potree's web tools use it). NodeODM nodes deliver their point cloud as LAZ; clipping
// and coords_3d read it through `readPointCloudFile`, which takes either.
//
// The points are decompressed into an uncompressed LAS file image (the same header and records,
// the compression bit cleared) and parsed by readLas: one parser for both.
import { LasFormatError, readLas, type LasFile } from './las.ts';

type LazPerfModule = Awaited<ReturnType<(typeof import('laz-perf'))['createLazPerf']>>;
let lazPerf: Promise<LazPerfModule> | undefined;

/** Whether a LAS/LAZ file image holds compressed points (bit 7 of the point data format). */
export function isLaz(data: Buffer): boolean {
  return data.length > 104 && data.toString('ascii', 0, 4) === 'LASF' && (data.readUInt8(104) & 0x80) !== 0;
}

/** A LAS or LAZ file image, parsed. */
export async function readPointCloudFile(data: Buffer): Promise<LasFile> {
  return readLas(isLaz(data) ? await decompressLaz(data) : data);
}

/** The uncompressed LAS file image of a LAZ file image. */
export async function decompressLaz(data: Buffer): Promise<Buffer> {
  lazPerf ??= import('laz-perf').then((m) => m.createLazPerf());
  const LazPerf = await lazPerf;
  const pointOffset = data.readUInt32LE(96);
  const recordLength = data.readUInt16LE(105);
  const filePtr = LazPerf._malloc(data.length);
  const pointPtr = LazPerf._malloc(recordLength);
  const reader = new LazPerf.LASZip();
  try {
    LazPerf.HEAPU8.set(data, filePtr);
    try {
      reader.open(filePtr, data.length);
    } catch (err) {
      throw new LasFormatError(`not a readable LAZ file (${err instanceof Error ? err.message : String(err)})`);
    }
    const count = reader.getCount();
    if (reader.getPointLength() !== recordLength) throw new LasFormatError(`LAZ point length ${reader.getPointLength()} differs from the header's ${recordLength}`);
    const out = Buffer.alloc(pointOffset + count * recordLength);
    data.copy(out, 0, 0, pointOffset);
    out.writeUInt8(out.readUInt8(104) & 0x3f, 104); // compression bits cleared
    for (let i = 0; i < count; i++) {
      reader.getPoint(pointPtr);
      out.set(LazPerf.HEAPU8.subarray(pointPtr, pointPtr + recordLength), pointOffset + i * recordLength);
    }
    return out;
  } finally {
    reader.delete();
    LazPerf._free(pointPtr);
    LazPerf._free(filePtr);
  }
}
