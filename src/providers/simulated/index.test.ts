import { describe, expect, it } from 'vitest';
import { createSimulatedAdapter, type SimulatedAdapter } from './index.js';
import { simulateReply } from './reply.js';
import { unitVector } from './embeddings.js';
import type { ProviderConfig, SimulateConfig } from '../../config/types.js';
import type { ChatCompletionChunk, ChatRequest } from '../../protocol/openai.js';
import type { AttemptContext } from '../types.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';

const noRandom = (): number => 0.5;

function adapter(sim: Partial<SimulateConfig>, clock: VirtualClock): SimulatedAdapter {
  const provider: ProviderConfig = {
    id: 'sim',
    type: 'simulated',
    baseUrl: 'http://simulated.invalid',
    locality: 'local',
    headers: {},
    maxConnections: 1,
    simulate: { latencyMs: 100, ttftMs: 200, tokensPerSecond: 10, faults: [], ...sim },
  };
  return createSimulatedAdapter(provider, { clock, random: noRandom });
}

function ctx(signal = new AbortController().signal): AttemptContext {
  return { signal, model: 'sim-model', requestId: 'req-1' };
}

const request: ChatRequest = { model: 'alias', messages: [{ role: 'user', content: 'Hello?' }] };
const fullText = simulateReply(request, { provider: 'sim', model: 'sim-model' }).choices[0]!.pieces.join('');

/** Settle state of a promise without awaiting it. */
function track<T>(p: Promise<T>): { settled: () => boolean; value: () => T | undefined; error: () => unknown } {
  let settled = false;
  let value: T | undefined;
  let error: unknown;
  p.then(
    (v) => ((settled = true), (value = v)),
    (e) => ((settled = true), (error = e)),
  );
  return { settled: () => settled, value: () => value, error: () => error };
}

async function drain(stream: AsyncIterable<ChatCompletionChunk>, clock: VirtualClock, start: number) {
  const got: { at: number; chunk: ChatCompletionChunk }[] = [];
  let error: unknown;
  try {
    for await (const chunk of stream) got.push({ at: clock.now() - start, chunk });
  } catch (e) {
    error = e;
  }
  return { got, error };
}

const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const content = (chunks: { chunk: ChatCompletionChunk }[]): string =>
  chunks.map(({ chunk }) => chunk.choices[0]?.delta.content ?? '').join('');

describe('simulated adapter: buffered', () => {
  it('answers after latencyMs with a full chat.completion naming the concrete model', async () => {
    const clock = new VirtualClock();
    const a = adapter({}, clock);
    const t = track(a.chat(request, ctx()));
    await clock.advance(99);
    expect(t.settled()).toBe(false);
    await clock.advance(1);
    const res = t.value()!.response;
    expect(res.model).toBe('sim-model');
    expect(res.id).toMatch(/^chatcmpl-sim-/);
    expect(res.choices[0]!.message.content).toBe(fullText);
    expect(res.usage!.completion_tokens).toBeGreaterThan(5);
    expect(clock.pending).toBe(0);
  });

  it('adds a slow rule’s delay', async () => {
    const clock = new VirtualClock();
    const a = adapter({ faults: [{ kind: 'slow', probability: 1, delayMs: 400 }] }, clock);
    const t = track(a.chat(request, ctx()));
    await clock.advance(499);
    expect(t.settled()).toBe(false);
    await clock.advance(1);
    expect(t.settled()).toBe(true);
  });
});

describe('simulated adapter: OpenAI shape', () => {
  it('buffered and streamed answers carry the fields OpenAI always sends, as the native adapters do (typed clients require them)', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({}, clock);
    // As the client decodes them: a field left undefined is absent on the wire.
    const buffered = wire((await a.chat(request, ctx())).response);
    const chunks = wire((await drain(await a.chatStream(request, ctx()), clock, clock.now())).got.map((g) => g.chunk));
    expect(buffered).toHaveProperty('system_fingerprint', 'fp_simulated');
    expect(buffered.choices[0]).toMatchObject({ logprobs: null, message: { refusal: null } });
    for (const c of chunks) {
      expect(c).toHaveProperty('system_fingerprint', 'fp_simulated');
      for (const choice of c.choices) expect(choice).toHaveProperty('logprobs', null);
    }
    // delta.refusal where OpenAI sends it: in the role chunk, and only there.
    expect(chunks.filter((c) => c.choices[0]?.delta.refusal === null).map((c) => c.choices[0]!.delta.role)).toEqual(['assistant']);
  });
});

