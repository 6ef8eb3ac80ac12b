// Credentials (stateless issue/resolve), SigV4 verification against AWS's published examples,
// and the streaming aws-chunked decoder.
import assert from 'node:assert/strict';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, test } from 'node:test';
import { AwsChunkedDecoder } from '../src/infra/storage/aws-chunked.ts';
import { BodyVerifier } from '../src/infra/storage/body-verifier.ts';
import { createChecksum } from '../src/infra/storage/checksums.ts';
import { EmbeddedCredentialIssuer, createCredentialResolver, type CredentialResolver } from '../src/infra/storage/embedded-credentials.ts';
import { S3Error } from '../src/infra/storage/s3-errors.ts';
import { verifySigV4, type IncomingSignedRequest } from '../src/infra/storage/sigv4-verifier.ts';

describe('embedded credentials', () => {
  const masterKey = randomBytes(32);

  test('issued credentials resolve, in another process-like instance with the same key', async () => {
    const issuer = new EmbeddedCredentialIssuer({ masterKey, region: 'eu-west-1', endpoint: 'http://s3.local:9000' });
    const creds = await issuer.issue('bkt', 'projects/7/', 3600);
    assert.match(creds.accessKeyId, /^ASIA[A-Z2-7]{16}$/);
    assert.equal(creds.secretAccessKey.length, 40);
    assert.equal(creds.endpoint, 'http://s3.local:9000');
    assert.equal(creds.region, 'eu-west-1');
    assert.ok(Math.abs(creds.expiration.getTime() - Date.now() - 3600_000) < 2000);
    const resolve = createCredentialResolver(Buffer.from(masterKey));
    const lookup = resolve(creds.accessKeyId, creds.sessionToken);
    assert.ok(lookup.ok);
    assert.equal(lookup.credential.secretAccessKey, creds.secretAccessKey);
    assert.deepEqual(lookup.credential.scope, { kind: 'prefix', bucket: 'bkt', prefix: 'projects/7/', writable: true, readOnlyPrefixes: [] });
    // Read-only prefixes travel in the signed token.
    const reader = await issuer.issue('bkt', 'projects/7/', 3600, { readOnlyPrefixes: ['results/7/'] });
    const readerLookup = resolve(reader.accessKeyId, reader.sessionToken);
    assert.ok(readerLookup.ok);
    assert.deepEqual(readerLookup.credential.scope, { kind: 'prefix', bucket: 'bkt', prefix: 'projects/7/', writable: true, readOnlyPrefixes: ['results/7/'] });
    // So does a read-only main prefix (IssueOptions.writable false: a read-only cloud token's).
    const readOnly = await issuer.issue('bkt', 'projects/7/', 3600, { readOnlyPrefixes: ['results/7/'], writable: false });
    assert.equal(readOnly.writable, false);
    const readOnlyLookup = resolve(readOnly.accessKeyId, readOnly.sessionToken);
    assert.ok(readOnlyLookup.ok);
    assert.deepEqual(readOnlyLookup.credential.scope, { kind: 'prefix', bucket: 'bkt', prefix: 'projects/7/', writable: false, readOnlyPrefixes: ['results/7/'] });
    // Two issues never share an access key.
    assert.notEqual((await issuer.issue('bkt', 'projects/7/', 3600)).accessKeyId, creds.accessKeyId);
  });

  test('tampered, foreign, mismatched and expired tokens are refused with the right reason', async () => {
    let now = Date.now();
    const issuer = new EmbeddedCredentialIssuer({ masterKey, now: () => now });
    const creds = await issuer.issue('bkt', 'p/', 60);
    const other = await issuer.issue('bkt', 'q/', 60);
    const [v, body, mac] = creds.sessionToken.split('.');
    const widened = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), p: '' })).toString('base64url');
    const reason = (resolve: CredentialResolver, id: string, token: string | undefined) => {
      const r = resolve(id, token);
      return r.ok ? 'ok' : r.reason;
    };
    assert.equal(reason(issuer.resolve, creds.accessKeyId, `${v}.${widened}.${mac}`), 'InvalidToken');
    const readMore = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), r: ['q/'] })).toString('base64url');
    assert.equal(reason(issuer.resolve, creds.accessKeyId, `${v}.${readMore}.${mac}`), 'InvalidToken', 'read-only prefixes cannot be added');
    const readOnly = await issuer.issue('bkt', 'p/', 60, { writable: false });
    const [rv, readOnlyBody, readOnlyMac] = readOnly.sessionToken.split('.');
    const { ro: _ro, ...writableAgain } = JSON.parse(Buffer.from(readOnlyBody, 'base64url').toString());
    assert.equal(_ro, true, 'a read-only token says so');
    const madeWritable = Buffer.from(JSON.stringify(writableAgain)).toString('base64url');
    assert.equal(reason(issuer.resolve, readOnly.accessKeyId, `${rv}.${madeWritable}.${readOnlyMac}`), 'InvalidToken', 'a read-only token cannot be made writable');
    assert.equal(reason(issuer.resolve, creds.accessKeyId, 'garbage'), 'InvalidToken');
    assert.equal(reason(createCredentialResolver(randomBytes(32)), creds.accessKeyId, creds.sessionToken), 'InvalidToken');
    assert.equal(reason(issuer.resolve, creds.accessKeyId, other.sessionToken), 'InvalidAccessKeyId');
    assert.equal(reason(issuer.resolve, creds.accessKeyId, undefined), 'InvalidAccessKeyId');
    assert.equal(reason(issuer.resolve, 'AKIAUNKNOWN', undefined), 'InvalidAccessKeyId');
    now += 61_000;
    assert.equal(reason(issuer.resolve, creds.accessKeyId, creds.sessionToken), 'ExpiredToken');
    await assert.rejects(issuer.issue('bkt', 'p/', 0), RangeError);
  });

  test('the root credential is stable for a master key and has full scope', () => {
    const a = new EmbeddedCredentialIssuer({ masterKey }).rootCredentials();
    const b = new EmbeddedCredentialIssuer({ masterKey: Buffer.from(masterKey) }).rootCredentials();
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, new EmbeddedCredentialIssuer({ masterKey: randomBytes(32) }).rootCredentials());
    const lookup = createCredentialResolver(masterKey)(a.accessKeyId, undefined);
    assert.ok(lookup.ok);
    assert.deepEqual(lookup.credential.scope, { kind: 'root' });
    assert.throws(() => new EmbeddedCredentialIssuer({ masterKey: randomBytes(16) }));
  });
});

