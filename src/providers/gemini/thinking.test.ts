import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import { toGenerateContentRequest } from './convert-request.js';
import { thinkingConfigOf } from './thinking.js';

const convert = (req: Partial<ChatRequest>, model: string) =>
  toGenerateContentRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }], ...req }, model);

describe('reasoning_effort → Gemini thinkingConfig', () => {
  it('sends nothing without an effort, or with one it does not know', () => {
    expect(convert({}, 'gemini-2.5-flash')).not.toHaveProperty('generationConfig');
    expect(convert({ reasoning_effort: 'ultra' }, 'gemini-2.5-flash')).not.toHaveProperty('generationConfig');
    expect(convert({ temperature: 0.5 }, 'gemini-3-pro-preview').generationConfig).toEqual({ temperature: 0.5 });
  });

  it('gives Gemini 3 a thinking level, Pro only low and high, and asks for the thoughts', () => {
    const flash = (e: string) => thinkingConfigOf(e as never, 'gemini-3-flash-preview');
    const pro = (e: string) => thinkingConfigOf(e as never, 'gemini-3-pro-preview');
    expect(['minimal', 'low', 'medium', 'high', 'xhigh'].map((e) => flash(e)?.thinkingLevel)).toEqual(['MINIMAL', 'LOW', 'MEDIUM', 'HIGH', 'HIGH']);
    expect(['minimal', 'low', 'medium', 'high', 'xhigh'].map((e) => pro(e)?.thinkingLevel)).toEqual(['LOW', 'LOW', 'HIGH', 'HIGH', 'HIGH']);
    expect(flash('low')).toEqual({ thinkingLevel: 'LOW', includeThoughts: true });
    // Gemini 3 cannot stop thinking: the least it has, and no thoughts back.
    expect(flash('none')).toEqual({ thinkingLevel: 'MINIMAL' });
    expect(pro('none')).toEqual({ thinkingLevel: 'LOW' });
    expect(thinkingConfigOf('high', 'models/gemini-3.1-pro-preview')).toEqual({ thinkingLevel: 'HIGH', includeThoughts: true });
  });

  it('gives Gemini 2.5 a budget, 0 for none where the model can stop thinking', () => {
    expect(thinkingConfigOf('medium', 'gemini-2.5-pro')).toEqual({ thinkingBudget: 8192, includeThoughts: true });
    expect(thinkingConfigOf('minimal', 'gemini-2.5-flash-lite')).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    expect(thinkingConfigOf('xhigh', 'gemini-2.5-flash')).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    expect(thinkingConfigOf('none', 'gemini-2.5-flash')).toEqual({ thinkingBudget: 0 });
    expect(thinkingConfigOf('none', 'gemini-2.5-pro')).toEqual({ thinkingBudget: 128 });
  });

  it('gives models before 2.5 nothing, and a name without a version a budget (nothing for none)', () => {
    expect(thinkingConfigOf('high', 'gemini-2.0-flash')).toBeUndefined();
    expect(thinkingConfigOf('high', 'gemini-1.5-pro')).toBeUndefined();
    expect(thinkingConfigOf('low', 'gemini-flash-latest')).toEqual({ thinkingBudget: 2048, includeThoughts: true });
    expect(thinkingConfigOf('none', 'gemini-flash-latest')).toBeUndefined();
  });

  it('gives the models that never think nothing, which they would refuse: Gemma, speech, embeddings, 2.x image models', () => {
    for (const model of ['gemma-3-27b-it', 'gemini-2.5-flash-preview-tts', 'gemini-embedding-001', 'gemini-2.5-flash-image', 'gemini-2.0-flash-preview-image-generation']) {
      expect(thinkingConfigOf('high', model)).toBeUndefined();
      expect(thinkingConfigOf('none', model)).toBeUndefined();
    }
  });

  it('asks a continuation (an assistant prefill, as stream resume sends) for the least thinking', () => {
    const resumed = convert({ reasoning_effort: 'high', messages: [{ role: 'user', content: 'count' }, { role: 'assistant', content: 'one two' }] }, 'gemini-2.5-flash');
    expect(resumed.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
  });

  it('goes beside the other generation settings, a small output limit left to the answer with the thinking on top', () => {
    // Thoughts count in maxOutputTokens: 50 alone was spent thinking, and the answer came empty, cut for length.
    expect(convert({ reasoning_effort: 'high', max_tokens: 50 }, 'gemini-3-flash-preview').generationConfig).toEqual({
      maxOutputTokens: 50 + 16_384,
      thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true },
    });
    // One that leaves the answer 1024 tokens beside the thinking is kept; none asks for no room; no limit stays none.
    expect(convert({ reasoning_effort: 'low', max_tokens: 4_000 }, 'gemini-2.5-flash').generationConfig?.maxOutputTokens).toBe(4_000);
    expect(convert({ reasoning_effort: 'none', max_tokens: 50 }, 'gemini-2.5-flash').generationConfig?.maxOutputTokens).toBe(50);
    expect(convert({ reasoning_effort: 'low' }, 'gemini-2.5-flash').generationConfig).not.toHaveProperty('maxOutputTokens');
  });
});
