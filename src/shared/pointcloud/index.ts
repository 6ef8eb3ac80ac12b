// Point-cloud utilities shared by the services: LAS 1.2 (and LAZ, read) and PLY files, clipping, ray picking and
// calibrated photo cameras (pixel <-> ray).
export { boundsOf, createPointCloud, pointAt, subset, type Bounds3, type PointCloud, type Vec3 } from './point-cloud.ts';
export { readLas, writeLas, LasFormatError, type LasFile, type LasHeader, type LasWriteOptions } from './las.ts';
export { readPly, writePly } from './ply.ts';
export { decompressLaz, isLaz, readPointCloudFile } from './laz.ts';
export { clipByRadius, pickAlongRay, type RayHit } from './queries.ts';
export { cameraFromCalibrated, insideImage, pixelRay, projectPoint, type Matrix3, type PhotoCamera, type Ray } from './camera.ts';
