import { describe, expect, it } from 'vitest';
import { replyText, simulateReply, splitPieces, toCompletion, type SimChoice } from './reply.js';
import { simulateEmbeddings, unitVector } from './embeddings.js';
import type { ChatMessage, ChatRequest, Usage } from '../../protocol/openai.js';

const who = { provider: 'sim', model: 'm1' };
const user: ChatMessage = { role: 'user', content: 'Hi there, how are you?' };
const req = (messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'x', messages, ...extra });
/** The one choice of a request without `n`, with the reply's usage. */
const single = (...args: Parameters<typeof simulateReply>): SimChoice & { usage: Usage } => {
  const r = simulateReply(...args);
  expect(r.choices).toHaveLength(1);
  return { ...r.choices[0]!, usage: r.usage };
};

describe('simulateReply', () => {
  it('names the deployment and the conversation, in word pieces with their spaces', () => {
    const r = single(req([{ role: 'system', content: 'Be brief.' }, user]), who);
    const text = r.pieces.join('');
    expect(text).toBe('Hello from sim/m1. This is a simulated reply to a conversation of 2 messages.');
    expect(r.pieces.slice(0, 3)).toEqual(['Hello ', 'from ', 'sim/m1. ']);
    expect(r.finishReason).toBe('stop');
    // 31 chars of text → 8 tokens, plus 3 per message.
    expect(r.usage).toEqual({ prompt_tokens: 8 + 6, completion_tokens: r.pieces.length, total_tokens: 14 + r.pieces.length });
  });

  it('says "1 message", not "1 messages"', () => {
    expect(replyText(who, 1)).toBe('Hello from sim/m1. This is a simulated reply to a conversation of 1 message.');
    expect(replyText(who, 3, undefined, 0)).toBe('Hello from sim/m1. This is a simulated reply (choice 0) to a conversation of 3 messages.');
  });

  it('uses the configured template with {model} and {provider}', () => {
    const r = single(req([user]), who, 'I am {model} at {provider}; {model}!');
    expect(r.pieces.join('')).toBe('I am m1 at sim; m1!');
  });

  it('continues an assistant prefill with only the remainder, so the answer arrives once', () => {
    const full = single(req([user]), who).pieces.join('');
    for (const cut of [1, 7, 18, full.length - 1, full.length]) {
      const prefix = full.slice(0, cut);
      const rest = single(req([user, { role: 'assistant', content: prefix }]), who);
      expect(prefix + rest.pieces.join('')).toBe(full);
    }
    // Content parts count as the prefill text too; a trimmed prefill leaves the space on the rest.
    const parts = single(req([user, { role: 'assistant', content: [{ type: 'text', text: 'Hello from' }] }]), who);
    expect(parts.pieces[0]).toBe(' sim/m1. ');
    expect('Hello from' + parts.pieces.join('')).toBe(full);
  });

  it('answers in full when the prefill is not a prefix of the reply', () => {
    const full = single(req([user]), who).pieces.join('');
    const r = single(req([user, { role: 'assistant', content: 'Something else' }]), who);
    expect(r.pieces.join('')).toBe(full);
  });

  it('calls the forced tool when tool_choice is required or names a function', () => {
    const tools = [
      { type: 'function' as const, function: { name: 'first' } },
      { type: 'function' as const, function: { name: 'second' } },
    ];
    const required = single(req([user], { tools, tool_choice: 'required' }), who);
    expect(required.toolCall).toEqual({ id: 'call_sim_1', type: 'function', function: { name: 'first', arguments: '{"ok":true}' } });
    expect(required.finishReason).toBe('tool_calls');
    expect(required.pieces).toEqual([]);
    const named = single(req([user], { tools, tool_choice: { type: 'function', function: { name: 'second' } } }), who);
    expect(named.toolCall?.function.name).toBe('second');
    expect(single(req([user], { tools, tool_choice: 'auto' }), who).toolCall).toBeUndefined();
    expect(single(req([user], { tools }), who).toolCall).toBeUndefined();
  });

  it('stops at max_tokens with finish_reason length', () => {
    const r = single(req([user], { max_tokens: 3 }), who);
    expect(r.pieces).toEqual(['Hello ', 'from ', 'sim/m1. ']);
    expect(r.finishReason).toBe('length');
    expect(r.usage.completion_tokens).toBe(3);
    expect(single(req([user], { max_completion_tokens: 2, max_tokens: 9 }), who).pieces).toHaveLength(2);
  });

  it('ends before the first stop sequence, leaving it out, as OpenAI does', () => {
    const text = (extra: Partial<ChatRequest>) => single(req([user], extra), who).pieces.join('');
    expect(text({ stop: '.' })).toBe('Hello from sim/m1');
    expect(text({ stop: ['conversation', ' is '] })).toBe('Hello from sim/m1. This');
    expect(text({ stop: ['', 'absent'] })).toBe(text({}));
    const r = single(req([user], { stop: 'This' }), who);
    expect([r.pieces, r.finishReason, r.usage.completion_tokens]).toEqual([['Hello ', 'from ', 'sim/m1. '], 'stop', 3]);
    // max_tokens still cuts a longer answer short; each choice stops on its own.
    expect(single(req([user], { stop: 'This', max_tokens: 2 }), who).finishReason).toBe('length');
    const two = simulateReply(req([user], { n: 2, stop: ')' }), who).choices.map((c) => c.pieces.join(''));
    expect(two).toEqual(['Hello from sim/m1. This is a simulated reply (choice 0', 'Hello from sim/m1. This is a simulated reply (choice 1']);
    // Only what is generated is searched: a prefill's own text never stops the rest.
    expect(single(req([user, { role: 'assistant', content: 'Hello from sim/m1.' }], { stop: '.' }), who).pieces.join('')).toBe(' This is a simulated reply to a conversation of 1 message');
  });

  it('builds an OpenAI chat.completion', () => {
    const reply = simulateReply(req([user]), who);
    const c = toCompletion(reply, { id: 'chatcmpl-sim-1', created: 1700000000, model: 'm1' });
    expect(c).toMatchObject({
      id: 'chatcmpl-sim-1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'm1',
      choices: [{ index: 0, message: { role: 'assistant', content: reply.choices[0]!.pieces.join('') }, finish_reason: 'stop' }],
      usage: reply.usage,
    });
    const tool = simulateReply(req([user], { tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'required' }), who);
    expect(toCompletion(tool, { id: 'a', created: 1, model: 'm' }).choices[0]!.message).toMatchObject({ content: null, tool_calls: [tool.choices[0]!.toolCall] });
  });

  it('splits text into pieces that concatenate back exactly', () => {
    expect(splitPieces('  a b\n c ')).toEqual(['  a ', 'b\n ', 'c ']);
    expect(splitPieces('   ')).toEqual(['   ']);
    expect(splitPieces('')).toEqual([]);
  });
});