describe('simulated adapter: stream', () => {
  it('paces chunks: headers at latency, first piece at ttft, then 1000/tps apart, then finish and usage', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({}, clock);
    const start = clock.now();
    const stream = await a.chatStream(request, ctx());
    expect(clock.now() - start).toBe(100);
    const { got, error } = await drain(stream, clock, start);
    expect(error).toBeUndefined();

    const pieces = simulateReply(request, { provider: 'sim', model: 'sim-model' }).choices[0]!.pieces;
    expect(got).toHaveLength(1 + pieces.length + 2);
    expect(got[0]!.at).toBe(100);
    expect(got[0]!.chunk.choices[0]!.delta).toMatchObject({ role: 'assistant', content: '' });
    got.slice(1, 1 + pieces.length).forEach(({ at, chunk }, i) => {
      expect(at).toBe(300 + i * 100);
      expect(chunk.choices[0]!.delta.content).toBe(pieces[i]);
      expect(chunk.model).toBe('sim-model');
    });
    const finish = got[1 + pieces.length]!;
    expect(finish.chunk.choices[0]!.finish_reason).toBe('stop');
    expect(finish.at).toBe(300 + (pieces.length - 1) * 100);
    const usage = got[got.length - 1]!.chunk;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ completion_tokens: pieces.length });
    expect(content(got)).toBe(fullText);
    expect(stream.malformed).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('streams a forced tool call as header and arguments, finishing with tool_calls', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({}, clock);
    const req: ChatRequest = { ...request, tools: [{ type: 'function', function: { name: 'lookup' } }], tool_choice: 'required' };
    const { got } = await drain(await a.chatStream(req, ctx()), clock, clock.now());
    const deltas = got.map((g) => g.chunk.choices[0]?.delta.tool_calls?.[0]);
    expect(deltas[1]).toEqual({ index: 0, id: 'call_sim_1', type: 'function', function: { name: 'lookup', arguments: '' } });
    expect(deltas[2]).toEqual({ index: 0, function: { arguments: '{"ok":true}' } });
    expect(got[3]!.chunk.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('stream_abort yields afterChunks pieces then throws network; a prefill resume completes the text exactly', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({}, clock);
    a.script.enqueue({ kind: 'stream_abort', afterChunks: 3 });
    const cut = await drain(await a.chatStream(request, ctx()), clock, clock.now());
    expect(cut.got).toHaveLength(4); // role + 3 pieces
    expect(cut.error).toBeInstanceOf(UpstreamError);
    expect((cut.error as UpstreamError).category).toBe('network');
    const partial = content(cut.got);

    const resumed = { ...request, messages: [...request.messages, { role: 'assistant' as const, content: partial }] };
    const rest = await drain(await a.chatStream(resumed, ctx()), clock, clock.now());
    expect(rest.error).toBeUndefined();
    expect(partial + content(rest.got)).toBe(fullText);
  });

  it('throws the abort reason during the latency and mid-stream', async () => {
    const clock = new VirtualClock();
    const a = adapter({}, clock);
    const early = new AbortController();
    const t = track(a.chatStream(request, ctx(early.signal)));
    await clock.advance(50);
    const reason = new Error('ttft timeout');
    early.abort(reason);
    await clock.advance(0);
    expect(t.error()).toBe(reason);

    const mid = new AbortController();
    const p = a.chatStream(request, ctx(mid.signal));
    await clock.advance(100);
    const it = (await p)[Symbol.asyncIterator]();
    await it.next(); // role chunk
    const next = track(it.next()); // waiting for the first piece
    await clock.advance(150);
    const stall = new Error('stall');
    mid.abort(stall);
    await clock.advance(0);
    expect(next.error()).toBe(stall);
    expect(clock.pending).toBe(0);
  });
});

