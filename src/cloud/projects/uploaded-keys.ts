// The checks of storage keys a client names after uploading with the project's credentials (bulk
// registration of images, extras): each under the project's uploads prefix, and present in storage.
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
  const heads = await mapConcurrently(unique, 16, (key) => store.headObject(project.bucket_name, key));
  const missing = unique.filter((_, i) => !heads[i]);
  if (missing.length > 0) throw ValidationError.field(field, `Not found in storage: ${preview(missing)}.`);
  return unique.map((key, i) => ({ key, size: heads[i]!.size }));
}

function preview(keys: string[]): string {
  return keys.slice(0, 5).join(', ') + (keys.length > 5 ? ` and ${keys.length - 5} more` : '');
}
