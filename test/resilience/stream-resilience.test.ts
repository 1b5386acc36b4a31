/**
 * Streams that misbehave exactly, over real sockets: a raw upstream scripted
 * byte by byte, the gateway, and the official `openai` client reading the
 * result. The bar: the client receives the whole answer exactly once (resume),
 * or a clear error event — never a stream cut presented as finished.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, usageChunk, writeWords, type RawHandler, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';
import { hungUp, seenText, traceOf, within } from '../helpers/wait.js';

const FULL = 'The quick brown fox jumps over the lazy dog and keeps running far away.';
const WORDS = FULL.split(/(?<= )/);
const IDLE_MS = 300;

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** What the client has read of this test's answer: an upstream cuts once the gateway forwarded the words before the cut. */
let shown = seenText();

interface Setup {
  primary: RawHandler;
  primaryPrefill?: boolean;
  /** Secondary: a fault server replying FULL (so a prefill continuation is its remainder), or a raw handler. */
  secondary?: RawHandler | 'fault';
  secondaryPrefill?: boolean;
  resilience?: Record<string, unknown>;
  /** The gateway's clock (real time when absent). */
  clock?: VirtualClock;
}

async function setup(s: Setup) {
  const primary = await startRawUpstream(s.primary);
  closers.push(() => primary.close());
  let secondaryUrl: string | undefined;
  let fault: FaultServer | undefined;
  let rawSecondary: RawUpstream | undefined;
  if (s.secondary === 'fault') {
    fault = await startFaultServer({ simulate: { reply: FULL } });
    closers.push(() => fault!.close());
    secondaryUrl = fault.url;
  } else if (s.secondary) {
    rawSecondary = await startRawUpstream(s.secondary);
    closers.push(() => rawSecondary!.close());
    secondaryUrl = rawSecondary.url;
  }
  const providers: Record<string, unknown>[] = [{ id: 'primary', type: 'openai', baseUrl: primary.url }];
  const models: Record<string, unknown>[] = [
    {
      name: 'chat',
      deployments: [{ provider: 'primary', model: 'p-model', capabilities: s.primaryPrefill ? ['prefill'] : [] }],
      fallbacks: secondaryUrl ? ['backup'] : [],
    },
  ];
  if (secondaryUrl) {
    providers.push({ id: 'secondary', type: 'openai', baseUrl: secondaryUrl });
    models.push({ name: 'backup', deployments: [{ provider: 'secondary', model: 's-model', capabilities: s.secondaryPrefill ? ['prefill'] : [] }] });
  }
  const gw: TestGateway = await startGateway({
    resilience: { ttftTimeoutMs: 300, idleTimeoutMs: IDLE_MS, requestTimeoutMs: 2000, maxRetries: 0, ...s.resilience },
    providers,
    models,
  }, { clock: s.clock });
  closers.push(() => gw.close(0));
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
  shown = seenText();
  return { gw, client, primary, fault, rawSecondary };
}

interface Read {
  text: string;
  models: Set<string>;
  usage: OpenAI.CompletionUsage | undefined;
  finish: string | null;
  error: unknown;
  ms: number;
  requestId: string | null;
}

