// Markers on one spot of a report drawing share one label (reports/report-marker-labels.ts).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { CLOSE_PT, sharedLabels } from '../src/inspection/reports/report-marker-labels.ts';

it('markers within CLOSE_PT of an earlier one print one label with every number; apart, each its own', () => {
  const labels = sharedLabels([
    { number: 1, at: [100, 100] },
    { number: 2, at: [100 + CLOSE_PT - 1, 100] },
    { number: 3, at: [300, 100] },
    { number: 4, at: [100, 100 + CLOSE_PT / 2] },
    { number: 5, at: [100 + CLOSE_PT + 1, 100] },
  ]);
  assert.deepEqual(labels, ['#1, #2, #4', '', '#3', '', '#5']);
  assert.deepEqual(sharedLabels([]), []);
});