describe('simulateReply with n > 1', () => {
  const texts = (r: ReturnType<typeof simulateReply>) => r.choices.map((c) => c.pieces.join(''));

  it('answers n choices, each naming its index, the prompt counted once and every completion together', () => {
    const one = single(req([user]), who);
    const r = simulateReply(req([user], { n: 3 }), who);
    expect(texts(r)).toEqual([0, 1, 2].map((i) => `Hello from sim/m1. This is a simulated reply (choice ${i}) to a conversation of 1 message.`));
    expect(r.choices.map((c) => c.finishReason)).toEqual(['stop', 'stop', 'stop']);
    const completion = r.choices.reduce((n, c) => n + c.pieces.length, 0);
    expect(r.usage).toEqual({ prompt_tokens: one.usage.prompt_tokens, completion_tokens: completion, total_tokens: one.usage.prompt_tokens + completion });
    // Same request, same answer.
    expect(simulateReply(req([user], { n: 3 }), who)).toEqual(r);
    // n: 1 (or null) is the plain answer.
    expect(simulateReply(req([user], { n: 1 }), who).choices).toEqual([{ pieces: one.pieces, finishReason: 'stop' }]);
    expect(simulateReply(req([user], { n: null }), who).choices).toHaveLength(1);
  });

  it('a template reads {choice} as the index; without it the choices say the same', () => {
    expect(texts(simulateReply(req([user], { n: 2 }), who, '{model} #{choice}'))).toEqual(['m1 #0', 'm1 #1']);
    expect(texts(simulateReply(req([user], { n: 2 }), who, 'Same.'))).toEqual(['Same.', 'Same.']);
    expect(texts(simulateReply(req([user]), who, '#{choice}'))).toEqual(['#0']);
  });

  it('applies max_tokens to each choice, and a prefill to each choice it begins', () => {
    const capped = simulateReply(req([user], { n: 2, max_tokens: 4 }), who);
    expect(capped.choices.map((c) => [c.pieces.length, c.finishReason])).toEqual([
      [4, 'length'],
      [4, 'length'],
    ]);
    expect(capped.usage.completion_tokens).toBe(8);
    const full = texts(simulateReply(req([user], { n: 2 }), who));
    const prefilled = simulateReply(req([user, { role: 'assistant', content: 'Hello from sim/m1. ' }], { n: 2 }), who);
    expect(texts(prefilled).map((rest) => 'Hello from sim/m1. ' + rest)).toEqual(full);
  });

  it('gives each choice the forced tool call, with ids unique in the answer, and counts each', () => {
    const tools = [{ type: 'function' as const, function: { name: 'lookup' } }];
    const one = simulateReply(req([user], { tools, tool_choice: 'required' }), who);
    const r = simulateReply(req([user], { tools, tool_choice: 'required', n: 2 }), who);
    expect(r.choices.map((c) => [c.toolCall?.id, c.toolCall?.function.name, c.finishReason])).toEqual([
      ['call_sim_1', 'lookup', 'tool_calls'],
      ['call_sim_2', 'lookup', 'tool_calls'],
    ]);
    expect(r.usage.completion_tokens).toBe(2 * one.usage.completion_tokens);
    const c = toCompletion(r, { id: 'a', created: 1, model: 'm' });
    expect(c.choices.map((ch) => [ch.index, ch.message.tool_calls?.[0]?.id])).toEqual([
      [0, 'call_sim_1'],
      [1, 'call_sim_2'],
    ]);
  });
});

