// Chooses the photogrammetry engine by name (configuration `ENGINE`).
import type { PhotogrammetryEngine } from './engine.ts';
import { ExifEngine } from './exif-engine.ts';

export function createEngine(name: string, options: { simulatedSeconds: number }): PhotogrammetryEngine {
  switch (name) {
    case 'exif':
      return new ExifEngine(options.simulatedSeconds);
    default:
      throw new Error(`Unknown ENGINE "${name}". Available: exif.`);
  }
}