describe('simulated adapter: n > 1, as OpenAI answers it', () => {
  const two: ChatRequest = { ...request, n: 2 };
  /** One line per chunk: its time, its choice's index, and what it says. */
  const lines = (got: { at: number; chunk: ChatCompletionChunk }[]) =>
    got.map(({ at, chunk }) => {
      const ch = chunk.choices[0];
      if (!ch) return `${at} usage ${chunk.usage!.completion_tokens}`;
      expect(chunk.choices).toHaveLength(1);
      const said = ch.finish_reason ? `finish ${ch.finish_reason}` : ch.delta.role ? 'role' : ch.delta.tool_calls ? JSON.stringify(ch.delta.tool_calls) : JSON.stringify(ch.delta.content);
      return `${at} ${ch.index} ${said}`;
    });

  /** The stream's chunks, timed from the request (as the pacing test does). */
  async function streamed(a: SimulatedAdapter, req: ChatRequest, clock: VirtualClock) {
    const start = clock.now();
    return drain(await a.chatStream(req, ctx()), clock, start);
  }

  it('buffered: n choices, index 0..n-1, each its own text', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const res = (await adapter({}, clock).chat(two, ctx())).response;
    expect(res.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(res.choices[0]!.message.content).not.toBe(res.choices[1]!.message.content);
    expect(res.usage).toEqual(simulateReply(two, { provider: 'sim', model: 'sim-model' }).usage);
  });

  it('streamed: every role chunk first, then the pieces side by side, each choice finishing after its last, then usage', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({ reply: 'one two #{choice}' }, clock);
    const { got, error } = await streamed(a, two, clock);
    expect(error).toBeUndefined();
    expect(lines(got)).toEqual([
      '100 0 role',
      '100 1 role',
      '300 0 "one "',
      '300 1 "one "',
      '400 0 "two "',
      '400 1 "two "',
      '500 0 "#0"',
      '500 0 finish stop',
      '500 1 "#1"',
      '500 1 finish stop',
      '500 usage 6',
    ]);
    expect(clock.pending).toBe(0);
  });

  it('streamed: a choice with less to say finishes first while the other goes on', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({ reply: 'one #{choice} two three' }, clock);
    // A prefill that begins choice 0's text only: choice 0 says the rest, choice 1 all of its own.
    const prefilled = (text: string): ChatRequest => ({ ...two, messages: [...request.messages, { role: 'assistant', content: text }] });
    expect(lines((await streamed(a, prefilled('one #0 '), clock)).got)).toEqual([
      '100 0 role',
      '100 1 role',
      '300 0 "two "',
      '300 1 "one "',
      '400 0 "three"',
      '400 0 finish stop',
      '400 1 "#1 "',
      '500 1 "two "',
      '600 1 "three"',
      '600 1 finish stop',
      '600 usage 6',
    ]);
    // Nothing left to say: that choice finishes at once.
    expect(lines((await streamed(a, prefilled('one #0 two three'), clock)).got).slice(0, 4)).toEqual(['100 0 role', '100 1 role', '100 0 finish stop', '300 1 "one "']);
  });

  it('streamed tool calls: each choice its own call, header then arguments', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const req: ChatRequest = { ...two, tools: [{ type: 'function', function: { name: 'lookup' } }], tool_choice: 'required' };
    const { got } = await streamed(adapter({}, clock), req, clock);
    const header = (id: string) => JSON.stringify([{ index: 0, id, type: 'function', function: { name: 'lookup', arguments: '' } }]);
    const args = JSON.stringify([{ index: 0, function: { arguments: '{"ok":true}' } }]);
    expect(lines(got).slice(0, -1)).toEqual([
      '100 0 role',
      '100 1 role',
      `300 0 ${header('call_sim_1')}`,
      `300 1 ${header('call_sim_2')}`,
      `400 0 ${args}`,
      '400 0 finish tool_calls',
      `400 1 ${args}`,
      '400 1 finish tool_calls',
    ]);
    expect(got[0]!.chunk.choices[0]!.delta.content).toBeNull();
  });

  it('stream_abort counts the content chunks of every choice, and a cut stream never finishes every choice', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({ reply: 'one two #{choice}' }, clock);
    a.script.enqueue({ kind: 'stream_abort', afterChunks: 3 });
    const cut = await streamed(a, two, clock);
    expect(lines(cut.got)).toEqual(['100 0 role', '100 1 role', '300 0 "one "', '300 1 "one "', '400 0 "two "']);
    expect((cut.error as UpstreamError).category).toBe('network');

    // More chunks than the answer has: every piece goes out, and choice 0 finishes, but not choice 1.
    a.script.enqueue({ kind: 'stream_abort', afterChunks: 50 });
    const late = await streamed(a, two, clock);
    expect(lines(late.got).slice(-3)).toEqual(['500 0 "#0"', '500 0 finish stop', '500 1 "#1"']);
    expect(late.got).toHaveLength(2 + 6 + 1);
    expect((late.error as UpstreamError).category).toBe('network');
  });

  it('stall counts the content chunks of every choice, then is silent until the attempt is aborted', async () => {
    const clock = new VirtualClock(0, false);
    const a = adapter({ latencyMs: 0, ttftMs: 0, reply: 'one two #{choice}' }, clock);
    a.script.enqueue({ kind: 'stall', afterChunks: 3 });
    const ac = new AbortController();
    const got: string[] = [];
    const done = (async () => {
      for await (const c of await a.chatStream(two, ctx(ac.signal))) got.push(`${c.choices[0]!.index} ${c.choices[0]!.delta.content}`);
    })().catch((e: unknown) => e);
    await clock.advance(60_000);
    expect(got).toEqual(['0 ', '1 ', '0 one ', '1 one ', '0 two ']);
    ac.abort(new Error('stalled'));
    expect(((await done) as Error).message).toBe('stalled');
  });
});

