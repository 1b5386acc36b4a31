import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';
import { toOllamaRequest } from './request.js';
import { MAX_THINK_REFUSALS, THINK_REFUSAL_MS, ThinkRefusals, ollamaThinkOf } from './think.js';

const ask = (reasoning_effort: string | undefined, model: string, think = true) =>
  toOllamaRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }], reasoning_effort } as ChatRequest, model, false, think);
const refusal = (model: string) => new UpstreamError({ category: 'invalid_request', status: 400, message: `"${model}" does not support thinking` });

describe('reasoning_effort → Ollama think', () => {
  it('is a switch for thinking models, off for none; nothing without an effort', () => {
    expect(ask('low', 'qwen3').think).toBe(true);
    expect(ask('xhigh', 'deepseek-r1:8b').think).toBe(true);
    expect(ask('none', 'qwen3').think).toBe(false);
    expect(ask(undefined, 'qwen3')).not.toHaveProperty('think');
    expect(ask('ultra', 'qwen3')).not.toHaveProperty('think');
  });

  it('is a level for gpt-oss, which cannot stop thinking', () => {
    expect(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'].map((e) => ollamaThinkOf(e as never, 'gpt-oss:20b'))).toEqual(['low', 'low', 'low', 'medium', 'high', 'high']);
  });

  it('is left out for a model that refused it', () => {
    expect(ask('high', 'gemma3', false)).not.toHaveProperty('think');
  });
});

describe('ThinkRefusals', () => {
  it('learns only Ollama\'s refusal of think, and forgets it after THINK_REFUSAL_MS', async () => {
    const clock = new VirtualClock();
    const r = new ThinkRefusals(clock);
    expect(r.learn(new UpstreamError({ category: 'invalid_request', status: 400, message: 'invalid think value' }), 'gemma3')).toBe(false);
    expect(r.learn(new UpstreamError({ category: 'server', status: 500, message: 'does not support thinking' }), 'gemma3')).toBe(false);
    expect(r.has('gemma3')).toBe(false);
    expect(r.learn(refusal('gemma3'), 'gemma3')).toBe(true);
    expect(r.has('gemma3')).toBe(true);
    expect(r.has('qwen3')).toBe(false);
    await clock.advance(THINK_REFUSAL_MS - 1);
    expect(r.has('gemma3')).toBe(true);
    await clock.advance(1);
    expect(r.has('gemma3')).toBe(false);
  });

  it('keeps at most MAX_THINK_REFUSALS models, the oldest making room', () => {
    const r = new ThinkRefusals(new VirtualClock());
    for (let i = 0; i <= MAX_THINK_REFUSALS; i++) r.learn(refusal(`m${i}`), `m${i}`);
    expect(r.has('m0')).toBe(false);
    expect(r.has('m1')).toBe(true);
    expect(r.has(`m${MAX_THINK_REFUSALS}`)).toBe(true);
  });
});
