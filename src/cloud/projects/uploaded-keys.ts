// The checks of storage keys a client names after uploading with the project's credentials (bulk
// registration of images, extras): each under the project's uploads prefix, a key storage can hold
// (no "." or ".." segment, which URL parsers collapse and the embedded store refuses: a 400 naming
// the key and the reason here, not the store's error as a 500), and present in storage.
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import { ValidationError } from '../../infra/http/errors.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';
import type { ProjectRow } from '../cloud.tables.ts';

/** The size of each key (distinct keys, in order); a 400 on `field` naming the keys outside the prefix, else those missing. */
export async function checkUploadedKeys(store: ObjectStore, project: ProjectRow, keys: string[], field: string): Promise<{ key: string; size: number }[]> {
  const prefix = `${project.s3_base_path}/`;
  const unique = [...new Set(keys)];
  const outside = unique.filter((key) => !key.startsWith(prefix) || key.length === prefix.length);
  if (outside.length > 0) {
    throw ValidationError.field(field, `Keys must begin with the project's prefix "${prefix}": ${preview(outside)}.`);
  }
  const refused = unique.map((key) => ({ key, reason: whyNotStorable(key) })).filter((k) => k.reason);
  if (refused.length > 0) {
    const listed = refused.slice(0, 5).map(({ key, reason }) => `${JSON.stringify(key)} (${reason})`).join(', ');
    throw ValidationError.field(field, `Keys that storage cannot hold: ${listed}${refused.length > 5 ? ` and ${refused.length - 5} more` : ''}.`);
  }
  const heads = await mapConcurrently(unique, 16, (key) => store.headObject(project.bucket_name, key));
  const missing = unique.filter((_, i) => !heads[i]);
  if (missing.length > 0) throw ValidationError.field(field, `Not found in storage: ${preview(missing)}.`);
  return unique.map((key, i) => ({ key, size: heads[i]!.size }));
}

/** Why storage refuses `key` (the embedded store's assertValidKey, S3's own rules), or undefined. */
function whyNotStorable(key: string): string | undefined {
  const segments = key.split('/');
  if (segments.includes('..')) return 'a ".." segment';
  if (segments.includes('.')) return 'a "." segment';
  if (Buffer.byteLength(key, 'utf8') > 1024) return 'longer than 1024 bytes';
  return undefined;
}

function preview(keys: string[]): string {
  return keys.slice(0, 5).join(', ') + (keys.length > 5 ? ` and ${keys.length - 5} more` : '');
}
