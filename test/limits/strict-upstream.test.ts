/**
 * Pacing against an upstream that enforces its limits strictly, the way real
 * providers do: a sliding 60 s window of N requests and T tokens (counted from
 * the usage it answers, at the moment the request arrives), answering 429 with
 * `Retry-After` and `x-ratelimit-*` headers the moment either would be exceeded.
 *
 * The gateway runs on a manual VirtualClock shared with the upstream, so "a
 * minute" is a few loop turns. The promise under test: with `rpm`/`tpm`
 * configured at the upstream's limits, no upstream 429 ever happens, a request
 * beyond capacity waits (up to `throttleMaxWaitMs`) or fails over, and a client
 * only ever sees 200 or 503 `all_candidates_unavailable` with an honest
 * Retry-After.
 */
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../../src/limits/estimate-tokens.js';
import type { ChatRequest } from '../../src/protocol/openai.js';
import { startGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, usageChunk, type RawHit } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

interface StrictOpts {
  rpm: number;
  tpm?: number;
  /** Tokens the upstream counts (and reports) for a prompt; unset: counted as the gateway counts them. */
  promptTokens?: number;
  /** Completion tokens it answers (at most the request's max_tokens). */
  completionTokens: number;
  /** Send x-ratelimit-* headers on success too (what OpenAI does). */
  headersOnSuccess?: boolean;
}

/** One strict OpenAI-compatible upstream; `key` picks the window (so two providers, or one shared). */
class StrictLimiter {
  readonly arrivals: { at: number; tokens: number; model: string }[] = [];
  readonly rejected: { at: number; model: string; retryAfterS: number }[] = [];
  /** Most requests / tokens ever seen inside one 60 s window. */
  peakRequests = 0;
  peakTokens = 0;

  constructor(
    private readonly clock: VirtualClock,
    readonly o: StrictOpts,
  ) {}

  private live(now: number) {
    return this.arrivals.filter((a) => a.at > now - 60_000);
  }

  handle(res: ServerResponse, hit: RawHit): void {
    const now = this.clock.now();
    const model = String(hit.body.model);
    const maxTokens = Number(hit.body.max_tokens ?? 1024);
    const completion = Math.min(this.o.completionTokens, maxTokens);
    const prompt = this.o.promptTokens ?? estimatePromptTokens(hit.body as unknown as ChatRequest, model);
    const tokens = prompt + completion;
    const live = this.live(now);
    const usedReq = live.length;
    const usedTok = live.reduce((s, a) => s + a.tokens, 0);
    const overReq = usedReq + 1 > this.o.rpm;
    const overTok = this.o.tpm !== undefined && usedTok + tokens > this.o.tpm;
    // Fully replenished when the newest arrival leaves the window (OpenAI's meaning of reset).
    const resetReqMs = live.length ? live[live.length - 1]!.at + 60_000 - now : 0;
    const headers = (reqLeft: number, tokLeft: number) => ({
      'x-ratelimit-limit-requests': String(this.o.rpm),
      'x-ratelimit-remaining-requests': String(Math.max(0, reqLeft)),
      'x-ratelimit-reset-requests': `${Math.max(1, resetReqMs) / 1000}s`,
      ...(this.o.tpm !== undefined
        ? {
            'x-ratelimit-limit-tokens': String(this.o.tpm),
            'x-ratelimit-remaining-tokens': String(Math.max(0, tokLeft)),
            'x-ratelimit-reset-tokens': `${Math.max(1, resetReqMs) / 1000}s`,
          }
        : {}),
    });
    if (overReq || overTok) {
      // Seconds until enough leaves the window.
      let need = overReq ? 1 : 0;
      let needTok = overTok ? usedTok + tokens - this.o.tpm! : 0;
      let until = 0;
      for (const a of live) {
        if (need <= 0 && needTok <= 0) break;
        need--;
        needTok -= a.tokens;
        until = a.at + 60_000 - now;
      }
      const retryAfterS = Math.max(1, Math.ceil(until / 1000));
      this.rejected.push({ at: now, model, retryAfterS });
      res.writeHead(429, {
        'content-type': 'application/json',
        'retry-after': String(retryAfterS),
        ...headers(this.o.rpm - usedReq, (this.o.tpm ?? 0) - usedTok),
      });
      res.end(JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }));
      return;
    }
    this.arrivals.push({ at: now, tokens, model });
    const inWindow = this.live(now);
    this.peakRequests = Math.max(this.peakRequests, inWindow.length);
    this.peakTokens = Math.max(this.peakTokens, inWindow.reduce((s, a) => s + a.tokens, 0));
    const h = this.o.headersOnSuccess ? { ...headers(this.o.rpm - usedReq - 1, (this.o.tpm ?? 0) - usedTok - tokens), 'x-ratelimit-reset-requests': '60s' } : {};
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: tokens };
    const text = 'x '.repeat(completion).trim();
    if (hit.body.stream) {
      sseHead(res);
      void h;
      res.write(chunk(model, { role: 'assistant', content: '' }));
      res.write(chunk(model, { content: text }));
      res.write(chunk(model, {}, 'stop'));
      // Usage only when asked, as OpenAI does; otherwise the gateway counts it.
      if ((hit.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) {
        res.write(usageChunk(model, usage.prompt_tokens, usage.completion_tokens));
      }
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', ...h });
    res.end(
      JSON.stringify({
        id: `c-${this.arrivals.length}`,
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage,
      }),
    );
  }
}

