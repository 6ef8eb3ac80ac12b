// Reads the inputs of an inspection the way any client would: through the S3 API, with the
// temporary credentials the cloud hands out for the inspection's project.
import { GetObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { CloudStorageCredentials } from '../cloud-client/cloud-client.ts';
import type { ReadRange } from '../../shared/image-metadata/index.ts';

export interface RangedObject {
  size: number;
  readRange: ReadRange;
}

export class StorageReader {
  private readonly client: S3Client;

  constructor(private readonly credentials: CloudStorageCredentials) {
    this.client = new S3Client({
      region: credentials.region,
      endpoint: credentials.endpoint_override || undefined,
      forcePathStyle: Boolean(credentials.endpoint_override),
      credentials: { accessKeyId: credentials.access_key, secretAccessKey: credentials.secret_key, sessionToken: credentials.session_token },
    });
  }

  /**
   * Fetches the first `headSize` bytes of an object (one request) and returns its size with a
   * reader that serves later ranges from that head when it can. undefined for an empty object.
   */
  async open(key: string, headSize: number): Promise<RangedObject | undefined> {
    const first = await this.get(key, 0, headSize);
    if (!first) return undefined;
    const head = first.bytes;
    return {
      size: first.size,
      readRange: async (start, end) => {
        if (end <= head.length) return head.subarray(start, end);
        return (await this.get(key, start, end - start))?.bytes ?? Buffer.alloc(0);
      },
    };
  }

  private async get(key: string, start: number, length: number): Promise<{ bytes: Buffer; size: number } | undefined> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.credentials.bucket, Key: key, Range: `bytes=${start}-${start + length - 1}` }),
      );
      const bytes = Buffer.from(await response.Body!.transformToByteArray());
      const total = /\/(\d+)$/.exec(response.ContentRange ?? '');
      return { bytes, size: total ? Number(total[1]) : bytes.length };
    } catch (err) {
      // An empty object has no byte 0: S3 answers 416 InvalidRange.
      if (err instanceof S3ServiceException && (err.name === 'InvalidRange' || err.$metadata.httpStatusCode === 416)) return undefined;
      throw err;
    }
  }

  close(): void {
    this.client.destroy();
  }
}
