/**
 * Streams whose content chunks are built from a learnt template
 * (src/providers/openai/chunk-template.ts) instead of parsed, over real
 * sockets: an OpenAI-shaped stream (one id throughout, `usage: null`, random
 * `obfuscation` padding last) reaches the client byte for byte, and a resumed
 * stream's continuation — built chunks relabelled and re-serialised — reads as
 * one answer with one id through the official SDK.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver } from '../helpers/gateway.js';
import { sleep, sseHead, startRawUpstream } from '../helpers/raw-upstream.js';
import { seenText } from '../helpers/wait.js';
import { rawExchange, sseData } from './wire.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** An OpenAI chunk as OpenAI writes it: the same id all along, padding last. */
function openaiEvent(id: string, model: string, delta: Record<string, unknown>, finish: string | null = null, i = 0): string {
  return JSON.stringify({
    id,
    object: 'chat.completion.chunk',
    created: 1_764_460_800,
    model,
    service_tier: 'default',
    system_fingerprint: 'fp_560af6e559',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
    obfuscation: 'aZ09'.repeat(1 + (i % 4)).slice(i % 3),
  });
}

const PIECES = ['Hello', ',', ' wörld', ' — ', 'naïve', ' 🙂', ' "quoted"', ' back\\slash', ' line\nbreak', ' tab\there', ' done', '.'];

function openaiStream(id: string, model: string, pieces: string[]): string[] {
  const events = [openaiEvent(id, model, { role: 'assistant', content: '', refusal: null })];
  pieces.forEach((p, i) => events.push(openaiEvent(id, model, { content: p }, null, i)));
  events.push(openaiEvent(id, model, {}, 'stop'));
  events.push(JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_764_460_800, model, choices: [], usage: { prompt_tokens: 5, completion_tokens: pieces.length, total_tokens: 5 + pieces.length } }));
  return events;
}

describe('template-built chunks over the wire', () => {
  it('an OpenAI stream reaches the client event for event, byte for byte', async () => {
    const events = openaiStream('chatcmpl-One', 'gpt-4o-mini-2024-07-18', [...PIECES, ...PIECES]);
    const upstream = await startRawUpstream(async (res) => {
      sseHead(res);
      // Some events alone, some several to a write.
      for (let i = 0; i < events.length; i += 1 + (i % 3)) {
        res.write(events.slice(i, i + 1 + (i % 3)).map((e) => `data: ${e}\n\n`).join(''));
        await sleep(2);
      }
      res.end('data: [DONE]\n\n');
    });
    closers.push(() => upstream.close());
    const gw = await startChatOver(upstream.url, {}, { model: 'gpt-4o-mini' });
    closers.push(() => gw.close(0));
    const body = JSON.stringify({ model: 'chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    const res = await rawExchange(Number(new URL(gw.url).port), [
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    ]);
    expect(res.status).toBe(200);
    expect(sseData(res.body.toString('utf8'))).toEqual([...events, '[DONE]']);
  });

  it("a resumed stream's continuation, built from its own template, is relabelled into one answer", async () => {
    const first = PIECES.slice(0, 5);
    const rest = PIECES.slice(5);
    const shown = seenText();
    const upstream = await startRawUpstream(async (res, hit, n) => {
      sseHead(res);
      if (n === 1) {
        // Cut after five pieces: no finish, no [DONE].
        const events = openaiStream('chatcmpl-First', 'm-1', first).slice(0, 1 + first.length);
        for (const e of events) res.write(`data: ${e}\n\n`);
        // Cut once the client has the five pieces: the gateway forwarded them, so the cut is after the commit.
        await shown.reached(first.join(''));
        res.destroy();
        return;
      }
      const msgs = hit.body.messages as { role: string; content: string }[];
      expect(msgs.at(-1)).toEqual({ role: 'assistant', content: first.join('') }); // the prefill: exactly what was delivered
      for (const e of openaiStream('chatcmpl-Second', 'm-1', rest)) res.write(`data: ${e}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    closers.push(() => upstream.close());
    const gw = await startChatOver(upstream.url, { resilience: { ttftTimeoutMs: 1000, idleTimeoutMs: 1000, requestTimeoutMs: 5000, maxRetries: 0 } }, { model: 'm-1', capabilities: ['prefill'] });
    closers.push(() => gw.close(0));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'tell me' }] });
    let text = '';
    const ids = new Set<string>();
    let finish: string | null = null;
    for await (const c of stream) {
      ids.add(c.id);
      text += c.choices[0]?.delta.content ?? '';
      shown.add(c.choices[0]?.delta.content ?? '');
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    shown.check();
    expect(text).toBe(PIECES.join(''));
    expect([...ids]).toEqual(['chatcmpl-First']);
    expect(finish).toBe('stop');
    expect(upstream.hits).toHaveLength(2);
  });
});
