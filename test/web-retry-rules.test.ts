// Why the processing page offers no Retry (web/src/lib/retry-rules.ts), from the spec's conditions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryBlockedReason } from '../web/src/lib/retry-rules.ts';

const now = new Date('2026-11-24T12:00:00Z');
const base = { status: 16, created_at: '2026-11-20T12:00:00Z', can_retry: false, retries: [] as { status: number }[] };

test('retry: nothing to say when allowed, while working, or before processing', () => {
  assert.equal(retryBlockedReason({ ...base, can_retry: true }, now), undefined);
  for (const status of [1, 2, 3, 4, 5, 12, 20, 25, 24, 27]) assert.equal(retryBlockedReason({ ...base, status }, now), undefined, String(status));
});

test('retry: the first failed condition of the spec, in words', () => {
  for (const status of [13, 15, 19]) assert.match(retryBlockedReason({ ...base, status }, now)!, /cannot be retried/, String(status));
  assert.match(retryBlockedReason({ ...base, created_at: '2026-11-09T11:59:59Z' }, now)!, /15 days/);
  assert.match(retryBlockedReason({ ...base, retries: [{ status: 4 }] }, now)!, /already in progress/);
  assert.match(retryBlockedReason({ ...base, retries: [{ status: 16 }, { status: 7 }] }, now)!, /2 times/);
  assert.match(retryBlockedReason({ ...base, status: 7, retries: [{ status: 16 }] }, now)!, /not possible/);
});
