/**
 * A stop sequence split by a resume's cut, over real sockets. The continuing
 * upstream is given the request's `stop`, but the start of a sequence the cut
 * attempt already sent is in its prefill, not in its output: it cannot see the
 * sequence complete, and writes on past it. The gateway must: the stream ends
 * there with finish_reason `stop`, nothing of the continuation after it, and
 * the continuation's upstream is let go rather than read to its end.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { assembleStream } from '../helpers/assemble-stream.js';
import { openaiProvider, startGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, type RawHandler, type RawUpstream } from '../helpers/raw-upstream.js';
import { hungUp } from '../helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** Sends `pieces` as content chunks of one response, then cuts the connection. */
const cutsAfter =
  (...pieces: string[]): RawHandler =>
  async (res) => {
    sseHead(res);
    res.write(chunk('p-model', { role: 'assistant', content: '' }));
    // Cut once the pieces are handed to the kernel, ahead of the FIN: the gateway reads them, then the
    // cut. (Not once the client has them: a piece that may begin a stop sequence is held back.)
    await new Promise((flushed) => res.write(pieces.map((p) => chunk('p-model', { content: p })).join(''), flushed));
    res.destroy();
  };

/**
 * Answers a continuation with `pieces` as content chunks, then by `end`: a finish and `[DONE]`,
 * `[DONE]` alone (no finish_reason), or nothing more until the gateway hangs up (`hold`).
 */
const continues =
  (pieces: string[], end: 'finish' | 'done' | 'hold' = 'finish'): RawHandler =>
  async (res) => {
    sseHead(res);
    res.write(chunk('s-model', { role: 'assistant', content: '' }));
    for (const p of pieces) res.write(chunk('s-model', { content: p }));
    if (end === 'hold') return hungUp(res);
    if (end === 'finish') res.write(chunk('s-model', {}, 'stop'));
    res.end('data: [DONE]\n\n');
  };

/** Alias `chat` over `primary/p-model`, cut by `primary`, with the prefill-capable fallback `backup` over `second/s-model`. */
async function setup(primary: RawHandler, second: RawHandler): Promise<{ client: OpenAI; second: RawUpstream }> {
  const up1 = await startRawUpstream(primary);
  closers.push(() => up1.close());
  const up2 = await startRawUpstream(second);
  closers.push(() => up2.close());
  const gw = await startGateway({
    resilience: { maxRetries: 0, idleTimeoutMs: 1500 },
    providers: [openaiProvider('primary', up1.url), openaiProvider('second', up2.url)],
    models: [
      { name: 'chat', deployments: [{ provider: 'primary', model: 'p-model' }], fallbacks: ['backup'] },
      { name: 'backup', deployments: [{ provider: 'second', model: 's-model', capabilities: ['prefill'] }] },
    ],
  });
  closers.push(() => gw.close(0));
  return { client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 }), second: up2 };
}

async function ask(client: OpenAI, stop: string | string[]) {
  const t0 = Date.now();
  const stream = await client.chat.completions.create({
    model: 'chat',
    stream: true,
    stop,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'tell me' }],
  });
  const { out, chunks } = await assembleStream(stream);
  return { out, chunks, ms: Date.now() - t0 };
}

