// Incremental checksums for the algorithms S3 clients send (x-amz-checksum-*) plus MD5 for ETags.
// Everything is computed while bytes stream past, so nothing needs the whole body in memory.
// Values are reported the way S3 puts them in headers: base64 of the big-endian digest.
import { createHash, type Hash } from 'node:crypto';
import { crc32, crc32c } from '@node-rs/crc32';

export type ChecksumAlgorithm = 'crc32' | 'crc32c' | 'crc64nvme' | 'sha1' | 'sha256';
export const CHECKSUM_ALGORITHMS: readonly ChecksumAlgorithm[] = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'];

export interface IncrementalChecksum {
  update(chunk: Uint8Array): void;
  /** Base64 of the digest, as in the x-amz-checksum-* headers. */
  digestBase64(): string;
}

export function isChecksumAlgorithm(name: string): name is ChecksumAlgorithm {
  return (CHECKSUM_ALGORITHMS as readonly string[]).includes(name);
}

export function createChecksum(algorithm: ChecksumAlgorithm): IncrementalChecksum {
  switch (algorithm) {
    case 'crc32':
      return new Crc32();
    case 'crc32c':
      return new Crc32c();
    case 'crc64nvme':
      return new Crc64Nvme();
    case 'sha1':
      return new NodeHash(createHash('sha1'));
    case 'sha256':
      return new NodeHash(createHash('sha256'));
  }
}

class NodeHash implements IncrementalChecksum {
  constructor(private readonly hash: Hash) {}
  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
  }
  digestBase64(): string {
    return this.hash.digest('base64');
  }
}

function uint32Base64(value: number): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return out.toString('base64');
}

// CRC-32 and CRC-32C with @node-rs/crc32 (Rust's crc32fast and crc32c, carry-less multiply):
// CRC-32 of 64 KiB chunks at ~4.2 GB/s against ~1.7 GB/s with node:zlib's crc32, measured here.
// The SDKs send a CRC-32 with every PutObject by default, so the upload server computes one per
// body beside the payload SHA-256: zlib's was ~10 % of its busy time in the upload benchmark
// (bench/README.md, "Session 16"). CRC-32C was a byte-wise table in JavaScript (~0.3 GB/s).

/** CRC-32 (IEEE). */
export class Crc32 implements IncrementalChecksum {
  private value = 0;
  update(chunk: Uint8Array): void {
    this.value = crc32(chunk, this.value);
  }
  digest(): number {
    return this.value >>> 0;
  }
  digestBase64(): string {
    return uint32Base64(this.value);
  }
}

/** CRC-32C (Castagnoli). */
export class Crc32c implements IncrementalChecksum {
  private value = 0;
  update(chunk: Uint8Array): void {
    this.value = crc32c(chunk, this.value);
  }
  digestBase64(): string {
    return uint32Base64(this.value);
  }
}

// CRC-64/NVME (reflected polynomial 0x9A6C9329AC4BC9B5, init and xorout all ones), kept as two
// 32-bit halves so the inner loop avoids BigInt.
const CRC64_TABLE_HI = new Uint32Array(256);
const CRC64_TABLE_LO = new Uint32Array(256);
(() => {
  const polyHi = 0x9a6c9329;
  const polyLo = 0xac4bc9b5;
  for (let n = 0; n < 256; n++) {
    let hi = 0;
    let lo = n;
    for (let k = 0; k < 8; k++) {
      const lsb = lo & 1;
      lo = ((lo >>> 1) | ((hi & 1) << 31)) >>> 0;
      hi = hi >>> 1;
      if (lsb) {
        hi = (hi ^ polyHi) >>> 0;
        lo = (lo ^ polyLo) >>> 0;
      }
    }
    CRC64_TABLE_HI[n] = hi;
    CRC64_TABLE_LO[n] = lo;
  }
})();

export class Crc64Nvme implements IncrementalChecksum {
  private hi = 0xffffffff;
  private lo = 0xffffffff;
  update(chunk: Uint8Array): void {
    let hi = this.hi;
    let lo = this.lo;
    for (let i = 0; i < chunk.length; i++) {
      const idx = (lo ^ chunk[i]) & 0xff;
      // crc = (crc >>> 8) ^ table[idx], across the two halves.
      lo = (((lo >>> 8) | (hi << 24)) ^ CRC64_TABLE_LO[idx]) >>> 0;
      hi = ((hi >>> 8) ^ CRC64_TABLE_HI[idx]) >>> 0;
    }
    this.hi = hi;
    this.lo = lo;
  }
  digestBase64(): string {
    const out = Buffer.alloc(8);
    out.writeUInt32BE(~this.hi >>> 0, 0);
    out.writeUInt32BE(~this.lo >>> 0, 4);
    return out.toString('base64');
  }
}
