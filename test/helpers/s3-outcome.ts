// The outcome of one S3 call as a word a test can compare: 'ok', or the S3 error code the SDK
// reports as the error's name (AccessDenied, ExpiredToken …). Shared by the storage tests that
// probe what a credential may and may not do.
export async function s3Outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    return (err as Error).name;
  }
}
