/**
 * A deployment's contextWindow skips it for a request that cannot fit, before any call:
 * a filter, so it must not skip one that fits. The rough size it reads weighed non-ASCII
 * text as the pacing bound does (a CJK character 1.75 tokens, a Cyrillic letter ~1), 2-4×
 * what gpt-4o's own tokenizer counts for them: a Chinese or Russian prompt well inside the
 * window was refused 400 ("No deployment ... can serve this request") with no call made.
 * Over real sockets, with the count the model's encoding gives checked in the test.
 */
import OpenAI from 'openai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { answersCompletion, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const CHINESE =
  '北京是中华人民共和国的首都，也是全国的政治中心和文化中心。这座城市有三千多年的建城史，' +
  '保存了故宫、天坛、颐和园等众多历史遗迹。请帮我把这段文字翻译成英文，并保持原来的语气。';
const RUSSIAN =
  'Москва — столица Российской Федерации и крупнейший по численности населения город страны. ' +
  'Пожалуйста, кратко перескажите этот текст и выделите основные мысли автора. ';

const WINDOW = 4096;
const MAX_TOKENS = 256;

async function setup(): Promise<{ client: OpenAI; upstream: RawUpstream; gw: TestGateway }> {
  const upstream = await startRawUpstream(answersCompletion('gpt-4o', 'ok'));
  const gw = await startChatOver(upstream.url, {}, { model: 'gpt-4o', contextWindow: WINDOW });
  closers.push(
    () => upstream.close(),
    () => gw.close(0),
  );
  return { client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 }), upstream, gw };
}

describe('the contextWindow filter and text in other scripts', () => {
  it.each([
    ['Chinese', CHINESE.repeat(30)],
    ['Russian', RUSSIAN.repeat(36)],
  ])('a %s prompt the model counts well inside the window is sent, not refused before any call', async (_, content) => {
    // What gpt-4o itself counts: under two thirds of the window, with the completion budget.
    expect(countTokens(content) + MAX_TOKENS).toBeLessThan((WINDOW * 2) / 3);
    const { client, upstream } = await setup();
    const r = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content }], max_tokens: MAX_TOKENS });
    expect(r.choices[0]!.message.content).toBe('ok');
    expect(upstream.hits).toHaveLength(1);
  });

  it('a prompt that cannot fit is still refused before any call', async () => {
    const content = 'All work and no play makes Jack a dull boy. '.repeat(500); // 22,000 characters
    expect(countTokens(content)).toBeGreaterThan(WINDOW);
    const { client, upstream } = await setup();
    const err = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('context window 4096 too small');
    expect(upstream.hits).toHaveLength(0);
  });
});
