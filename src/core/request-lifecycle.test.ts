import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse.js';
import { KeyLimiter } from '../limits/key-limiter.js';
import { newUuid, uuidToWords } from '../observability/compact-id.js';
import { EventBus, ID_WORDS, type TraceRecord } from '../observability/events.js';
import { Catalog } from '../routing/catalog.js';
import { chatRequirements } from '../routing/requirements.js';
import type { Clock } from './clock.js';
import { GatewayError } from './errors.js';
import { exactTokensThreshold, RequestLifecycle, type LifecycleDeps, type RequestContext } from './request-lifecycle.js';

const base = { providers: [{ id: 'p', type: 'simulated' }] };

describe('exactTokensThreshold', () => {
  it('is infinite without any tpm limit: the hot path never runs a tokenizer', () => {
    expect(exactTokensThreshold(parseConfig(base, {}))).toBe(Number.POSITIVE_INFINITY);
  });

  it('is 1 % of the smallest tpm among providers, deployments and keys', () => {
    const config = parseConfig(
      {
        providers: [{ id: 'p', type: 'simulated', tpm: 1_000_000 }],
        models: [{ name: 'm', deployments: [{ provider: 'p', model: 'x', tpm: 40_000 }] }],
        keys: [{ id: 'k', key: '${K}', tpm: 90_000 }],
      },
      { K: 'secret' },
    );
    expect(exactTokensThreshold(config)).toBe(400);
  });
});

describe('RequestLifecycle', () => {
  const config = parseConfig(
    {
      providers: [{ id: 'p', type: 'simulated' }],
      models: [{ name: 'm', deployments: [{ provider: 'p', model: 'x' }] }],
      keys: [{ id: 'k', key: '${K}', rpm: 1 }],
    },
    { K: 'secret' },
  );
  const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
  /** A clock the test moves by hand, synchronously (a tokenizer's run takes time without awaiting). */
  function setup() {
    const clock: Clock & { t: number } = { t: Date.UTC(2026, 0, 1), now: () => clock.t, setTimer: () => ({ clear() {}, refresh() {} }), sleep: async () => {} };
    const bus = new EventBus();
    const traces: TraceRecord[] = [];
    bus.on('request', (t) => traces.push(t));
    const deps: LifecycleDeps = { config, clock, random: () => 0.5, catalog: new Catalog(config), keyLimiter: new KeyLimiter(clock), bus, exactTokensFrom: 0 };
    const open = (ctx: RequestContext, tokenizeMs = 0) =>
      new RequestLifecycle(deps, 'm', false, 'chat', chatRequirements(request), ctx, () => {
        clock.t += tokenizeMs;
        return 10;
      });
    return { clock, traces, open };
  }

  it("checks the key's quota at the time the tokenizer finished, not when the request came in", () => {
    const { clock, open } = setup();
    const key = config.keys[0]!;
    open({ key }).finish();
    // rpm 1: the slot taken in the first second frees 61 s later. The next request
    // arrives 1 ms before that, and its tokenizer runs for 5 ms.
    clock.t += 60_999;
    expect(() => open({ key }, 5)).not.toThrow();
    expect(() => open({ key })).toThrow(GatewayError);
  });

  it("records a made id's words, and a caller's words only with its own id and only four of them", () => {
    const { traces, open } = setup();
    open({}).finish();
    const words = traces[0]![ID_WORDS]!;
    const parsed = new Uint32Array(4);
    expect(uuidToWords(traces[0]!.id, parsed, 0)).toBe(true);
    expect([...words]).toEqual([...parsed]);

    open({ requestId: 'job-42' }).finish();
    expect(traces[1]![ID_WORDS]).toBeUndefined();
    open({ requestId: 'job-43', [ID_WORDS]: [1, 2, 3] }).finish();
    expect(traces[2]![ID_WORDS]).toBeUndefined();
    const mine: number[] = [];
    const id = newUuid(mine);
    open({ requestId: id, [ID_WORDS]: mine }).finish();
    expect(traces[3]).toMatchObject({ id });
    expect(traces[3]![ID_WORDS]).toEqual(mine);
  });
});
