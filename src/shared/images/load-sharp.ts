// sharp (libvips) is loaded on first use rather than at start-up: about 20 MB resident that an idle
// server, or one that never makes a preview, thumbnail, report crop or rust analysis, need not hold
// (issue 14, idle memory). Every module that decodes images goes through this one loader.
import type Sharp from 'sharp';

let loading: Promise<typeof Sharp> | undefined;

export function loadSharp(): Promise<typeof Sharp> {
  loading ??= import('sharp').then((module) => module.default);
  return loading;
}