async function strictUpstream(clock: VirtualClock, o: StrictOpts) {
  const limiter = new StrictLimiter(clock, o);
  const up = await startRawUpstream((res, hit) => limiter.handle(res, hit));
  closers.push(() => up.close());
  return { limiter, url: up.url };
}

interface Outcome {
  status: number;
  retryAfter?: number;
  code?: string;
  deployment?: string;
  sentAt: number;
  doneAt?: number;
}

const realTick = () => new Promise((r) => setTimeout(r, 5));

/**
 * Drive the gateway: `schedule[i]` requests are fired at virtual second i (all
 * at once: a burst), the clock moving one second at a time (in 250 ms steps)
 * and real time given to the sockets between steps.
 */
async function drive(
  clock: VirtualClock,
  url: string,
  schedule: number[],
  body: (i: number) => Record<string, unknown>,
  tailSeconds = 5,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const pending: Promise<void>[] = [];
  let n = 0;
  const fire = (i: number) => {
    const o: Outcome = { status: 0, sentAt: clock.now() };
    outcomes.push(o);
    const b = body(i);
    pending.push(
      (async () => {
        const r = await request(url, { method: 'POST', body: JSON.stringify(b), headers: { 'content-type': 'application/json' } });
        const text = await r.body.text();
        o.status = r.statusCode;
        o.doneAt = clock.now();
        o.deployment = r.headers['x-switchyard-deployment'] as string | undefined;
        if (r.headers['retry-after'] !== undefined) o.retryAfter = Number(r.headers['retry-after']);
        if (r.statusCode !== 200) o.code = (JSON.parse(text) as { error: { code: string } }).error.code;
        else if (b.stream) expect(text).toContain('data: [DONE]');
      })(),
    );
  };
  let open = 0;
  for (let s = 0; s < schedule.length + tailSeconds; s++) {
    for (let k = 0; k < (schedule[s] ?? 0); k++) fire(n++);
    open = outcomes.filter((o) => o.doneAt === undefined).length;
    if (open === 0 && !schedule[s]) {
      await clock.advance(1000); // a quiet second: nothing in flight to let through
      continue;
    }
    for (let q = 0; q < 4; q++) {
      // Let every request in flight reach the gateway, the upstream and back before time moves.
      for (let t = 0; t < 4; t++) await realTick();
      await clock.advance(250);
    }
  }
  await Promise.all(pending);
  return outcomes;
}

