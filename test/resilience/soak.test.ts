/**
 * The 20-second version of `npm run soak`: two faulty upstreams and one healthy
 * behind one alias, mixed buffered and streamed traffic. Not one client-visible
 * error is allowed; streams broken after their first chunk are reported apart
 * (with resume on and a healthy prefill-capable fallback, there should be none).
 */
import { expect, it } from 'vitest';
import { runSoak } from '../../scripts/soak.js';

it('20 s of faults: zero client-visible errors', async () => {
  const r = await runSoak(20, 8);
  expect(r.requests).toBeGreaterThan(500);
  expect(r.errors).toEqual({});
  expect(r.ok + r.brokenStreams).toBe(r.requests);
  expect(r.brokenStreams).toBe(0);
  expect(r.fallbacks).toBeGreaterThan(0);
}, 60_000);
