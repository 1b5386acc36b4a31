import { describe, expect, it } from 'vitest';
import { simulateReply, splitPieces, toCompletion } from './reply.js';
import { simulateEmbeddings, unitVector } from './embeddings.js';
import type { ChatMessage, ChatRequest } from '../../protocol/openai.js';

const who = { provider: 'sim', model: 'm1' };
const user: ChatMessage = { role: 'user', content: 'Hi there, how are you?' };
const req = (messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'x', messages, ...extra });

describe('simulateReply', () => {
  it('names the deployment and the conversation, in word pieces with their spaces', () => {
    const r = simulateReply(req([{ role: 'system', content: 'Be brief.' }, user]), who);
    const text = r.pieces.join('');
    expect(text).toBe('Hello from sim/m1. This is a simulated reply to a conversation of 2 messages.');
    expect(r.pieces.slice(0, 3)).toEqual(['Hello ', 'from ', 'sim/m1. ']);
    expect(r.finishReason).toBe('stop');
    // 31 chars of text → 8 tokens, plus 3 per message.
    expect(r.usage).toEqual({ prompt_tokens: 8 + 6, completion_tokens: r.pieces.length, total_tokens: 14 + r.pieces.length });
  });

  it('uses the configured template with {model} and {provider}', () => {
    const r = simulateReply(req([user]), who, 'I am {model} at {provider}; {model}!');
    expect(r.pieces.join('')).toBe('I am m1 at sim; m1!');
  });

  it('continues an assistant prefill with only the remainder, so the answer arrives once', () => {
    const full = simulateReply(req([user]), who).pieces.join('');
    for (const cut of [1, 7, 18, full.length - 1, full.length]) {
      const prefix = full.slice(0, cut);
      const rest = simulateReply(req([user, { role: 'assistant', content: prefix }]), who);
      expect(prefix + rest.pieces.join('')).toBe(full);
    }
    // Content parts count as the prefill text too; a trimmed prefill leaves the space on the rest.
    const parts = simulateReply(req([user, { role: 'assistant', content: [{ type: 'text', text: 'Hello from' }] }]), who);
    expect(parts.pieces[0]).toBe(' sim/m1. ');
    expect('Hello from' + parts.pieces.join('')).toBe(full);
  });

  it('answers in full when the prefill is not a prefix of the reply', () => {
    const full = simulateReply(req([user]), who).pieces.join('');
    const r = simulateReply(req([user, { role: 'assistant', content: 'Something else' }]), who);
    expect(r.pieces.join('')).toBe(full);
  });

  it('calls the forced tool when tool_choice is required or names a function', () => {
    const tools = [
      { type: 'function' as const, function: { name: 'first' } },
      { type: 'function' as const, function: { name: 'second' } },
    ];
    const required = simulateReply(req([user], { tools, tool_choice: 'required' }), who);
    expect(required.toolCall).toEqual({ id: 'call_sim_1', type: 'function', function: { name: 'first', arguments: '{"ok":true}' } });
    expect(required.finishReason).toBe('tool_calls');
    expect(required.pieces).toEqual([]);
    const named = simulateReply(req([user], { tools, tool_choice: { type: 'function', function: { name: 'second' } } }), who);
    expect(named.toolCall?.function.name).toBe('second');
    expect(simulateReply(req([user], { tools, tool_choice: 'auto' }), who).toolCall).toBeUndefined();
    expect(simulateReply(req([user], { tools }), who).toolCall).toBeUndefined();
  });

  it('stops at max_tokens with finish_reason length', () => {
    const r = simulateReply(req([user], { max_tokens: 3 }), who);
    expect(r.pieces).toEqual(['Hello ', 'from ', 'sim/m1. ']);
    expect(r.finishReason).toBe('length');
    expect(r.usage.completion_tokens).toBe(3);
    expect(simulateReply(req([user], { max_completion_tokens: 2, max_tokens: 9 }), who).pieces).toHaveLength(2);
  });

  it('builds an OpenAI chat.completion', () => {
    const reply = simulateReply(req([user]), who);
    const c = toCompletion(reply, { id: 'chatcmpl-sim-1', created: 1700000000, model: 'm1' });
    expect(c).toMatchObject({
      id: 'chatcmpl-sim-1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'm1',
      choices: [{ index: 0, message: { role: 'assistant', content: reply.pieces.join('') }, finish_reason: 'stop' }],
      usage: reply.usage,
    });
    const tool = simulateReply(req([user], { tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'required' }), who);
    expect(toCompletion(tool, { id: 'a', created: 1, model: 'm' }).choices[0]!.message).toMatchObject({ content: null, tool_calls: [tool.toolCall] });
  });

  it('splits text into pieces that concatenate back exactly', () => {
    expect(splitPieces('  a b\n c ')).toEqual(['  a ', 'b\n ', 'c ']);
    expect(splitPieces('   ')).toEqual(['   ']);
    expect(splitPieces('')).toEqual([]);
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
