// Which test file runs in which pass (issue 41), read by scripts/run-tests.ts. Every file runs in
// the PGlite pass (`npm test`). The PostgreSQL pass (`npm test` with DATABASE_URL) runs every file
// except RUN_ONCE: those whose outcome cannot depend on the database kind, each with the reason.
// A new test file runs in both passes until it is listed here: the safe default. `npm run
// test:quick` runs NO_DATABASE but HEAVY, and API_SURFACE. CI (`--split`) moves the once-run files
// of ONCE_IN_POSTGRES_PASS to the PostgreSQL pass, to end the two passes together.
//
// What can depend on the database kind: SQL and its types, migrations, transactions and locks,
// races between requests (PGlite has one connection, PostgreSQL a pool), the job queue (LISTEN/
// NOTIFY, other processes), lost connections, and the API surface over them. What cannot: code that
// never opens a database, and tests whose database holds only the records that carry the work to
// the part under test (a reconstruction, a rendering, a raster, an S3 protocol detail), which the
// API tests of both passes already cover; their assertions are on files, pixels, bytes and numbers
// that no query computes.

/** Files that never open a database: file → what they test. They run once, and in the quick set unless HEAVY. */
export const NO_DATABASE: Record<string, string> = {
  'cloud-crs.test.ts': 'coordinate-system maths; no database',
  'compiled-runtime.test.ts': 'the compiled server starts and answers; the database kind is the process environment, not what is tested',
  'dense-depth-map-io.test.ts': 'COLMAP matrix files; no database',
  'dense-patch-match.test.ts': 'PatchMatch on a synthetic scene; no database',
  'dense-view-selection.test.ts': 'sparse model reader and view selection; no database',
  'engine-colmap-georeference.test.ts': 'georeferencing maths; no database',
  'engine-default.test.ts': 'engine choice from the configuration; no database',
  'hostile-inputs-regex.test.ts': 'regular expressions on hostile strings; no database',
  'http-request-logger.test.ts': 'request loggers; no database',
  'http-security-headers.test.ts': 'security headers; no database',
  'idle-memory.test.ts': 'garbage collection in a child process; no database',
  'image-analysis.test.ts': 'EXIF/XMP parsing; no database',
  'image-demo-images.test.ts': 'generated demo photos; no database',
  'image-rotation.test.ts': 'rotation maths; no database',
  'inspection-mail.test.ts': 'the mailer writing .eml files; no database',
  'inventory-detection-parts.test.ts': 'the antenna detection\'s grid convergence, status moves, items from boxes and worker thread; no database',
  'mesh-decimate.test.ts': 'mesh decimation; no database',
  'mesh-files.test.ts': 'PLY/OBJ files; no database',
  'mesh-poisson.test.ts': 'Poisson meshing by COLMAP; no database',
  'mesh-trim.test.ts': 'mesh trimming; no database',
  'pointcloud-utils.test.ts': 'LAS/PLY reading and writing; no database',
  'rasters-cog.test.ts': 'GeoTIFF writing with GDAL; no database',
  'rasters-dsm.test.ts': 'DSM/DTM maths; no database',
  'rasters-orthomosaic-grid.test.ts': 'orthomosaic grid maths; no database',
  'rasters-orthomosaic-workspace.test.ts': 'undistorted workspace reader; no database',
  'rasters-orthomosaic.test.ts': 'orthomosaic rendering; no database',
  'report-marker-labels.test.ts': 'report label placement; no database',
  'rust-detection.test.ts': 'the rust detector on labelled photos; no database',
  'storage-auth.test.ts': 'SigV4 and credential maths; no database',
  'storage-awscli.test.ts': 'aws-cli against the embedded S3 endpoint; no database',
  'storage-disk.test.ts': 'the disk object store; no database',
  'storage-large.test.ts': 'a large multipart upload through the S3 endpoint; no database',
  'storage-multipart-cap.test.ts': 'the S3 endpoint\'s multipart cap; no database',
  'storage-off-thread-hash.test.ts': 'worker-thread hashing; no database',
  'storage-read-only-credentials.test.ts': 'read-only session policies; no database',
  'storage-s3-store.test.ts': 'the S3 object store against s3rver; no database',
  'storage-s3.test.ts': 'the embedded S3 endpoint with the AWS SDK; no database',
  'streamed-garbage.test.ts': 'young collections of streamed buffers; no database',
  'tower-detection.test.ts': 'antenna detection on generated, degraded tower clouds (and clouds without a tower); no database',
  'tower-flight-parts.test.ts': 'the tower-flight generator\'s geodesy, flight plan, GPS noise, EXIF, truth and reference cloud; no database',
  'tower-flight-render.test.ts': 'the tower-flight generator rendering a small flight in Chromium; no database',
  'web-3d-levels.test.ts': 'the 3D view\'s point levels; no database',
  'web-3d-logic.test.ts': 'the 3D view\'s rules; no database',
  'web-asset-rules.test.ts': 'console form rules; no database',
  'web-console-logic.test.ts': 'console routes and paging rules; no database',
  'web-inventory-shapes.test.ts': 'inventory outlines and box edges for the console; no database',
  'web-rect-coords.test.ts': 'rectangle ↔ coords_2d maths; no database',
  'web-retry-rules.test.ts': 'console retry rules; no database',
  'web-upload-plan.test.ts': 'console upload planning; no database',
  'webhooks-outbound.test.ts': 'address checks and signatures of outbound webhooks; no database',
};

