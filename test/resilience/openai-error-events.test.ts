/**
 * An OpenAI-compatible upstream (OpenAI, Azure, vLLM, a LiteLLM proxy) that answers 200
 * and then reports the failure as an error object: the first event of a stream, or the
 * whole of a buffered answer. The gateway acts on what the error says, as it would on
 * the HTTP error with that body — a rate limit cools the deployment down and moves on, a
 * context-length refusal goes only to larger models, a bad request ends the chain with
 * 400 — and keeps `server` (retry, then fail over) when nothing in it says otherwise.
 * All of them were `server`: retried with backoff, then answered by the next candidate.
 *
 * Chain: `chat` = p1 (8k context), then `small` (4k), then `big` (128k), all on one
 * loopback upstream; p1 fails as the case says, the others answer.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, completionText, sseHead, startRawUpstream, usageChunk, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

type Transport = 'stream' | 'buffered';

let upstream: RawUpstream;
let gw: TestGateway | undefined;
/** What p1 answers with (200, then this error object); undefined: it answers. */
let failure: unknown;
/** Headers of p1's failing 200. */
let failureHeaders: Record<string, string> = {};

function answer(res: ServerResponse, model: string, stream: boolean): void {
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionText(model, `from ${model}`, 5, 2));
    return;
  }
  sseHead(res);
  res.end(chunk(model, { role: 'assistant', content: '' }) + chunk(model, { content: `from ${model}` }) + chunk(model, {}, 'stop') + usageChunk(model, 5, 2) + 'data: [DONE]\n\n');
}

beforeEach(async () => {
  failure = undefined;
  failureHeaders = {};
  upstream = await startRawUpstream((res, hit) => {
    const model = hit.body.model as string;
    const stream = hit.body.stream === true;
    if (model !== 'p1' || failure === undefined) return answer(res, model, stream);
    if (stream) {
      // As vLLM and LiteLLM send it: the error event, then [DONE].
      res.writeHead(200, { 'content-type': 'text/event-stream', ...failureHeaders });
      res.end(`data: ${JSON.stringify(failure)}\n\ndata: [DONE]\n\n`);
    } else {
      res.writeHead(200, { 'content-type': 'application/json', ...failureHeaders });
      res.end(JSON.stringify(failure));
    }
  });
});

afterEach(async () => {
  await gw?.close(0);
  gw = undefined;
  await upstream.close();
});

async function start(resilience: Record<string, unknown>, clock?: VirtualClock): Promise<TestGateway> {
  gw = await startGateway(
    {
      resilience: { cooldownMs: 60_000, backoff: { baseMs: 1, maxMs: 1 }, breaker: { failureThreshold: 100 }, ...resilience },
      providers: [{ id: 'up', type: 'openai', baseUrl: upstream.url }],
      models: [
        { name: 'chat', deployments: [{ provider: 'up', model: 'p1', contextWindow: 8192 }], fallbacks: ['small', 'big'] },
        { name: 'small', deployments: [{ provider: 'up', model: 'small', contextWindow: 4096 }] },
        { name: 'big', deployments: [{ provider: 'up', model: 'big', contextWindow: 128_000 }] },
      ],
    },
    clock ? { clock } : {},
  );
  return gw;
}

interface Seen {
  status: number;
  /** The answer's text, or the error's code. */
  content?: string;
  error?: { code: string; message: string; param: string | null };
  deployment: string | null;
  attempts: string | null;
  /** [model, errorType] of each attempt, as traced. */
  trace: [string, string | null][];
}

