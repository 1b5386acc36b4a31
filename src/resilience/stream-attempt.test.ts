import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, ChunkDelta } from '../protocol/openai.js';
import { isCommitChunk } from './stream-attempt.js';

const chunk = (delta: ChunkDelta, finish: 'stop' | null = null): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('isCommitChunk', () => {
  it('a role chunk or an empty text is not the answer yet', () => {
    expect(isCommitChunk(chunk({ role: 'assistant', content: '', refusal: null }))).toBe(false);
    expect(isCommitChunk(chunk({ role: 'assistant', content: null, tool_calls: [] }))).toBe(false);
  });

  it('text, a tool call, a refusal or a finish is', () => {
    expect(isCommitChunk(chunk({ content: 'Hi' }))).toBe(true);
    expect(isCommitChunk(chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '' } }] }))).toBe(true);
    expect(isCommitChunk(chunk({ refusal: 'No.' }))).toBe(true);
    expect(isCommitChunk(chunk({}, 'stop'))).toBe(true);
  });

  // Held back before, a legacy call's pieces piled up until its finish, racing the first-token timeout.
  it('so is a legacy function_call, as OpenAI streams its first piece (content null)', () => {
    expect(isCommitChunk(chunk({ role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '' } }))).toBe(true);
  });
});