describe('simulateEmbeddings', () => {
  const norm = (v: number[]): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

  it('gives each input a deterministic unit vector', () => {
    const a = simulateEmbeddings({ model: 'e', input: ['cat', 'dog', 'cat'] }, 'emb-1');
    expect(a.model).toBe('emb-1');
    expect(a.data.map((d) => d.index)).toEqual([0, 1, 2]);
    const [cat, dog, cat2] = a.data.map((d) => d.embedding as number[]);
    expect(cat).toHaveLength(8);
    expect(norm(cat!)).toBeCloseTo(1, 12);
    expect(cat2).toEqual(cat);
    expect(dog).not.toEqual(cat);
    expect(simulateEmbeddings({ model: 'e', input: 'cat' }, 'x').data[0]!.embedding).toEqual(cat);
    expect(a.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  it('honours dimensions, token-array inputs and base64 encoding', () => {
    const d = simulateEmbeddings({ model: 'e', input: 'hello', dimensions: 32 }, 'x').data[0]!.embedding as number[];
    expect(d).toHaveLength(32);
    expect(norm(d)).toBeCloseTo(1, 12);

    const tokens = simulateEmbeddings({ model: 'e', input: [[1, 2, 3], [4]] }, 'x');
    expect(tokens.data).toHaveLength(2);
    expect(tokens.usage.prompt_tokens).toBe(4);
    expect(simulateEmbeddings({ model: 'e', input: [1, 2, 3] }, 'x').data).toHaveLength(1);

    const b64 = simulateEmbeddings({ model: 'e', input: 'hello', encoding_format: 'base64' }, 'x').data[0]!.embedding as string;
    const bytes = Buffer.from(b64, 'base64');
    const floats = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    expect(floats).toEqual(Array.from(Float32Array.from(unitVector('hello', 8))));
  });
});