async function read(client: OpenAI): Promise<Read> {
  const t0 = Date.now();
  const { data: stream, response } = await client.chat.completions
    .create({ model: 'chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'tell me' }] })
    .withResponse();
  const r: Read = { text: '', models: new Set(), usage: undefined, finish: null, error: undefined, ms: 0, requestId: response.headers.get('x-request-id') };
  try {
    for await (const c of stream) {
      r.models.add(c.model);
      const piece = c.choices[0]?.delta.content ?? '';
      r.text += piece;
      shown.add(piece);
      r.finish = c.choices[0]?.finish_reason ?? r.finish;
      if (c.usage) r.usage = c.usage;
    }
  } catch (err) {
    r.error = err;
  }
  r.ms = Date.now() - t0;
  shown.check();
  return r;
}

/** A well-behaved upstream answer for the rest of the words after `from`. */
async function finishAnswer(res: Parameters<RawHandler>[0], model: string, from: number): Promise<void> {
  await writeWords(res, model, WORDS.slice(from));
  res.write(chunk(model, {}, 'stop'));
  res.write(usageChunk(model, 12, WORDS.length - from));
  res.end('data: [DONE]\n\n');
}

describe('time to first token', () => {
  it('a first token later than ttftTimeoutMs fails over (role chunks and keep-alives do not count)', async () => {
    const { client, gw } = await setup({
      primary: async (res) => {
        sseHead(res);
        res.write(chunk('p-model', { role: 'assistant', content: '' }));
        res.write(': keep-alive\n\n');
        // No content while the gateway waits: it must give up at ttftTimeoutMs and hang up.
        await hungUp(res);
      },
      secondary: 'fault',
    });
    const r = await read(client);
    expect(r.error).toBeUndefined();
    expect(r.text).toBe(FULL);
    expect([...r.models]).toEqual(['s-model']);
    expect(r.ms).toBeLessThan(1400);
    expect(r.usage?.completion_tokens).toBeGreaterThan(0);
    const t = await traceOf(gw, r.requestId);
    expect(t.attempts[0]!.errorType).toBe('timeout');
    expect(t.fallbackUsed).toBe(true);
  });
});

describe('stalls and cuts after the first token', () => {
  const stallAfter3: RawHandler = async (res) => {
    sseHead(res);
    res.write(chunk('p-model', { role: 'assistant', content: '' }));
    await writeWords(res, 'p-model', WORDS.slice(0, 3));
    await hungUp(res); // silence, connection held open until the gateway gives up on it
  };
  const cutAfter3: RawHandler = async (res) => {
    sseHead(res);
    res.write(chunk('p-model', { role: 'assistant', content: '' }));
    await writeWords(res, 'p-model', WORDS.slice(0, 3));
    // Cut once the client has the three words: the gateway forwarded them, so the cut comes after commit.
    await shown.reached(WORDS.slice(0, 3).join(''));
    res.destroy();
  };

  /**
   * Reads the answer on a gateway with a virtual clock: once the client has the three words the
   * upstream then goes silent after (so the gateway took the last one), idleTimeoutMs passes.
   */
  async function readThroughStall(client: OpenAI, clock: VirtualClock): Promise<Read> {
    const reading = read(client);
    await shown.reached(WORDS.slice(0, 3).join(''));
    await clock.advance(IDLE_MS);
    return within(reading, 'the stream to go on (resumed, or ended with an error) once idleTimeoutMs passed in silence');
  }

  it('a stall is resumed on a prefill-capable fallback: the whole answer, exactly once', async () => {
    const clock = new VirtualClock();
    const { client, gw, fault } = await setup({ primary: stallAfter3, secondary: 'fault', secondaryPrefill: true, clock });
    const r = await readThroughStall(client, clock);
    expect(r.error).toBeUndefined();
    expect(r.text).toBe(FULL);
    expect(r.finish).toBe('stop');
    // The continuation was asked with the delivered text as a final assistant message.
    const msgs = (fault!.requests[0]!.body as { messages: { role: string; content: string }[] }).messages;
    expect(msgs[msgs.length - 1]).toEqual({ role: 'assistant', content: WORDS.slice(0, 3).join('') });
    expect(r.usage!.completion_tokens).toBeGreaterThan(0);
    expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
    const t = await traceOf(gw, r.requestId);
    expect(t.resumed).toBe(true);
    expect(t.streamOutcome).toBe('resumed');
    expect(t.attempts.map((a) => [a.provider, a.errorType, a.resume ?? false])).toEqual([
      ['primary', 'timeout', false],
      ['secondary', null, true],
    ]);
  });

  it('a stall with nothing able to continue ends with a bounded error event', async () => {
    const clock = new VirtualClock();
    const { client, gw } = await setup({ primary: stallAfter3, clock });
    // Bounded: it ends when idleTimeoutMs has passed (readThroughStall fails if it does not).
    const r = await readThroughStall(client, clock);
    expect(r.text).toBe(WORDS.slice(0, 3).join(''));
    expect(r.error).toBeInstanceOf(OpenAI.APIError);
    expect(String((r.error as Error).message)).toMatch(/stalled/);
    expect((await traceOf(gw, r.requestId)).streamOutcome).toBe('broken');
  });

  it('a cut is resumed on the same deployment first when it can prefill', async () => {
    const { client, primary } = await setup({
      primaryPrefill: true,
      primary: async (res, hit, n) => {
        if (n === 1) return cutAfter3(res, hit, n);
        const msgs = hit.body.messages as { role: string; content: string }[];
        expect(msgs[msgs.length - 1]!.role).toBe('assistant');
        sseHead(res);
        res.write(chunk('p-model', { role: 'assistant', content: '' }));
        await finishAnswer(res, 'p-model', 3);
      },
    });
    const r = await read(client);
    expect(r.error).toBeUndefined();
    expect(r.text).toBe(FULL);
    expect(primary.hits).toHaveLength(2);
    // Usage covers both attempts: the cut one (counted) and the continuation (reported).
    expect(r.usage!.completion_tokens).toBeGreaterThanOrEqual(WORDS.length - 3);
  });

  it('a long answer cut after 150 pieces resumes with exactly the text delivered so far as the prefill', async () => {
    const pieces = Array.from({ length: 150 }, (_, i) => `p${i} `);
    const delivered = pieces.join('');
    let prefill: string | undefined;
    const { client, primary } = await setup({
      primaryPrefill: true,
      primary: async (res, hit, n) => {
        sseHead(res);
        res.write(chunk('p-model', { role: 'assistant', content: '' }));
        if (n === 1) {
          await writeWords(res, 'p-model', pieces);
          await shown.reached(delivered);
          res.destroy();
          return;
        }
        const msgs = hit.body.messages as { role: string; content: string }[];
        prefill = msgs[msgs.length - 1]!.content;
        await writeWords(res, 'p-model', ['and the end.']);
        res.write(chunk('p-model', {}, 'stop'));
        res.end('data: [DONE]\n\n');
      },
    });
    const r = await read(client);
    expect(r.error).toBeUndefined();
    expect(primary.hits).toHaveLength(2);
    expect(prefill).toBe(delivered);
    expect(r.text).toBe(`${delivered}and the end.`);
  });

  it('a cut with no prefill-capable candidate is a clear error event, never a clean end', async () => {
    const { client, gw } = await setup({ primary: cutAfter3, secondary: 'fault' });
    const r = await read(client);
    expect(r.text).toBe(WORDS.slice(0, 3).join(''));
    expect(r.finish).toBeNull();
    expect(r.error).toBeInstanceOf(OpenAI.APIError);
    expect(String((r.error as Error).message)).toMatch(/broke after .*network/);
    const t = await traceOf(gw, r.requestId);
    expect(t.streamOutcome).toBe('broken');
    expect(t.usage.completionTokens).toBeGreaterThan(0);
  });

  it('a fallback that rejects the prefill does not replace the real failure: the error names the cut', async () => {
    const { client, rawSecondary } = await setup({
      primary: cutAfter3,
      secondaryPrefill: true,
      secondary: (res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'final assistant message not supported', type: 'invalid_request_error', param: null, code: null } }));
      },
    });
    const r = await read(client);
    expect(rawSecondary!.hits).toHaveLength(1);
    expect(r.error).toBeInstanceOf(OpenAI.APIError);
    const msg = String((r.error as Error).message);
    expect(msg).toMatch(/broke after/);
    expect(msg).not.toMatch(/not supported/);
  });
});