/** Files whose database only carries the work to the part under test: file → why the outcome cannot depend on its kind. */
export const DATABASE_INCIDENTAL: Record<string, string> = {
  // Reconstruction and engines: the outcome is COLMAP's, PatchMatch's or a (fake) node's output.
  'engine-colmap-dense.test.ts': 'dense stages on brighton_beach: point cloud, mesh and rasters come from COLMAP and our PatchMatch',
  'engine-colmap-errors.test.ts': 'a stand-in colmap\'s failures mapped to error codes by the engine',
  'engine-colmap-lund.test.ts': 'COLMAP on lund: cameras, point cloud and coords_3d are computed by the engine and geometry code',
  'engine-colmap-pairs.test.ts': 'pair selection and mapper retries with a stand-in colmap',
  'engine-colmap-stages.test.ts': 'the stage runtime and model files with a stand-in colmap',
  'engine-colmap-strain.test.ts': 'strained-model detection and remapping with a stand-in colmap',
  'engine-nodeodm.test.ts': 'the NodeODM client against a fake node: HTTP calls and archive unpacking',
  'inspection-coords-3d-mesh.test.ts': 'coords_3d ray casting against a synthetic mesh and cloud',
  'inspection-ground-altitude.test.ts': 'ground altitude from a synthetic point cloud',
  'inspection-elevation-rasters.test.ts': 'DTM/DSM sampling and volumes over COGs',
  'inspection-measurement-quantities.test.ts': 'lengths, areas and volumes over a synthetic point cloud',
  'inspection-reconstruction.test.ts': 'clipping and camera import from LAS files written by the test',
  'inspection-rust.test.ts': 'rust detection on photos reconstructed by COLMAP',

  // Rendering: PDFs, tiles, previews, videos; the outcome is pixels and text in files.
  'inspection-image-limits.test.ts': 'decoding limits of oversized and forged photos (sharp)',
  'inspection-ortho-tiles.test.ts': 'tile pixels from a COG of known colours',
  'inspection-previews.test.ts': 'preview JPEGs made by sharp',
  'inspection-report-plans.test.ts': 'the report\'s 2D plan rendered from a COG of known colours',
  'inspection-video.test.ts': 'frames extracted by ffmpeg and their metadata',
  'inspection-video-hostile.test.ts': 'hostile video inputs refused by ffprobe rules and capped parsing',

  // The S3 endpoint and external stores: answers to S3 requests; the database only records who owns a prefix.
  'storage-acl-headers.test.ts': 'ACL headers on the S3 endpoint and the external-store self-check',
  'storage-connection-limits.test.ts': 'connection caps of the S3 port',
  'storage-cors.test.ts': 'CORS answers of the S3 endpoint',
  'storage-create-bucket.test.ts': 'CreateBucket answers of the `storage` command',
  'storage-process.test.ts': 'the `storage` process through the S3 store and STS',
  'storage-rgw.test.ts': 'a real Ceph RGW\'s policies and answers',

  // Browser journeys: the console in Chromium; the API they call is tested in both passes.
  'web-3d-mesh.test.ts': 'the 3D tab in Chromium',
  'web-annotation-list.test.ts': 'the annotation list in Chromium',
  'web-inventory-by-hand.test.ts': 'inventory by hand in Chromium',
  'web-inventory-detected.test.ts': 'reviewing detected antennas in Chromium (outlines, boxes in 3D, the report\'s wording)',
  'web-journeys.test.ts': 'the console journeys in Chromium',
  'web-layout.test.ts': 'layout, accessibility and touch in Chromium',
  'web-ortho-map.test.ts': 'the map tab in Chromium',
  'web-share.test.ts': 'share links in Chromium',
  'web-stored-injection.test.ts': 'stored names shown as text in Chromium',
};