describe('simulated adapter: faults classify like a real upstream', () => {
  async function failure(plan: Parameters<SimulatedAdapter['script']['enqueue']>[0], stream = false): Promise<UpstreamError> {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({}, clock);
    a.script.enqueue(plan);
    const err = await (stream ? a.chatStream(request, ctx()) : a.chat(request, ctx())).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamError);
    return err as UpstreamError;
  }

  it('rate_limit → 429 rate_limited with Retry-After in ms (or none)', async () => {
    const e = await failure({ kind: 'rate_limit', retryAfterS: 7 });
    expect([e.status, e.category, e.retryAfterMs, e.providerCode]).toEqual([429, 'rate_limited', 7000, 'rate_limit_exceeded']);
    const bare = await failure({ kind: 'rate_limit' }, true);
    expect([bare.category, bare.retryAfterMs]).toEqual(['rate_limited', undefined]);
  });

  it('status → category by status and body', async () => {
    expect((await failure({ kind: 'status', status: 529 })).category).toBe('overloaded');
    expect((await failure({ kind: 'status', status: 503 }, true)).category).toBe('server');
    expect((await failure({ kind: 'status', status: 500 })).label).toBe('500 server');
    expect((await failure({ kind: 'status', status: 401 })).category).toBe('auth');
    const ctxLen = await failure({ kind: 'status', status: 400, message: "This model's maximum context length is 8192 tokens." });
    expect([ctxLen.status, ctxLen.category]).toEqual([400, 'context_length']);
    expect((await failure({ kind: 'status', status: 400 })).category).toBe('invalid_request');
  });

  it('reset → network ECONNRESET; stream_abort on a buffered request is a reset', async () => {
    const e = await failure({ kind: 'reset' }, true);
    expect([e.category, e.providerCode, e.status]).toEqual(['network', 'ECONNRESET', undefined]);
    expect((await failure({ kind: 'stream_abort', afterChunks: 2 })).providerCode).toBe('ECONNRESET');
  });

  it('hang never answers until the signal aborts, then throws its reason', async () => {
    const clock = new VirtualClock();
    const a = adapter({}, clock);
    a.script.enqueue({ kind: 'hang' });
    const ac = new AbortController();
    const t = track(a.chat(request, ctx(ac.signal)));
    await clock.advance(3_600_000);
    expect(t.settled()).toBe(false);
    const reason = new Error('attempt timeout');
    ac.abort(reason);
    await clock.advance(0);
    expect(t.error()).toBe(reason);
  });

  it('the free tier answers 429 with Retry-After once rpmLimit is used up', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({ rpmLimit: 2, latencyMs: 0 }, clock);
    await a.chat(request, ctx());
    await a.chat(request, ctx());
    const e = (await a.chat(request, ctx()).catch((x: unknown) => x)) as UpstreamError;
    expect([e.category, e.retryAfterMs]).toEqual(['rate_limited', 60_000]);
  });
});

describe('simulated adapter: embeddings', () => {
  it('returns deterministic vectors after the latency, and honours faults', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const a = adapter({}, clock);
    const start = clock.now();
    const res = await a.embeddings!({ model: 'alias', input: ['a', 'b'] }, ctx());
    expect(clock.now() - start).toBe(100);
    expect(res.response.model).toBe('sim-model');
    expect(res.response.data[1]!.embedding).toEqual(unitVector('b', 8));
    a.script.enqueue({ kind: 'status', status: 529 });
    const e = (await a.embeddings!({ model: 'alias', input: 'a' }, ctx()).catch((x: unknown) => x)) as UpstreamError;
    expect(e.category).toBe('overloaded');
  });
});

describe('stall', () => {
  it('streams afterChunks content chunks, then stays silent until the attempt is aborted', async () => {
    const clock = new VirtualClock(0, false);
    const provider: ProviderConfig = {
      id: 'sim', type: 'simulated', baseUrl: 'simulated://local', locality: 'local', headers: {}, maxConnections: 1,
      simulate: { latencyMs: 0, ttftMs: 0, tokensPerSecond: 1000, faults: [{ kind: 'stall', probability: 1, afterChunks: 2 }] },
    };
    const adapter = createSimulatedAdapter(provider, { clock, random: () => 0 });
    const ac = new AbortController();
    const stream = await adapter.chatStream({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { signal: ac.signal, model: 'm', requestId: 'r' });
    const seen: string[] = [];
    const done = (async () => {
      for await (const c of stream) seen.push(c.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    await clock.advance(60_000);
    expect(seen.filter((t) => t.length > 0)).toHaveLength(2);
    ac.abort(new Error('stalled'));
    expect(((await done) as Error).message).toBe('stalled');
  });
});
