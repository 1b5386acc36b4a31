/**
 * What a client reads when a committed stream is continued on another
 * deployment (stream resume): one response, over real sockets — an
 * OpenAI-format upstream cut mid-answer, a prefill-capable fallback that
 * continues it (Anthropic's native API, whose adapter stamps its own id and
 * time, or another OpenAI-format upstream), and the official `openai` client
 * reading the gateway.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { assembleStream } from '../helpers/assemble-stream.js';
import { openaiProvider, startGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, type RawHandler, type RawUpstream } from '../helpers/raw-upstream.js';
import { fetchSeenBy, seenText } from '../helpers/wait.js';
import { startAnthropicServer, type AnthropicServer } from '../servers/anthropic-server.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
  // A cut whose handshake never came true still cuts (the gateway's idle timer ends the wait): fail on it here.
  shown.check();
});

/** What the client has received: an upstream cuts once the gateway forwarded what it wrote, so after the commit. */
let shown = seenText();

/** Sends "Hello wor" as one response (id chatcmpl-first, created 1700000000), then cuts the connection. */
const cutsAfterHelloWor: RawHandler = async (res) => {
  sseHead(res);
  for (const delta of [{ role: 'assistant', content: '' }, { content: 'Hello ' }, { content: 'wor' }]) {
    res.write(chunk('p-model', delta).replace(/chatcmpl-raw-\d+/, 'chatcmpl-first'));
  }
  await shown.reached('"wor"');
  res.destroy();
};

/**
 * Alias `chat` over `primary/p-model` (a raw OpenAI-format upstream running `primary`), with
 * the fallback alias `backup` over `second/s-model`, which can prefill: `second` is the
 * provider entry without its id (type, baseUrl…). Returns an `openai` client of the gateway.
 */
async function resumeGateway(primary: RawHandler, second: Record<string, unknown>): Promise<OpenAI> {
  const upstream = await startRawUpstream(primary);
  closers.push(() => upstream.close());
  const gw = await startGateway(
    {
      resilience: { maxRetries: 0, idleTimeoutMs: 1000 },
      providers: [openaiProvider('primary', upstream.url), { id: 'second', ...second }],
      models: [
        { name: 'chat', deployments: [{ provider: 'primary', model: 'p-model' }], fallbacks: ['backup'] },
        { name: 'backup', deployments: [{ provider: 'second', model: 's-model', capabilities: ['prefill'] }] },
      ],
    },
    { env: { K: 'test-key' } },
  );
  closers.push(() => gw.close(0));
  shown = seenText();
  return new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0, fetch: fetchSeenBy(() => shown) });
}

/** `resumeGateway` whose prefill-capable fallback is a loopback Anthropic server (native API). */
async function cutThenAnthropic(primary: RawHandler = cutsAfterHelloWor): Promise<{ client: OpenAI; claude: AnthropicServer }> {
  const claude = await startAnthropicServer();
  closers.push(() => claude.close());
  const client = await resumeGateway(primary, { type: 'anthropic', baseUrl: claude.url, apiKey: '${K}' });
  return { client, claude };
}

/** `resumeGateway` whose prefill-capable fallback is an OpenAI-format upstream that answers with `events`, then `[DONE]`. */
async function cutThenOpenAI(primary: RawHandler, ...events: string[]): Promise<{ client: OpenAI; second: RawUpstream }> {
  const second = await startRawUpstream((res) => {
    sseHead(res);
    for (const e of events) res.write(e);
    res.end('data: [DONE]\n\n');
  });
  closers.push(() => second.close());
  const client = await resumeGateway(primary, { type: 'openai', baseUrl: second.url });
  return { client, second };
}

describe('a stream resumed on another provider', () => {
  it('reads as one response: every chunk, the usage chunk included, has the first attempt\'s id and created, and names the model that served it', async () => {
    const { client, claude } = await cutThenAnthropic();
    claude.enqueue({ text: 'ld, how are you?', usage: { input_tokens: 7, output_tokens: 5 } });
    const stream = await client.chat.completions.create({
      model: 'chat',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello world, how are you?');
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-first']));
    // The first upstream's stamp: the Anthropic adapter stamps its own chunks with the gateway's clock.
    expect(new Set(chunks.map((c) => c.created))).toEqual(new Set([1_700_000_000]));
    // The contract: in every stream chunk `model` names the upstream model that served it.
    const served = chunks.filter((c) => c.choices[0]?.delta.content).map((c) => [c.choices[0]!.delta.content, c.model]);
    expect(served[0]).toEqual(['Hello ', 'p-model']);
    expect(served.at(-1)).toEqual([expect.any(String), 's-model']);
  });

  it('asks the continuation only for what is left of the client\'s max_tokens, not the whole budget again', async () => {
    const { client, claude } = await cutThenAnthropic();
    claude.enqueue({ text: 'ld.' });
    const stream = await client.chat.completions.create({ model: 'chat', stream: true, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello world.');
    // The cut attempt reported no usage: its 9 characters count as 3 tokens (4 characters a token).
    expect(claude.requests[0]!.body!.max_tokens).toBe(17);
  });

  it('a conversation ending with the client\'s own prefill is continued from that prefill and the text delivered, as one assistant message', async () => {
    const { client, second } = await cutThenOpenAI(
      async (res) => {
        sseHead(res);
        res.write(chunk('p-model', { role: 'assistant', content: 'Ada", ' }));
        await shown.reached('Ada');
        res.destroy();
      },
      chunk('s-model', { content: '"age": 36}' }),
      chunk('s-model', {}, 'stop'),
    );
    const stream = await client.chat.completions.create({
      model: 'chat',
      stream: true,
      messages: [
        { role: 'user', content: 'Ada, 36, as JSON' },
        { role: 'assistant', content: '{"name": "' },
      ],
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('Ada", "age": 36}');
    // One assistant turn to continue, not the client's prefill as a finished turn and the delivered text as another.
    expect(second.hits[0]!.body.messages).toEqual([
      { role: 'user', content: 'Ada, 36, as JSON' },
      { role: 'assistant', content: '{"name": "Ada", ' },
    ]);
  });

  it('with include_usage has one usage, the total of both attempts: a continuation reporting its own on its finish chunk does not pass it on', async () => {
    const { client } = await cutThenOpenAI(
      cutsAfterHelloWor,
      chunk('s-model', { content: 'ld.' }),
      chunk('s-model', {}, 'stop', { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }),
    );
    const stream = await client.chat.completions.create({
      model: 'chat',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { out, chunks } = await assembleStream(stream);
    expect(out.content).toBe('Hello world.');
    const withUsage = chunks.filter((c) => c.usage != null);
    expect(withUsage).toHaveLength(1);
    expect(withUsage[0]!.choices).toEqual([]);
    // The cut attempt's 9 characters count as 3 tokens; the continuation reported 2.
    expect(withUsage[0]!.usage!.completion_tokens).toBe(5);
  });

  it('passes on a continuation that refuses (a refusal delta) rather than drop it and end with a bare finish', async () => {
    const { client } = await cutThenOpenAI(
      cutsAfterHelloWor,
      chunk('s-model', { role: 'assistant', content: null, refusal: "I can't continue this." }),
      chunk('s-model', {}, 'stop'),
    );
    const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const { out, chunks } = await assembleStream(stream);
    expect(out.content).toBe('Hello wor');
    expect(chunks.map((c) => c.choices[0]?.delta.refusal).filter(Boolean)).toEqual(["I can't continue this."]);
  });
});
