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
  EXTRA_BYTE_TOKENS,
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
/** What the bound adds for a string's non-ASCII text (USER's dash and accents). */
const extra = (s: string) => (Buffer.byteLength(s, 'utf8') - s.length) * EXTRA_BYTE_TOKENS;
const user = (content: string) => chat({ messages: [{ role: 'user', content }] });

// Everyday prompts in scripts that take far more tokens per character than English.
const JAPANESE =
  '東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。江戸時代には徳川幕府の本拠地として栄え、' +
  '明治維新の後に天皇が京都から移りました。すみません、この書類を明日までに確認していただけますか？';
const CHINESE =
  '北京是中华人民共和国的首都，也是全国的政治中心和文化中心。这座城市有三千多年的建城史，' +
  '保存了故宫、天坛、颐和园等众多历史遗迹。请帮我把这段文字翻译成英文，并保持原来的语气。';
const KOREAN = '서울은 대한민국의 수도이자 최대 도시입니다. 이 문서를 검토하고 요약해 주시겠어요?';
const RUSSIAN =
  'Москва — столица Российской Федерации и крупнейший по численности населения город страны. ' +
  'Пожалуйста, кратко перескажите этот текст и выделите основные мысли автора.';
const GREEK = 'Η Αθήνα είναι η πρωτεύουσα και η μεγαλύτερη πόλη της Ελλάδας. Παρακαλώ συνοψίστε αυτό το κείμενο.';
const EMOJI = '🎉🚀🔥💯😂👍🍕✨🙏🥳';

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
    expect(estimatePromptTokens(chat(), 'gpt-4o')).toBe(FRAMING + Math.ceil(chars / 3.5 + extra(USER)));
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

  it('uses chars/4 for other families, plus the weight of non-ASCII bytes', () => {
    const chars = SYSTEM.length + USER.length;
    expect(extra(SYSTEM)).toBe(0);
    expect(extra(USER)).toBeGreaterThan(0);
    expect(estimatePromptTokens(chat(), 'claude-3-5-haiku-latest')).toBe(FRAMING + Math.ceil(chars / 4 + extra(USER)));
  });

  it('leaves the bound of ASCII text as it was', () => {
    const english = 'Summarise the plot of Hamlet in two sentences, please - and keep it short.';
    expect(estimatePromptTokens(user(english), 'claude-x')).toBe(3 + 3 + Math.ceil(english.length / 4));
  });

  it.each([
    ['Japanese', JAPANESE],
    ['Chinese', CHINESE],
    ['Korean', KOREAN],
  ])('bounds %s at a token per character or more, above cl100k, for other families', (_, text) => {
    const tokens = estimatePromptTokens(user(text), 'claude-3-5-sonnet-latest') - 3 - 3;
    expect(tokens).toBeGreaterThanOrEqual(text.length);
    expect(tokens).toBeGreaterThanOrEqual(cl100k(text));
  });

  it('bounds Russian at or above cl100k for other families', () => {
    const tokens = estimatePromptTokens(user(RUSSIAN), 'gemini-2.0-flash') - 3 - 3;
    expect(tokens).toBeGreaterThanOrEqual(RUSSIAN.length / 2);
    expect(tokens).toBeGreaterThanOrEqual(cl100k(RUSSIAN));
  });

  it('bounds Greek at about a token per letter, about cl100k, for other families', () => {
    const letters = GREEK.replace(/[^\p{L}]/gu, '').length;
    const tokens = estimatePromptTokens(user(GREEK), 'gemini-2.0-flash') - 3 - 3;
    expect(tokens).toBeGreaterThanOrEqual(letters);
    expect(tokens).toBeGreaterThanOrEqual(o200k(GREEK));
    expect(tokens).toBeGreaterThanOrEqual(0.9 * cl100k(GREEK)); // cl100k splits Greek finer than most
  });

  it('bounds emoji at two tokens or more each', () => {
    const count = [...EMOJI].length;
    const tokens = estimatePromptTokens(user(EMOJI), 'llama3.1:8b') - 3 - 3;
    expect(tokens).toBeGreaterThanOrEqual(2 * count);
    expect(tokens).toBeGreaterThanOrEqual(o200k(EMOJI));
  });

  it('still counts a short non-Latin prompt exactly for an OpenAI family', async () => {
    await loadTokenizers();
    expect(estimatePromptTokens(user(JAPANESE), 'gpt-4o')).toBe(3 + 3 + o200k(JAPANESE));
    expect(estimatePromptTokens(user(RUSSIAN), 'gpt-4')).toBe(3 + 3 + cl100k(RUSSIAN));
  });

  it('bounds a large Chinese prompt for an OpenAI family at or above its encoding', async () => {
    await loadTokenizers();
    const big = CHINESE.repeat(Math.ceil((EXACT_MAX_CHARS + 1) / CHINESE.length));
    expect(big.length).toBeGreaterThan(EXACT_MAX_CHARS);
    expect(estimatePromptTokens(user(big), 'gpt-4o') - 3 - 3).toBeGreaterThanOrEqual(o200k(big));
    expect(estimatePromptTokens(user(big), 'gpt-4-turbo') - 3 - 3).toBeGreaterThanOrEqual(cl100k(big));
  });

  it('weighs non-ASCII names, text parts and tool calls in the bound', () => {
    const args = JSON.stringify({ query: JAPANESE });
    const req = chat({
      messages: [
        { role: 'user', name: 'さくら', content: [{ type: 'text', text: RUSSIAN }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: '検索', arguments: args } }],
        },
      ],
    });
    const truth = cl100k('さくら') + cl100k(RUSSIAN) + cl100k('検索') + cl100k(args);
    expect(estimatePromptTokens(req, 'command-r-plus') - 3 - 3 * 2 - 1).toBeGreaterThanOrEqual(truth);
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

  it('weighs non-ASCII text in tool and schema definitions', () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'search', description: JAPANESE, parameters: { type: 'object' } },
      },
    ];
    const schema = { name: 'answer', schema: { type: 'object', description: CHINESE } };
    const without = estimatePromptTokens(chat(), 'claude-x');
    const withTools = estimatePromptTokens(chat({ tools }), 'claude-x');
    expect(withTools - without).toBeGreaterThanOrEqual(cl100k(JSON.stringify(tools)));
    const withSchema = estimatePromptTokens(
      chat({ response_format: { type: 'json_schema', json_schema: schema } }),
      'claude-x',
    );
    expect(withSchema - without).toBeGreaterThanOrEqual(cl100k(JSON.stringify(schema)));
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

  it('bounds Korean input for other families at or above cl100k', () => {
    const input = [KOREAN, KOREAN.slice(0, 20)];
    const truth = cl100k(input[0]!) + cl100k(input[1]!);
    expect(estimateEmbeddingsTokens({ model: 'e', input }, 'embed-multilingual-v3.0')).toBeGreaterThanOrEqual(truth);
    expect(estimateEmbeddingsTokens({ model: 'e', input: KOREAN }, 'embed-multilingual-v3.0')).toBeGreaterThanOrEqual(
      cl100k(KOREAN),
    );
  });
});