describe('malformed and unterminated streams', () => {
  it('a malformed event in the middle is skipped and counted; the rest arrives intact', async () => {
    const { client, gw } = await setup({
      primary: async (res) => {
        sseHead(res);
        res.write(chunk('p-model', { role: 'assistant', content: '' }));
        await writeWords(res, 'p-model', WORDS.slice(0, 4));
        res.write('data: {"id": "broken", "choices": [\n\n');
        res.write('data: "just a string"\n\n');
        await finishAnswer(res, 'p-model', 4);
      },
    });
    const r = await read(client);
    expect(r.error).toBeUndefined();
    expect(r.text).toBe(FULL);
    expect(r.usage).toEqual({ prompt_tokens: 12, completion_tokens: WORDS.length - 4, total_tokens: 12 + WORDS.length - 4 });
    expect((await traceOf(gw, r.requestId)).malformedEvents).toBe(2);
  });

  it('finish_reason and usage but no [DONE] (connection held open): finished at once', async () => {
    const { client, gw } = await setup({
      resilience: { idleTimeoutMs: 5000 },
      primary: async (res) => {
        sseHead(res);
        await writeWords(res, 'p-model', WORDS);
        res.write(chunk('p-model', {}, 'stop'));
        res.write(usageChunk('p-model', 9, WORDS.length));
        await hungUp(res);
      },
    });
    const r = await read(client);
    expect(r.error).toBeUndefined();
    expect(r.text).toBe(FULL);
    expect(r.finish).toBe('stop');
    expect(r.usage?.completion_tokens).toBe(WORDS.length);
    expect(r.ms).toBeLessThan(1000);
    expect((await traceOf(gw, r.requestId)).streamOutcome).toBe('completed');
  });

  it('finish_reason then a clean close without [DONE] or usage: finished, usage counted', async () => {
    const { client } = await setup({
      primary: async (res) => {
        sseHead(res);
        await writeWords(res, 'p-model', WORDS);
        res.end(chunk('p-model', {}, 'stop'));
      },
    });
    const r = await read(client);
    expect(r.error).toBeUndefined();
    expect(r.text).toBe(FULL);
    expect(r.usage!.completion_tokens).toBe(Math.ceil(FULL.length / 4));
    expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
  });

  it('a close before finish_reason and [DONE] is a failure, not an answer', async () => {
    const { client } = await setup({
      primary: async (res) => {
        sseHead(res);
        await writeWords(res, 'p-model', WORDS.slice(0, 5));
        res.end();
      },
    });
    const r = await read(client);
    expect(r.error).toBeInstanceOf(OpenAI.APIError);
    expect(r.finish).toBeNull();
  });
});
