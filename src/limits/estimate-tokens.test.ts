import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../protocol/openai.js';
import {
  DEFAULT_COMPLETION_TOKENS,
  encodingFor,
  estimateEmbeddingsTokens,
  estimatePromptTokens,
  estimateRequestTokens,
  EXACT_MAX_CHARS,
  IMAGE_TOKENS,
  IMAGE_TOKENS_LOW,
  loadTokenizers,
  loadTokenizersFor,
} from './estimate-tokens.js';

const SYSTEM = 'You are a terse assistant.';
const USER = 'Summarise the plot of Hamlet in two sentences, please — ünïcødé included.';
const chat = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'fast',
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: USER },
  ],
  ...over,
});
/** Framing: 3 per message plus 3 for the reply's priming. */
const FRAMING = 3 * 2 + 3;

describe('encodingFor', () => {
  it.each([
    ['gpt-4o-mini', 'o200k_base'],
    ['gpt-4o-2024-08-06', 'o200k_base'],
    ['chatgpt-4o-latest', 'o200k_base'],
    ['gpt-4.1-nano', 'o200k_base'],
    ['gpt-5', 'o200k_base'],
    ['o1', 'o200k_base'],
    ['o3-mini', 'o200k_base'],
    ['o4-mini-2025-04-16', 'o200k_base'],
    ['openai/gpt-4o', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['gpt-4-turbo', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['gpt-35-turbo', 'cl100k_base'],
    ['text-embedding-3-small', 'cl100k_base'],
    ['claude-3-5-sonnet-latest', null],
    ['gemini-2.0-flash', null],
    ['llama3.1:8b', null],
    ['o1x', null],
    ['command-r-plus', null],
  ])('%s → %s', (model, enc) => {
    expect(encodingFor(model)).toBe(enc);
  });
});

describe('estimatePromptTokens', () => {
  // Must run first: nothing is loaded yet, so the OpenAI family gets the bound while loading starts.
  it('uses the cheap bound for an OpenAI family until its encoding has loaded', () => {
    const chars = SYSTEM.length + USER.length;
    expect(estimatePromptTokens(chat(), 'gpt-4o')).toBe(FRAMING + Math.ceil(chars / 3.5));
  });

  it('counts exactly with the matching encoding once loaded', async () => {
    await loadTokenizersFor(['gpt-4o-mini', 'claude-x', 'gpt-3.5-turbo']);
    expect(estimatePromptTokens(chat(), 'gpt-4o-mini')).toBe(FRAMING + o200k(SYSTEM) + o200k(USER));
    expect(estimatePromptTokens(chat(), 'gpt-3.5-turbo')).toBe(FRAMING + cl100k(SYSTEM) + cl100k(USER));
    expect(o200k(USER)).not.toBe(Math.ceil(USER.length / 3.5)); // the exact path is really taken
  });

  it('bounds instead of tokenizing above the size threshold', async () => {
    await loadTokenizers();
    const big = 'word '.repeat(EXACT_MAX_CHARS / 5 + 1);
    const req = chat({ messages: [{ role: 'user', content: big }] });
    expect(estimatePromptTokens(req, 'gpt-4o')).toBe(3 + 3 + Math.ceil(big.length / 3.5));
    expect(o200k(big)).toBeLessThan(Math.ceil(big.length / 3.5)); // a bound, above the truth here
  });

  it('uses chars/4 for other families', () => {
    const chars = SYSTEM.length + USER.length;
    expect(estimatePromptTokens(chat(), 'claude-3-5-haiku-latest')).toBe(FRAMING + Math.ceil(chars / 4));
  });

  it('prices images at a fixed cost and counts text parts, names and tool calls', () => {
    const req = chat({
      messages: [
        {
          role: 'user',
          name: 'ann',
          content: [
            { type: 'text', text: 'abcd'.repeat(10) },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'getw', arguments: '{"q":"oslo"}' } }],
        },
      ],
    });
    const chars = 3 + 40 + 4 + 12;
    expect(estimatePromptTokens(req, 'mistral-large')).toBe(
      3 + 3 * 2 + 1 + IMAGE_TOKENS + IMAGE_TOKENS_LOW + Math.ceil(chars / 4),
    );
  });

  it('adds tool definitions', () => {
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    const without = estimatePromptTokens(chat(), 'claude-x');
    expect(estimatePromptTokens(chat({ tools }), 'claude-x')).toBe(
      without + Math.ceil(JSON.stringify(tools).length / 4),
    );
  });

  it('does not throw on special-token text', async () => {
    await loadTokenizers();
    const req = chat({ messages: [{ role: 'user', content: 'a <|endoftext|> b' }] });
    expect(estimatePromptTokens(req, 'gpt-4o')).toBeGreaterThan(6);
  });
});

describe('estimateRequestTokens', () => {
  it('adds max_completion_tokens, else max_tokens, else the default, times n', () => {
    const p = estimatePromptTokens(chat(), 'claude-x');
    expect(estimateRequestTokens(chat(), 'claude-x')).toBe(p + DEFAULT_COMPLETION_TOKENS);
    expect(estimateRequestTokens(chat({ max_tokens: 50 }), 'claude-x')).toBe(p + 50);
    expect(estimateRequestTokens(chat({ max_tokens: 50, max_completion_tokens: 70 }), 'claude-x')).toBe(p + 70);
    expect(estimateRequestTokens(chat({ max_tokens: 50, n: 3 }), 'claude-x')).toBe(p + 150);
  });
});

describe('estimateEmbeddingsTokens', () => {
  it('counts token-id input directly and strings by family', async () => {
    await loadTokenizers();
    expect(estimateEmbeddingsTokens({ model: 'e', input: [1, 2, 3] }, 'x')).toBe(3);
    expect(estimateEmbeddingsTokens({ model: 'e', input: [[1, 2], [3]] }, 'x')).toBe(3);
    expect(estimateEmbeddingsTokens({ model: 'e', input: [] }, 'x')).toBe(0);
    expect(estimateEmbeddingsTokens({ model: 'e', input: ['hello world', USER] }, 'text-embedding-3-small')).toBe(
      cl100k('hello world') + cl100k(USER),
    );
    expect(estimateEmbeddingsTokens({ model: 'e', input: 'abcdefgh' }, 'embed-english-v3.0')).toBe(2);
  });
});