describe('a stop sequence split across a resume\'s cut', () => {
  it('completed by the continuation\'s first piece: the stream ends there with finish_reason stop, and the continuation is let go', async () => {
    // The continuing upstream writes past the stop and then holds its stream open: waiting for
    // its end (or its usage) would take a minute, not a moment.
    let released = false;
    const holds = continues(['ND of it all, and more.'], 'hold');
    const { client, second } = await setup(cutsAfter('The end is near. E'), (res, hit, n) => {
      res.once('close', () => (released = true));
      return holds(res, hit, n);
    });
    const { out, chunks, ms } = await ask(client, ['STOP', 'END']);
    // The E before the cut was sent before anyone could know: it cannot be taken back.
    expect(out.content).toBe('The end is near. E');
    expect(out.finish_reason).toBe('stop');
    expect(chunks.filter((c) => c.choices[0]?.finish_reason != null)).toHaveLength(1);
    // The one usage chunk, the continuation's text counted (its upstream reported none).
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(out.usage?.completion_tokens).toBeGreaterThan(0);
    expect(ms).toBeLessThan(900);
    // Let go at once: not read on (it never ends), nor left open until the 1 s grace period runs out.
    await vi.waitFor(() => expect(released).toBe(true), { timeout: 800, interval: 10 });
    // The continuation was asked with the request's stop sequences and the text sent as its prefill.
    expect(second.hits[0]!.body.stop).toEqual(['STOP', 'END']);
    const msgs = second.hits[0]!.body.messages as { role: string; content: string }[];
    expect(msgs.at(-1)).toEqual({ role: 'assistant', content: 'The end is near. E' });
  });

  it('completed over several continuation pieces: none of them reaches the client', async () => {
    const { client } = await setup(cutsAfter('The answer: 42</'), continues(['ans', 'wer', '>', '\n\nAnything else?']));
    const { out } = await ask(client, '</answer>');
    expect(out.content).toBe('The answer: 42</');
    expect(out.finish_reason).toBe('stop');
  });

  it('begun but not completed: the continuation\'s pieces held back while they might be the stop reach the client, exactly once and in order', async () => {
    const { client } = await setup(cutsAfter('Hello E'), continues(['N', 'Dx', 'ceptionally ', 'well.']));
    const { out } = await ask(client, 'END!');
    expect(out.content).toBe('Hello ENDxceptionally well.');
    expect(out.finish_reason).toBe('stop');
  });

  it('a continuation whose upstream finishes while a piece is held: the held text is still delivered', async () => {
    const { client } = await setup(cutsAfter('Hello E'), continues(['N']));
    const { out } = await ask(client, ['END']);
    expect(out.content).toBe('Hello EN');
    expect(out.finish_reason).toBe('stop');
  });

  it('a continuation that finishes at once, nothing held: its finish chunk comes as it was, with no content', async () => {
    const { client } = await setup(cutsAfter('Hello E'), continues([]));
    const { out, chunks } = await ask(client, ['END']);
    expect(out.content).toBe('Hello E');
    expect(out.finish_reason).toBe('stop');
    expect(chunks.find((c) => c.choices[0]?.finish_reason != null)!.choices[0]!.delta).not.toHaveProperty('content');
  });

  it('a continuation that refuses while a piece is held: the held text goes out first, not after the refusal', async () => {
    const { client } = await setup(cutsAfter('Hello E'), async (res) => {
      sseHead(res);
      res.write(chunk('s-model', { role: 'assistant', content: '' }));
      res.write(chunk('s-model', { content: 'N' }));
      res.write(chunk('s-model', { refusal: 'I cannot go on.' }));
      res.write(chunk('s-model', {}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
    const { out, chunks } = await ask(client, ['END']);
    expect(out.content).toBe('Hello EN');
    const deltas = chunks.map((c) => c.choices[0]?.delta as { content?: string; refusal?: string } | undefined);
    const held = deltas.findIndex((d) => d?.content === 'N');
    const refusal = deltas.findIndex((d) => d?.refusal === 'I cannot go on.');
    expect(held).toBeGreaterThan(-1);
    expect(refusal).toBeGreaterThan(-1);
    expect(held).toBeLessThanOrEqual(refusal);
  });

  it('a continuation whose upstream ends with [DONE] and no finish_reason while a piece is held: the held text is still delivered', async () => {
    const { client } = await setup(cutsAfter('Hello E'), continues(['N'], 'done'));
    const { out } = await ask(client, ['END']);
    expect(out.content).toBe('Hello EN');
  });

  it('a continuation cut while it holds text: the next continues from the same seam, and the held text counts as generated', async () => {
    // The first continuation sends the stop's next five characters (held: they may be the stop)
    // and is cut; the second completes the stop from the same seam.
    const second: RawHandler = (res, hit, n) => (n === 1 ? cutsAfter('/answ')(res, hit, n) : continues(['/answer>', ' and more'])(res, hit, n));
    const { client, second: up2 } = await setup(cutsAfter('The answer: 42<'), second);
    const { out } = await ask(client, '</answer>');
    expect(out.content).toBe('The answer: 42<');
    expect(out.finish_reason).toBe('stop');
    expect(up2.hits).toHaveLength(2);
    // Both continuations were given only what the client has.
    for (const hit of up2.hits) expect((hit.body.messages as { content: string }[]).at(-1)!.content).toBe('The answer: 42<');
    // No upstream reported usage: each attempt's text counted at four characters a token, the
    // cut continuation's held '/answ' included (it was generated, and billed), as the last's '/answer>' is.
    expect(out.usage?.completion_tokens).toBe(Math.ceil(15 / 4) + Math.ceil(5 / 4) + Math.ceil(8 / 4));
  });

  it('no stop, or only one-character ones (no start to leave before a cut): the continuation goes on as it came', async () => {
    for (const stop of [[], ['E', 'N']]) {
      const { client } = await setup(cutsAfter('Hello E'), continues(['ND', ' of it.']));
      const { out } = await ask(client, stop);
      expect(out.content).toBe('Hello END of it.');
    }
  });
});
