// Single temporary credentials that stop before they expire, on the embedded endpoint. The
// credentials are stateless (embedded-credentials.ts), so the endpoint asks whoever handed them
// out what has become of them since (the inspection service, auth/storage-grants.ts):
//   'revoked'    refused altogether (a member removed from the organization, membership-removal.ts);
//   'read-only'  reads go on, writes are refused (the inspection's processing has started: spec
//                rule 4, image files are uploaded only before);
//   'valid'      as issued (also every credential the asker does not know).
// Reads reuse an answer for a few seconds per access key, so that a burst of them costs one
// lookup; writes always ask afresh, so that uploads close at once whichever process started the
// processing. A revocation made in this process (`revoked`) takes effect at once; one made by
// another process (the admin CLI beside a server) within the cache delay.
import { S3Error } from './s3-errors.ts';

export type CredentialState = 'valid' | 'read-only' | 'revoked';

/** What became of the temporary credential `accessKeyId`. Throwing answers 503 (retried). */
export type CredentialStateLookup = (accessKeyId: string) => Promise<CredentialState>;

const MAX_ENTRIES = 10_000;

export class RevokedCredentials {
  /** access key id → its last answer, and until when it holds for reads. */
  private readonly known = new Map<string, { state: CredentialState; until: number }>();
  /** Revoked in this process: refused without a lookup (bounded; the lookup answers for the rest). */
  private readonly revokedHere = new Set<string>();

  constructor(
    private readonly lookup: CredentialStateLookup,
    private readonly cacheMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** AccessDenied when the credential was revoked, or for a `write` when it only reads now. */
  async assertAllowed(accessKeyId: string, write: boolean): Promise<void> {
    if (this.revokedHere.has(accessKeyId)) throw denied('these credentials were revoked');
    const cached = this.known.get(accessKeyId);
    let state: CredentialState;
    if (!write && cached && cached.until > this.now()) state = cached.state;
    else {
      try {
        state = await this.lookup(accessKeyId);
      } catch (err) {
        throw new S3Error('ServiceUnavailable', 'Please reduce your request rate.', 503, {}, err);
      }
      if (this.known.size >= MAX_ENTRIES) this.known.clear();
      this.known.set(accessKeyId, { state, until: this.now() + this.cacheMs });
    }
    if (state === 'revoked') throw denied('these credentials were revoked');
    if (write && state === 'read-only') throw denied('uploads are closed, processing has started');
  }

  /** Credentials just revoked in this process: refused from their next request. */
  revoked(accessKeyIds: readonly string[]): void {
    for (const id of accessKeyIds) {
      this.known.delete(id);
      if (this.revokedHere.size >= MAX_ENTRIES) this.revokedHere.clear();
      this.revokedHere.add(id);
    }
  }
}

function denied(why: string): S3Error {
  return new S3Error('AccessDenied', `Access Denied: ${why}.`);
}
