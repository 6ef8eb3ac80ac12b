// COLMAP's database (SQLite), written directly where its command line has no command for it:
// forgetting the geometric verification of the matched pairs, so that `matches_importer` verifies
// them again. For a pair whose matches are stored and whose two-view geometry is not, COLMAP's
// matcher reuses the matches and only verifies them: lund's 133 pairs in 3 s, where matching
// them took 70 s. The verification is a RANSAC whose outcome differs from run to run (stages/georegistration.ts
// says why that matters), so verifying again is a cheap way to draw again.
import { DatabaseSync } from 'node:sqlite';

/** COLMAP's kMaxNumImages: pair_id = image_id1 * MAX_NUM_IMAGES + image_id2, with image_id1 < image_id2. */
const MAX_NUM_IMAGES = 2147483647n;

/**
 * Deletes the two-view geometries of every pair with stored matches and returns those pairs as
 * image names, the list `matches_importer --match_type pairs` verifies again.
 */
export function forgetVerification(databasePath: string): [string, string][] {
  const db = new DatabaseSync(databasePath);
  try {
    const images = db.prepare('SELECT image_id, name FROM images');
    images.setReadBigInts(true);
    const names = new Map((images.all() as { image_id: bigint; name: string }[]).map((row) => [row.image_id, row.name]));
    const matched = db.prepare('SELECT pair_id FROM matches WHERE rows > 0 ORDER BY pair_id');
    matched.setReadBigInts(true);
    const pairs: [string, string][] = [];
    for (const { pair_id: pairId } of matched.all() as { pair_id: bigint }[]) {
      const first = names.get(pairId / MAX_NUM_IMAGES);
      const second = names.get(pairId % MAX_NUM_IMAGES);
      if (first !== undefined && second !== undefined) pairs.push([first, second]);
    }
    db.exec('DELETE FROM two_view_geometries WHERE pair_id IN (SELECT pair_id FROM matches WHERE rows > 0)');
    return pairs;
  } finally {
    db.close();
  }
}