// The example credentials and requests of the AWS S3 SigV4 documentation.
const EXAMPLE_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const EXAMPLE_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const EXAMPLE_NOW = Date.UTC(2013, 4, 24);
const exampleResolver: CredentialResolver = (accessKeyId) =>
  accessKeyId === EXAMPLE_KEY_ID
    ? { ok: true, credential: { accessKeyId, secretAccessKey: EXAMPLE_SECRET, scope: { kind: 'root' } } }
    : { ok: false, reason: 'InvalidAccessKeyId', message: 'unknown' };

function signedRequest(method: string, rawPath: string, query: Record<string, string>, headers: Record<string, string>): IncomingSignedRequest {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, rawPath, query, headers: lower, rawHeaders: Object.entries(headers).flat() };
}

const verify = (request: IncomingSignedRequest, now = EXAMPLE_NOW) =>
  verifySigV4(request, { resolveCredential: exampleResolver, now, maxClockSkewMs: 15 * 60_000 });

function s3Code(code: string) {
  return (err: unknown) => err instanceof S3Error && err.code === code;
}

const EMPTY = createHash('sha256').update('').digest('hex');

describe('SigV4 verification (AWS documentation examples)', () => {
  const getObject = (signature: string) =>
    signedRequest('GET', '/test.txt', {}, {
      Host: 'examplebucket.s3.amazonaws.com',
      Range: 'bytes=0-9',
      'x-amz-content-sha256': EMPTY,
      'x-amz-date': '20130524T000000Z',
      Authorization: `AWS4-HMAC-SHA256 Credential=${EXAMPLE_KEY_ID}/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=${signature}`,
    });

  test('GET Object with an Authorization header', async () => {
    const ok = await verify(getObject('f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41'));
    assert.equal(ok.credential.accessKeyId, EXAMPLE_KEY_ID);
    await assert.rejects(verify(getObject('f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb42')), s3Code('SignatureDoesNotMatch'));
    await assert.rejects(verify(getObject('f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41'), EXAMPLE_NOW + 16 * 60_000), s3Code('RequestTimeTooSkewed'));
  });

  test('PUT Object with an escaped key and a signed Date header', async () => {
    const body = 'Welcome to Amazon S3.';
    const request = signedRequest('PUT', '/test%24file.text', {}, {
      Host: 'examplebucket.s3.amazonaws.com',
      Date: 'Fri, 24 May 2013 00:00:00 GMT',
      'x-amz-date': '20130524T000000Z',
      'x-amz-storage-class': 'REDUCED_REDUNDANCY',
      'x-amz-content-sha256': createHash('sha256').update(body).digest('hex'),
      Authorization: `AWS4-HMAC-SHA256 Credential=${EXAMPLE_KEY_ID}/20130524/us-east-1/s3/aws4_request,SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd`,
    });
    await verify(request);
  });

  test('presigned GET URL', async () => {
    const query = {
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': `${EXAMPLE_KEY_ID}/20130524/us-east-1/s3/aws4_request`,
      'X-Amz-Date': '20130524T000000Z',
      'X-Amz-Expires': '86400',
      'X-Amz-SignedHeaders': 'host',
      'X-Amz-Signature': 'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    };
    const request = (q: Record<string, string>) => signedRequest('GET', '/test.txt', q, { Host: 'examplebucket.s3.amazonaws.com' });
    const ok = await verify(request(query), EXAMPLE_NOW + 3600_000);
    assert.equal(ok.presigned, true);
    await assert.rejects(verify(request({ ...query, 'X-Amz-Expires': '86401' }), EXAMPLE_NOW), s3Code('SignatureDoesNotMatch'));
    await assert.rejects(verify(request(query), EXAMPLE_NOW + 86_401_000), (err) => s3Code('AccessDenied')(err) && /expired/.test((err as Error).message));
    await assert.rejects(verify(request({ ...query, 'X-Amz-Credential': query['X-Amz-Credential'].replace('AKIA', 'AKIB') })), s3Code('InvalidAccessKeyId'));
  });

  test('missing or foreign authentication', async () => {
    await assert.rejects(verify(signedRequest('GET', '/x', {}, { Host: 'h' })), s3Code('AccessDenied'));
    await assert.rejects(verify(signedRequest('GET', '/x', {}, { Host: 'h', Authorization: 'AWS AKID:sig' })), s3Code('InvalidRequest'));
    await assert.rejects(verify(signedRequest('GET', '/x', {}, { Host: 'h', Authorization: 'AWS4-HMAC-SHA256 Credential=x' })), s3Code('AuthorizationHeaderMalformed'));
  });
});

// The documentation's chunked PUT: 66560 bytes of "a" in a 64 KiB and a 1 KiB chunk.
const CHUNKED_HEADERS = {
  Host: 's3.amazonaws.com',
  'x-amz-date': '20130524T000000Z',
  'x-amz-storage-class': 'REDUCED_REDUNDANCY',
  'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
  'Content-Encoding': 'aws-chunked',
  'x-amz-decoded-content-length': '66560',
  'Content-Length': '66824',
  Authorization:
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
};
const CHUNK_SIGNATURES = [
  'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648',
  '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497',
  'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9',
];

function chunkedBody(signatures = CHUNK_SIGNATURES): Buffer {
  return Buffer.concat([
    Buffer.from(`10000;chunk-signature=${signatures[0]}\r\n`),
    Buffer.alloc(65536, 'a'),
    Buffer.from(`\r\n400;chunk-signature=${signatures[1]}\r\n`),
    Buffer.alloc(1024, 'a'),
    Buffer.from(`\r\n0;chunk-signature=${signatures[2]}\r\n\r\n`),
  ]);
}

/** Feeds `body` in pieces of `pieceSize` bytes and collects the decoded output. */
async function decode(decoder: AwsChunkedDecoder | BodyVerifier, body: Buffer, pieceSize: number, ...more: Array<AwsChunkedDecoder | BodyVerifier>): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for (let i = 0; i < body.length; i += pieceSize) pieces.push(body.subarray(i, i + pieceSize));
  const out: Buffer[] = [];
  const sink = async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) out.push(chunk);
  };
  // pipeline's typings have no overload for a spread list of stages.
  await (pipeline as (...streams: unknown[]) => Promise<void>)(Readable.from(pieces), decoder, ...more, sink);
  return Buffer.concat(out);
}

