/**
 * An upstream 429 that refuses one request for being larger than the deployment's whole
 * tokens-per-minute limit (OpenAI: "Request too large for gpt-4o … on tokens per min
 * (TPM): Limit 30000, Requested 36278") is no rate limit: no wait lets it through there.
 * The request moves to the next candidate; the refusing deployment is neither cooled down
 * nor counted against its breaker, and gets back the tokens the request reserved, so the
 * next request is sent to it as before. With no candidate left, the client gets 400
 * invalid_request, never a 429 or a 503 that invites a retry bound to fail the same way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openaiProvider, startGateway, type TestGateway } from '../helpers/gateway.js';
import { completionText, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const TOO_LARGE = JSON.stringify({
  error: {
    message:
      'Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 36278. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.',
    type: 'tokens',
    param: null,
    code: 'rate_limit_exceeded',
  },
});
const GROQ_TOO_LARGE = JSON.stringify({
  error: {
    message: 'Request too large for model `llama-3.3-70b-versatile` in organization `org_1` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 7964, please reduce your message size and try again.',
    type: 'tokens',
    code: 'rate_limit_exceeded',
  },
});

let gw: TestGateway | undefined;
const upstreams: RawUpstream[] = [];
afterEach(async () => {
  await gw?.close(0);
  for (const u of upstreams.splice(0)) await u.close();
  gw = undefined;
});

async function refusing(status: number, body: string, big: { n: number }): Promise<RawUpstream> {
  const u = await startRawUpstream((res, hit) => {
    // Only the large request is too large for this deployment; a small one is served.
    if ((hit.body.max_tokens as number) >= 1000) {
      big.n++;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionText('small-model', 'ok', 5, 1));
  });
  upstreams.push(u);
  return u;
}

async function serving(): Promise<RawUpstream> {
  const u = await startRawUpstream((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionText('large-model', 'ok', 5, 1));
  });
  upstreams.push(u);
  return u;
}

const ask = (model: string, maxTokens: number) =>
  fetch(`${gw!.baseURL}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model, max_tokens: maxTokens, messages: [{ role: 'user', content: 'hi' }] }),
  });

/** The two ways upstreams say it: OpenAI's 429, Groq's 413. */
const TOO_LARGE_ANSWERS: [string, number, string][] = [
  ['OpenAI, 429', 429, TOO_LARGE],
  ['Groq, 413', 413, GROQ_TOO_LARGE],
];

describe('a 429 saying one request is larger than the deployment’s tpm', () => {
  it.each(TOO_LARGE_ANSWERS)('(%s) moves on to the next candidate, without cooling down or failing the deployment, and gives its tokens back', async (_name, status, body) => {
    const big = { n: 0 };
    const small = await refusing(status, body, big);
    const large = await serving();
    gw = await startGateway(
      {
        resilience: { maxRetries: 2, breaker: { failureThreshold: 1, recoveryMs: 60_000, halfOpenProbes: 1 } },
        providers: [openaiProvider('small', small.url), openaiProvider('large', large.url)],
        models: [
          // tpm 2,500: one request of 1,500 max_tokens fits, two in the same minute do not.
          { name: 'chat', deployments: [{ provider: 'small', model: 'small-model', tpm: 2_500 }], fallbacks: ['big'] },
          { name: 'big', deployments: [{ provider: 'large', model: 'large-model' }] },
        ],
      },
      { clock: new VirtualClock() },
    );
    const r1 = await ask('chat', 1_500);
    expect(r1.status).toBe(200);
    expect(r1.headers.get('x-switchyard-deployment')).toBe('large/large-model');
    await r1.text();
    // Not retried on the deployment that refused it: waiting would not change the answer.
    expect(big.n).toBe(1);
    // Neither cooled down nor breaker-failed (threshold 1), and its 1,500 tokens are back:
    // the next large request is sent to it (and refused) before moving on again.
    const r2 = await ask('chat', 1_500);
    expect(r2.status).toBe(200);
    await r2.text();
    expect(big.n).toBe(2);
    // A small request is served there as ever.
    const r3 = await ask('chat', 10);
    expect(r3.status).toBe(200);
    expect(r3.headers.get('x-switchyard-deployment')).toBe('small/small-model');
    await r3.text();
  });

  it.each(TOO_LARGE_ANSWERS)('(%s) is a 400 invalid_request when no candidate is left, with the upstream’s message', async (_name, status, body) => {
    const big = { n: 0 };
    const small = await refusing(status, body, big);
    gw = await startGateway(
      { providers: [openaiProvider('small', small.url)], models: [{ name: 'chat', deployments: [{ provider: 'small', model: 'small-model' }] }] },
      { clock: new VirtualClock() },
    );
    const r = await ask('chat', 1_500);
    expect(r.status).toBe(400);
    const json = (await r.json()) as { error: { code: string; message: string } };
    expect(json.error.code).toBe('invalid_request');
    expect(json.error.message).toMatch(/Request too large/i);
    expect(big.n).toBe(1);
  });
});
