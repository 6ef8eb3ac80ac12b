// Long adversarial inputs for the regular expressions that run on what clients send (uploaded
// files, EXIF strings, headers, request bodies), one case per pattern, for
// test/hostile-inputs-regex.test.ts. Each case runs in a worker thread of its own (this file is
// also the worker's entry), so that a pattern gone quadratic again is stopped at the test's bound
// instead of freezing the test process for minutes. The sizes are chosen so that the patterns
// these cases were written against took a minute or more on them (per case: the time measured
// on a smaller input, and what the quadratic growth makes of it, on this 2-core machine under
// other work), where the code now takes milliseconds.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';

export interface HostileCase {
  /** Where the pattern lives and what the input is. */
  what: string;
  /** Runs the code under test on the input; returns something to check it really ran. */
  run(): Promise<unknown> | unknown;
  /** What the result must be (as JSON), proving the input was parsed rather than skipped. */
  expect?: unknown;
}

const K = 1024;

export const HOSTILE_CASES: Record<string, HostileCase> = {
  'srt-digit-run': {
    what: 'srt-telemetry.ts cue time: a .SRT of 250,000 "1" (finding 1: 78 s in the review; 422 s here under load)',
    run: async () => (await import('../../src/inspection/video/srt-telemetry.ts')).parseDjiSrt('1'.repeat(250_000)).length,
    expect: 0,
  },
  'srt-digit-run-streamed': {
    what: 'srt-telemetry.ts through the streaming reader: 400,000 "1" in 64 KB chunks (as one text before: 2.56 times the above)',
    run: async () => {
      const { readDjiSrt } = await import('../../src/inspection/video/srt-telemetry.ts');
      const text = Buffer.from('1'.repeat(400_000));
      const reading = await readDjiSrt(Readable.from(chunks(text, 64 * K)));
      return [reading.samples.length, reading.overlongLines, reading.refusal];
    },
    expect: [0, 1, null],
  },
  'srt-near-misses': {
    what: 'srt-telemetry.ts field, GPS() and clock patterns: cues whose lines are long near-misses of each (linear before too)',
    run: async () => {
      const { parseDjiSrt } = await import('../../src/inspection/video/srt-telemetry.ts');
      // Six 2,500-character lines: the cue stays within its 16 KB, the position line last.
      const lines = [`latitude:${' '.repeat(2500)}`, `GPS(${'1'.repeat(2500)}`, `GPS(1,${' '.repeat(2500)}`, `2024-01-01${' '.repeat(2500)}`, '0:'.repeat(1250), `${'1'.repeat(20)}:00:00,000${' '.repeat(2500)}`];
      const cue = (i: number) => `${i}\n00:00:${String(i % 60).padStart(2, '0')},000 --> 00:00:01,000\n${lines.join('\n')}\n[latitude: 55.1] [longitude: 13.1]`;
      return parseDjiSrt(Array.from({ length: 200 }, (_, i) => cue(i)).join('\n\n')).length;
    },
    expect: 200,
  },
  'iso6709-long': {
    what: 'iso6709.ts: ISO 6709 places of 200,000 characters (a container tag; linear before too)',
    run: async () => {
      const { parseIso6709 } = await import('../../src/inspection/video/iso6709.ts');
      return [`+${'1'.repeat(200_000)}x`, `+1+1${'CRS'.repeat(70_000)}x`, `+1+1+1${' '.repeat(200_000)}x`].map(parseIso6709);
    },
    expect: [null, null, null],
  },
  'exif-nul-run': {
    what: 'image-metadata/metadata.ts text(): an EXIF string of 256 K NULs and a letter (0.47 s at 16 K; 637 s here under load)',
    run: async () => (await import('../../src/shared/image-metadata/metadata.ts')).text(`${'\0'.repeat(256 * K)}x`)?.length,
    expect: 256 * K + 1,
  },
  'oauth-basic-spaces': {
    what: 'cloud/auth/oauth-errors.ts: Authorization "Basic" + 256 K spaces + "x y" (0.37 s at 16 K: ~95 s)',
    run: async () => {
      const { basicClientCredentials } = await import('../../src/cloud/auth/oauth-errors.ts');
      return basicClientCredentials(`Basic${' '.repeat(256 * K)}x y`) === undefined ? 'not Basic credentials' : 'read as credentials';
    },
    expect: 'not Basic credentials', // as before: ignored
  },
  'xml-open-tags-without-end': {
    what: 's3-xml.ts CompleteMultipartUpload: 1 MB of "<Part " without ">" (36 ms at 16 K: ~2.5 minutes)',
    run: async () => parts(`<CompleteMultipartUpload>${'<Part '.repeat((1024 * K) / 6)}`),
    expect: 0,
  },
  'xml-elements-without-close': {
    what: 's3-xml.ts CompleteMultipartUpload: 2 MB of "<Part>" never closed (7 ms at 16 K: ~2 minutes)',
    run: async () => parts(`<CompleteMultipartUpload>${'<Part>'.repeat((2048 * K) / 6)}`),
    expect: 0,
  },
  'xml-delete-objects-without-close': {
    what: 's3-xml.ts DeleteObjects: 2 MB of "<Object>" never closed (54 ms at 16 K under load: ~15 minutes)',
    run: async () => {
      const { parseDeleteObjects } = await import('../../src/infra/storage/s3-xml.ts');
      return parseDeleteObjects(`<Delete>${'<Object>'.repeat((2048 * K) / 8)}</Delete>`).keys.length;
    },
    expect: 0,
  },
  'xml-still-parses': {
    what: 's3-xml.ts: a well-formed CompleteMultipartUpload with namespaces and attributes still reads',
    run: async () => {
      const { parseCompleteMultipartUpload } = await import('../../src/infra/storage/s3-xml.ts');
      const part = (n: number) => `<s3:Part attr="1"><s3:PartNumber>${n}</s3:PartNumber><s3:ETag>&quot;e${n}&quot;</s3:ETag></s3:Part>`;
      return parseCompleteMultipartUpload(`<s3:CompleteMultipartUpload xmlns:s3="x">${part(1)}\n${part(2)}</s3:CompleteMultipartUpload>`);
    },
    expect: [
      { partNumber: 1, etag: '"e1"' },
      { partNumber: 2, etag: '"e2"' },
    ],
  },
  'host-header-slashes': {
    what: 'http/http-edge.ts requestPublicUrl: a Host of 256 K slashes and a letter, without a configured public URL (0.26 s at 16 K: ~66 s)',
    run: async () => {
      const { requestPublicUrl } = await import('../../src/infra/http/http-edge.ts');
      const request = { server: {}, protocol: 'http', host: `a${'/'.repeat(256 * K)}x`, url: '/v1/' };
      return requestPublicUrl(request as never).length;
    },
    expect: 'http://a'.length + 256 * K + 'x/v1/'.length,
  },
  'ffmpeg-showinfo-line': {
    what: 'video/ffmpeg.ts showinfo pattern: a 1 MB stderr line of "Parsed_showinfo n: " (0.34 s at 16 K under load: ~20 minutes; ffmpeg itself cuts metadata lines at 255 characters)',
    run: async () => {
      const { extractFrames, VideoExtractionError } = await import('../../src/inspection/video/ffmpeg.ts');
      const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-showinfo-'));
      try {
        const standIn = path.join(folder, 'ffmpeg');
        fs.writeFileSync(path.join(folder, 'line.txt'), `${'Parsed_showinfo n: '.repeat((1024 * K) / 19)}\n`);
        fs.writeFileSync(standIn, `#!/bin/sh\ncat '${path.join(folder, 'line.txt')}' >&2\nexit 0\n`, { mode: 0o755 });
        const probe = { container: 'mov', duration: 1, startTime: 0, width: 320, height: 240, location: null, creationTime: null };
        await extractFrames(standIn, path.join(folder, 'video-0.mp4'), 'a.mp4', path.join(folder, 'frames'), { num: 1, den: 1 }, probe, 60_000);
        return 'frames';
      } catch (err) {
        return err instanceof VideoExtractionError ? 'no frames' : String(err);
      } finally {
        fs.rmSync(folder, { recursive: true, force: true });
      }
    },
    expect: 'no frames',
  },
};

async function parts(xml: string): Promise<number> {
  const { parseCompleteMultipartUpload } = await import('../../src/infra/storage/s3-xml.ts');
  return parseCompleteMultipartUpload(xml).length;
}

function* chunks(buffer: Buffer, size: number): Generator<Buffer> {
  for (let offset = 0; offset < buffer.length; offset += size) yield buffer.subarray(offset, offset + size);
}

// As a worker: run the case named in workerData and report its time and result.
if (!isMainThread && (workerData as { hostileCase?: string } | null)?.hostileCase) {
  const name = (workerData as { hostileCase: string }).hostileCase;
  const started = performance.now();
  Promise.resolve(HOSTILE_CASES[name].run()).then(
    (result) => parentPort!.postMessage({ ms: performance.now() - started, result }),
    (err: Error) => parentPort!.postMessage({ ms: performance.now() - started, error: err.stack ?? String(err) }),
  );
}