/** Files that run once, in the PGlite pass (but ONCE_IN_POSTGRES_PASS with --split). */
export const RUN_ONCE: Record<string, string> = { ...NO_DATABASE, ...DATABASE_INCIDENTAL };

/**
 * RUN_ONCE files that CI runs in the PostgreSQL pass instead (`npm test -- --split` in both passes,
 * .ci/run): the passes run side by side, and with every once-run file in the PGlite pass it ran
 * 15 min longer than the PostgreSQL pass, with two cores shared by two files for that time (with
 * the first four below moved, still 8 min longer; with lund too, 5 min: 36.8 min in all; the two
 * browser files even the passes' sums of file seconds). Their outcome does not depend on the
 * database kind, so either pass may run them; those that open a database do it through the test
 * system (a fresh PostgreSQL database there).
 */
export const ONCE_IN_POSTGRES_PASS: string[] = [
  'engine-colmap-dense.test.ts',
  'engine-colmap-lund.test.ts',
  'inspection-rust.test.ts',
  'storage-rgw.test.ts',
  'compiled-runtime.test.ts',
  'web-layout.test.ts',
  'tower-flight-render.test.ts',
];

/** The API surface that `npm run test:quick` runs besides NO_DATABASE: the typical flows, rules, validation, isolation. */
export const API_SURFACE: string[] = [
  'cloud-auth.test.ts',
  'cloud-flow.test.ts',
  'cloud-processing.test.ts',
  'cloud-projects.test.ts',
  'inspection-annotations.test.ts',
  'inspection-assets.test.ts',
  'inspection-flow.test.ts',
  'inspection-inspections.test.ts',
  'inspection-isolation.test.ts',
  'inspection-measurements.test.ts',
  'inspection-rules.test.ts',
  'inspection-validation.test.ts',
  'robustness-input.test.ts',
];

/** NO_DATABASE files that `npm run test:quick` leaves out: file → what makes it slow (npm test runs them). */
export const HEAVY: Record<string, string> = {
  'compiled-runtime.test.ts': 'compiles the whole server',
  'dense-patch-match.test.ts': 'PatchMatch depth maps',
  'mesh-poisson.test.ts': 'Poisson meshing by COLMAP',
  'storage-large.test.ts': 'a large multipart upload',
  'tower-flight-render.test.ts': 'renders a small tower flight (~30 photos) in Chromium',
};
