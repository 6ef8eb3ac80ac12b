// The depth maps' default longest side (DENSE_MAX_IMAGE_SIZE's default), chosen from measurement
// (bench/dense.ts, bench/photogrammetry.ts): their cost grows with the pixels; brighton's 18 maps at
// 800 px took 617 CPU seconds (about 5 minutes on 2 cores), within the whole pipeline's 20 minutes,
// and 1000 px cost 1.6 times as much for the same accuracy. Its own module so that the
// configuration reads it without loading the depth maps' code (sharp, worker threads).
export const DEFAULT_DEPTH_MAP_SIZE = 800;