function expectOnlyOkOr503(outcomes: Outcome[]) {
  for (const o of outcomes) {
    if (o.status === 200) continue;
    expect(o.status, JSON.stringify(o)).toBe(503);
    expect(o.code).toBe('all_candidates_unavailable');
    expect(o.retryAfter).toBeGreaterThanOrEqual(1);
  }
}

const T0 = Date.UTC(2026, 0, 1);
const at = (s: number) => T0 + s * 1000;
const served = (out: Outcome[]) => out.filter((o) => o.status === 200).length;

const MSG = [{ role: 'user', content: 'hello there' }];

describe('pacing against a strict upstream', () => {
  it('deployment rpm equal to the upstream window: bursts never earn a 429, excess waits or gets 503', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1, 0, 0, 0, 400));
    const { limiter, url } = await strictUpstream(clock, { rpm: 20, promptTokens: 5, completionTokens: 3 });
    const gw = await startGateway(
      {
        resilience: { maxRetries: 0, throttleMaxWaitMs: 2000 },
        providers: [{ id: 'up', type: 'openai', baseUrl: url }],
        models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm', rpm: 20 }] }],
      },
      { clock },
    );
    closers.push(() => gw.close(0));
    // 30 at once, then 10 a second for 5 s, quiet, then another burst at 70 s and 125 s.
    const schedule = [30, 10, 10, 10, 10, 10];
    schedule[70] = 25;
    schedule[125] = 25;
    const out = await drive(clock, `${gw.baseURL}/chat/completions`, schedule, (i) => ({ model: 'chat', messages: MSG, max_tokens: 3, stream: i % 2 === 1 }));
    expect(limiter.rejected).toEqual([]);
    expect(limiter.peakRequests).toBeLessThanOrEqual(20);
    expectOnlyOkOr503(out);
    // Bursts are smoothed (10 at once, then one every 3 s): 10 + the two that waited for the
    // refill in the first seconds, 10 at 70 s and 10 at 125 s, where the window (20) is full
    // until the end of second 130: the rest were told to come back then.
    expect(served(out)).toBeGreaterThanOrEqual(30);
    expect(served(out)).toBeLessThanOrEqual(32);
    expect(out.some((o) => o.status === 200 && o.doneAt! > o.sentAt + 1000)).toBe(true); // waited for capacity
    const late = out.filter((o) => o.sentAt >= at(125) && o.status === 503);
    expect(late.length).toBeGreaterThan(0);
    for (const o of late) expect(o.doneAt! + o.retryAfter! * 1000).toBeGreaterThanOrEqual(at(131));
  }, 60_000);

  it('tpm equal to the upstream token window, streams and buffered: real tokens never exceed it', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1, 0, 0, 0, 900));
    // Answers use 60 of the 100 max_tokens each request reserves.
    const { limiter, url } = await strictUpstream(clock, { rpm: 1000, tpm: 1000, completionTokens: 60 });
    const gw = await startGateway(
      {
        resilience: { maxRetries: 0, throttleMaxWaitMs: 2000 },
        providers: [{ id: 'up', type: 'openai', baseUrl: url }],
        models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'gpt-4o-mini', tpm: 1000 }] }],
      },
      { clock },
    );
    closers.push(() => gw.close(0));
    const schedule = [12, 6, 6, 0, 0, 6];
    schedule[61] = 12;
    schedule[90] = 12;
    const out = await drive(clock, `${gw.baseURL}/chat/completions`, schedule, (i) => ({
      model: 'chat',
      messages: MSG,
      max_tokens: 100,
      stream: i % 2 === 1,
      ...(i % 4 === 1 ? { stream_options: { include_usage: true } } : {}),
    }));
    expect(limiter.rejected).toEqual([]);
    expect(limiter.peakTokens).toBeLessThanOrEqual(1000);
    expectOnlyOkOr503(out);
    // Nine estimates (prompt + 100) fit at once; as answers correct them to what was used
    // (prompt + 60), waiting requests take the freed room, up to ~13 a minute.
    expect(served(out)).toBeGreaterThanOrEqual(20);
    expect(out.some((o) => o.status === 200 && o.doneAt! > o.sentAt)).toBe(true);
    for (const o of out.filter((o) => o.status === 503)) {
      // When a tenth can go: the first second's reservations leave at the end of second 61.
      expect(o.doneAt! + o.retryAfter! * 1000).toBeGreaterThanOrEqual(o.sentAt < at(61) ? at(61) : at(122));
    }
  }, 60_000);

  it('provider-level limits shared by two deployments: together they stay under it, excess fails over or waits', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1, 0, 0, 0, 100));
    const shared = await strictUpstream(clock, { rpm: 15, tpm: 3000, promptTokens: 10, completionTokens: 50 });
    const spare = await strictUpstream(clock, { rpm: 10, promptTokens: 10, completionTokens: 50 });
    const gw = await startGateway(
      {
        resilience: { maxRetries: 0, throttleMaxWaitMs: 1500 },
        providers: [
          { id: 'free', type: 'openai', baseUrl: shared.url, rpm: 15, tpm: 3000 },
          { id: 'spare', type: 'openai', baseUrl: spare.url, rpm: 10 },
        ],
        models: [
          { name: 'a', deployments: [{ provider: 'free', model: 'm1' }], fallbacks: ['b'] },
          { name: 'b', deployments: [{ provider: 'free', model: 'm2' }], fallbacks: ['c'] },
          { name: 'c', deployments: [{ provider: 'spare', model: 'm3' }] },
        ],
      },
      { clock },
    );
    closers.push(() => gw.close(0));
    const schedule = [20, 10, 5, 5];
    schedule[65] = 30;
    const out = await drive(clock, `${gw.baseURL}/chat/completions`, schedule, (i) => ({
      model: i % 3 === 0 ? 'b' : 'a',
      messages: MSG,
      max_tokens: 50,
      stream: i % 2 === 0,
    }));
    expect(shared.limiter.rejected).toEqual([]);
    expect(spare.limiter.rejected).toEqual([]);
    expect(shared.limiter.peakRequests).toBeLessThanOrEqual(15);
    expect(shared.limiter.peakTokens).toBeLessThanOrEqual(3000);
    expectOnlyOkOr503(out);
    // The spare provider took the overflow.
    expect(out.filter((o) => o.deployment === 'spare/m3').length).toBeGreaterThan(0);
    // free: a burst of 10, one more that waited for its bucket; spare: its burst of 10; at 65 s both again.
    expect(served(out)).toBeGreaterThanOrEqual(39);
    expect(served(out)).toBeLessThanOrEqual(41);
  }, 60_000);

  it('a 503 says when to come back, and coming back then is served', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1, 0, 0, 0, 0));
    const { limiter, url } = await strictUpstream(clock, { rpm: 10, promptTokens: 5, completionTokens: 3 });
    const gw = await startGateway(
      {
        resilience: { maxRetries: 0, throttleMaxWaitMs: 500 },
        providers: [{ id: 'up', type: 'openai', baseUrl: url, rpm: 10 }],
        models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm' }] }],
      },
      { clock },
    );
    closers.push(() => gw.close(0));
    const u = `${gw.baseURL}/chat/completions`;
    const out = await drive(clock, u, [12], () => ({ model: 'chat', messages: MSG, max_tokens: 3 }), 1);
    const refused = out.filter((o) => o.status === 503);
    expect(refused).toHaveLength(2);
    const ra = refused[0]!.retryAfter!;
    // Sent in second 0: the window frees at the end of second 60.
    expect(clock.now() + ra * 1000).toBeGreaterThanOrEqual(Date.UTC(2026, 0, 1, 0, 1, 1));
    await clock.advance(ra * 1000 - (clock.now() - refused[0]!.doneAt!));
    const again = await drive(clock, u, [1], () => ({ model: 'chat', messages: MSG, max_tokens: 3 }), 1);
    expect(again[0]!.status).toBe(200);
    expect(limiter.rejected).toEqual([]);
  }, 30_000);

  it('tightens to what the upstream headers say is left when it allows less than configured', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1, 0, 0, 0, 0));
    // Configured 30 rpm; the upstream actually allows 12 and says so on every answer.
    const { limiter, url } = await strictUpstream(clock, { rpm: 12, promptTokens: 5, completionTokens: 3, headersOnSuccess: true });
    const gw = await startGateway(
      {
        resilience: { maxRetries: 0, throttleMaxWaitMs: 2000 },
        providers: [{ id: 'up', type: 'openai', baseUrl: url, rpm: 30 }],
        models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm' }] }],
      },
      { clock },
    );
    closers.push(() => gw.close(0));
    // One at a time at first (each answer teaches), then bursts.
    const schedule = [1, 1, 1, 1, 8, 8, 8];
    schedule[30] = 10;
    const out = await drive(clock, `${gw.baseURL}/chat/completions`, schedule, (i) => ({ model: 'chat', messages: MSG, max_tokens: 3, stream: i % 2 === 1 }));
    expectOnlyOkOr503(out);
    // The linear-refill model can run ahead of a window upstream (docs: "expect an occasional
    // 429"): such a 429 never reaches a client, and its Retry-After is obeyed and passed on.
    expect(limiter.rejected.length).toBeGreaterThan(0);
    for (const r of limiter.rejected) {
      const blockedUntil = r.at + r.retryAfterS * 1000;
      // Nothing more went to the upstream while it said to wait.
      const sentDuring = [...limiter.arrivals, ...limiter.rejected].filter((a) => a.at > r.at && a.at < blockedUntil);
      expect(sentDuring).toEqual([]);
      // A client refused during the block is told to come back no sooner than its end.
      for (const o of out.filter((o) => o.status === 503 && o.doneAt! >= r.at && o.doneAt! < blockedUntil)) {
        expect(o.doneAt! + o.retryAfter! * 1000, JSON.stringify(o)).toBeGreaterThanOrEqual(blockedUntil);
      }
    }
  }, 60_000);
});

