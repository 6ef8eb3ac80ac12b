export {
  analyzeImage,
  type AnalyzeOptions,
  type ImageAnalysis,
  type ImageFormat,
  type ImageMetadata,
  type ReadRange,
} from './analyze-image.ts';
export { objectStoreRangeReader, openFileRangeReader, type OpenedRangeReader } from './range-readers.ts';