async function ask(g: TestGateway, transport: Transport): Promise<Seen> {
  const res = await fetch(`${g.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream: transport === 'stream', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await res.text();
  const seen: Seen = { status: res.status, deployment: res.headers.get('x-switchyard-deployment'), attempts: res.headers.get('x-switchyard-attempts'), trace: [] };
  if (res.status !== 200) seen.error = (JSON.parse(text) as { error: Seen['error'] }).error;
  else if (transport === 'buffered') seen.content = (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
  else {
    seen.content = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => (JSON.parse(l.slice(6)) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? '')
      .join('');
  }
  const id = res.headers.get('x-request-id')!;
  await expect.poll(() => g.observability.traces.get(id)).toBeDefined();
  seen.trace = g.observability.traces.get(id)!.attempts.map((a) => [a.model, a.errorType ?? null]);
  return seen;
}

const hitsOf = (model: string) => upstream.hits.filter((h) => h.body.model === model).length;

const RATE_LIMITS: [string, unknown][] = [
  [
    'OpenAI: code rate_limit_exceeded',
    { error: { message: 'Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
  ],
  ['LiteLLM proxy: its status as the string "429"', { error: { message: 'litellm.RateLimitError: OpenAIException - Rate limit reached for gpt-4o.', type: 'None', param: 'None', code: '429' } }],
  ['Azure: code "429"', { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded token rate limit of your current tier.' } }],
  ['no code or type, a message that says so', { error: { message: 'Rate limit exceeded: 60 requests per minute. Please retry later.' } }],
];

const CONTEXT_LENGTH: [string, unknown][] = [
  [
    'OpenAI: code context_length_exceeded',
    {
      error: {
        message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
  ],
  [
    'vLLM: BadRequestError, code 400',
    {
      error: {
        object: 'error',
        message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
  ],
];

for (const transport of ['stream', 'buffered'] as const) {
  describe(`${transport}: a 200 whose ${transport === 'stream' ? 'first event' : 'body'} is an error object`, () => {
    for (const [label, body] of RATE_LIMITS) {
      it(`${label}: rate_limited — no retry, p1 cools down, the next candidate serves, and the next request skips p1`, async () => {
        failure = body;
        const g = await start({ maxRetries: 2 });
        const first = await ask(g, transport);
        expect(first).toMatchObject({ status: 200, content: 'from small', deployment: 'up/small', attempts: '2' });
        expect(first.trace).toEqual([
          ['p1', 'rate_limited'],
          ['small', null],
        ]);
        const second = await ask(g, transport);
        expect(second).toMatchObject({ status: 200, content: 'from small', attempts: '1' });
        expect(second.trace[0]).toEqual(['p1', 'cooldown']);
        expect(hitsOf('p1')).toBe(1);
      });
    }

    for (const [label, body] of CONTEXT_LENGTH) {
      it(`${label}: context_length — only larger models are tried: small is passed over, big serves`, async () => {
        failure = body;
        const g = await start({ maxRetries: 2 });
        const seen = await ask(g, transport);
        expect(seen).toMatchObject({ status: 200, content: 'from big', deployment: 'up/big', attempts: '2' });
        expect(seen.trace).toEqual([
          ['p1', 'context_length'],
          ['big', null],
        ]);
        expect([hitsOf('p1'), hitsOf('small')]).toEqual([1, 0]);
      });
    }

    it('OpenAI invalid_request_error: the chain ends with the upstream 400, its message and param', async () => {
      failure = { error: { message: "Invalid value for 'temperature': must be at most 2.", type: 'invalid_request_error', param: 'temperature', code: null } };
      const g = await start({ maxRetries: 2 });
      const seen = await ask(g, transport);
      expect(seen.status).toBe(400);
      expect(seen.error).toEqual({ code: 'invalid_request', message: "Invalid value for 'temperature': must be at most 2.", param: 'temperature', type: expect.any(String) });
      expect(seen.trace).toEqual([['p1', 'invalid_request']]);
      expect([hitsOf('p1'), hitsOf('small'), hitsOf('big')]).toEqual([1, 0, 0]);
    });

    // The code is the contract's for the status: 413 is payload_too_large wherever the limit is.
    for (const [label, body, status, code] of [
      ['LiteLLM: code "413"', { error: { message: 'Request body too large for this deployment', type: 'None', param: 'None', code: '413' } }, 413, 'payload_too_large'],
      ['vLLM: code 422', { error: { object: 'error', message: 'Unprocessable request: unknown field', type: 'BadRequestError', param: null, code: 422 } }, 422, 'invalid_request'],
    ] as const) {
      it(`${label}: the chain ends with the status the error names, not a bare 400, and that status's code`, async () => {
        failure = body;
        const g = await start({ maxRetries: 2 });
        const seen = await ask(g, transport);
        expect(seen.status).toBe(status);
        expect(seen.error).toMatchObject({ code, message: body.error.message });
        expect(seen.trace).toEqual([['p1', 'invalid_request']]);
        expect([hitsOf('p1'), hitsOf('small'), hitsOf('big')]).toEqual([1, 0, 0]);
      });
    }

    it('Azure content_filter: 400 content_policy_violation, no other candidate asked', async () => {
      failure = { error: { code: 'content_filter', message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", param: 'prompt', status: 400 } };
      const g = await start({ maxRetries: 2 });
      const seen = await ask(g, transport);
      expect(seen.status).toBe(400);
      expect(seen.error?.code).toBe('content_policy_violation');
      expect(seen.trace).toEqual([['p1', 'content_policy']]);
      expect(hitsOf('small') + hitsOf('big')).toBe(0);
    });

    it('OpenAI invalid_api_key: auth — no retry, p1 cools down, the next candidate serves', async () => {
      failure = { error: { message: 'Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };
      const g = await start({ maxRetries: 2 });
      const seen = await ask(g, transport);
      expect(seen).toMatchObject({ status: 200, content: 'from small', attempts: '2' });
      expect(seen.trace).toEqual([
        ['p1', 'auth'],
        ['small', null],
      ]);
      expect((await ask(g, transport)).trace[0]).toEqual(['p1', 'cooldown']);
      expect(hitsOf('p1')).toBe(1);
    });

    for (const [label, body] of [
      ['OpenAI server_error', { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } }],
      ['a bare message that names nothing', { error: { message: 'Something went wrong' } }],
      ['vLLM InternalServerError, code 500', { error: { object: 'error', message: 'EngineCore encountered an issue.', type: 'InternalServerError', param: null, code: 500 } }],
    ] as const) {
      it(`${label}: still server — retried (maxRetries 2), then the next candidate serves; no cooldown`, async () => {
        failure = body;
        const g = await start({ maxRetries: 2 });
        const seen = await ask(g, transport);
        expect(seen).toMatchObject({ status: 200, content: 'from small', attempts: '4' });
        expect(seen.trace).toEqual([
          ['p1', 'server'],
          ['p1', 'server'],
          ['p1', 'server'],
          ['small', null],
        ]);
      });
    }
  });
}