describe('a request that waited for capacity, then met the upstream limit', () => {
  it('is refused with the Retry-After the upstream gave, not one second', async () => {
    const clock = new VirtualClock(at(0));
    // Configured 60 rpm (10 at once, then one a second); the upstream takes only 10 a minute.
    const { limiter, url } = await strictUpstream(clock, { rpm: 10, promptTokens: 5, completionTokens: 3 });
    const gw = await startGateway(
      {
        resilience: { maxRetries: 0, throttleMaxWaitMs: 2000 },
        providers: [{ id: 'up', type: 'openai', baseUrl: url, rpm: 60 }],
        models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm' }] }],
      },
      { clock },
    );
    closers.push(() => gw.close(0));
    const out = await drive(clock, `${gw.baseURL}/chat/completions`, [11], (i) => ({ model: 'chat', messages: MSG, max_tokens: 3, stream: i % 2 === 1 }), 3);
    expect(served(out)).toBe(10);
    // The eleventh waited a second for the bucket, was sent, and got a 429 saying 59 s.
    expect(limiter.rejected).toHaveLength(1);
    const blockedUntil = limiter.rejected[0]!.at + limiter.rejected[0]!.retryAfterS * 1000;
    const refused = out.find((o) => o.status === 503)!;
    expect(refused.code).toBe('all_candidates_unavailable');
    expect(refused.doneAt! + refused.retryAfter! * 1000).toBeGreaterThanOrEqual(blockedUntil);
  }, 30_000);
});