describe('aws-chunked bodies', () => {
  test('signed chunks from the AWS documentation verify, however the bytes are split', async () => {
    const auth = await verify(signedRequest('PUT', '/examplebucket/chunkObject.txt', {}, CHUNKED_HEADERS));
    assert.equal(auth.chunkSigning.seedSignature, '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9');
    for (const pieceSize of [1, 7, 100, 65536, 1 << 20]) {
      const decoder = new AwsChunkedDecoder({ signing: auth.chunkSigning, trailers: false, decodedLength: 66560 });
      const out = await decode(decoder, chunkedBody(), pieceSize === 1 ? 997 : pieceSize);
      assert.deepEqual(out, Buffer.alloc(66560, 'a'));
    }
    // A byte at a time through the header lines too (slow path, small body).
    const small = await decode(new AwsChunkedDecoder({ trailers: false }), Buffer.from('3\r\nabc\r\n0\r\n\r\n'), 1);
    assert.equal(small.toString(), 'abc');
  });

  test('a tampered chunk, a wrong chunk signature or a short body fails', async () => {
    const auth = await verify(signedRequest('PUT', '/examplebucket/chunkObject.txt', {}, CHUNKED_HEADERS));
    const tampered = chunkedBody();
    tampered[200] = 'b'.charCodeAt(0);
    await assert.rejects(decode(new AwsChunkedDecoder({ signing: auth.chunkSigning, trailers: false }), tampered, 4096), s3Code('SignatureDoesNotMatch'));
    const wrongFinal = chunkedBody([CHUNK_SIGNATURES[0], CHUNK_SIGNATURES[1], CHUNK_SIGNATURES[0]]);
    await assert.rejects(decode(new AwsChunkedDecoder({ signing: auth.chunkSigning, trailers: false }), wrongFinal, 4096), s3Code('SignatureDoesNotMatch'));
    const truncated = chunkedBody().subarray(0, 66000);
    await assert.rejects(decode(new AwsChunkedDecoder({ signing: auth.chunkSigning, trailers: false }), truncated, 4096), s3Code('IncompleteBody'));
    await assert.rejects(decode(new AwsChunkedDecoder({ trailers: false, decodedLength: 4 }), Buffer.from('3\r\nabc\r\n0\r\n\r\n'), 5), s3Code('IncompleteBody'));
  });

  test('unsigned bodies with a checksum trailer (what AWS SDK v3 sends)', async () => {
    const data = randomBytes(100_000);
    const crc = createChecksum('crc32');
    crc.update(data);
    const body = (checksum: string) =>
      Buffer.concat([Buffer.from('10000\r\n'), data.subarray(0, 0x10000), Buffer.from(`\r\n${(data.length - 0x10000).toString(16)}\r\n`), data.subarray(0x10000), Buffer.from(`\r\n0\r\nx-amz-checksum-crc32:${checksum}\r\n\r\n`)]);
    const run = (checksum: string) => {
      const decoder = new AwsChunkedDecoder({ trailers: true, decodedLength: data.length });
      const verifier = new BodyVerifier({ checksums: [{ algorithm: 'crc32', expected: () => decoder.trailers.get('x-amz-checksum-crc32') }] });
      return decode(decoder, body(checksum), 3000, verifier);
    };
    assert.deepEqual(await run(crc.digestBase64()), data);
    await assert.rejects(run('AAAAAA=='), s3Code('BadDigest'));
  });

  test('signed bodies with a signed trailer', async () => {
    const signingKey = randomBytes(32);
    const signing = { signingKey, amzDate: '20250101T000000Z', scope: '20250101/us-east-1/s3/aws4_request', seedSignature: 'a'.repeat(64) };
    const hmac = (s: string) => createHmac('sha256', signingKey).update(s).digest('hex');
    const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
    const data = Buffer.from('trailer test payload');
    const sig1 = hmac(['AWS4-HMAC-SHA256-PAYLOAD', signing.amzDate, signing.scope, signing.seedSignature, EMPTY, sha(data)].join('\n'));
    const sig0 = hmac(['AWS4-HMAC-SHA256-PAYLOAD', signing.amzDate, signing.scope, sig1, EMPTY, EMPTY].join('\n'));
    const sha256 = createHash('sha256').update(data).digest('base64');
    const trailer = `x-amz-checksum-sha256:${sha256}\n`;
    const trailerSig = hmac(['AWS4-HMAC-SHA256-TRAILER', signing.amzDate, signing.scope, sig0, sha(trailer)].join('\n'));
    const body = (sig: string) =>
      Buffer.from(`${data.length.toString(16)};chunk-signature=${sig1}\r\n${data}\r\n0;chunk-signature=${sig0}\r\nx-amz-checksum-sha256:${sha256}\r\nx-amz-trailer-signature:${sig}\r\n\r\n`);
    const decoder = new AwsChunkedDecoder({ signing, trailers: true });
    assert.equal((await decode(decoder, body(trailerSig), 10)).toString(), data.toString());
    assert.equal(decoder.trailers.get('x-amz-checksum-sha256'), sha256);
    await assert.rejects(decode(new AwsChunkedDecoder({ signing, trailers: true }), body(sig0), 10), s3Code('SignatureDoesNotMatch'));
  });

  test('checksums match their published check values', () => {
    const check: Record<string, string> = { crc32: 'cbf43926', crc32c: 'e3069283', crc64nvme: 'ae8b14860a799888' };
    for (const [algorithm, hex] of Object.entries(check)) {
      const c = createChecksum(algorithm as 'crc32');
      c.update(Buffer.from('1234'));
      c.update(Buffer.from('56789'));
      assert.equal(Buffer.from(c.digestBase64(), 'base64').toString('hex'), hex, algorithm);
    }
  });
});