it('timeline: a rate-limit event cools p1 down for cooldownMs, after which it serves again', async () => {
  const clock = new VirtualClock();
  failure = RATE_LIMITS[0]![1];
  const g = await start({ maxRetries: 0, cooldownMs: 30_000 }, clock);
  expect((await ask(g, 'stream')).deployment).toBe('up/small');
  await clock.advance(29_999);
  expect((await ask(g, 'stream')).trace[0]).toEqual(['p1', 'cooldown']);
  failure = undefined;
  await clock.advance(1);
  const back = await ask(g, 'stream');
  expect(back).toMatchObject({ status: 200, content: 'from p1', deployment: 'up/p1', attempts: '1' });
  expect(hitsOf('p1')).toBe(2);
});

it("timeline: the rate-limit event's 200 headers teach the pacer, as any answer's do: p1 is paced out until their reset", async () => {
  const clock = new VirtualClock();
  failure = RATE_LIMITS[0]![1];
  failureHeaders = { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '60s' };
  const g = await start({ maxRetries: 0, cooldownMs: 30_000 }, clock);
  expect((await ask(g, 'stream')).deployment).toBe('up/small');
  failure = undefined;
  // The cooldown is over; what the headers said is left is not, until 60 s.
  await clock.advance(30_000);
  const paced = await ask(g, 'stream');
  expect(paced.deployment).toBe('up/small');
  expect(paced.trace[0]).toEqual(['p1', 'throttled']);
  await clock.advance(30_000);
  expect((await ask(g, 'stream')).deployment).toBe('up/p1');
  expect(hitsOf('p1')).toBe(2);
});
