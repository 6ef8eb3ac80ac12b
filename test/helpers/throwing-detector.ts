// A stand-in for detect-antennas.ts whose detector throws, as a detector bug or a fit that blows up
// would: test/inspection-inventory-detection.test.ts runs it on the real worker thread
// (detection-runner.ts `detectorModule`) to check that the inspection ends in inventory status 7
// with the message, its other results kept.
import type { DetectionInput, DetectionOutcome } from '../../src/inspection/inventory/detection/detection-types.ts';

export function detectAntennas(input: DetectionInput): DetectionOutcome {
  if (input.count >= 0) throw new Error('the fit did not converge (test detector)');
  return { kind: 'no-tower', reason: 'unreachable' };
}
