import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors as undiciErrors, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamHeaders } from '../providers/types.js';
import { categorize, errorFromResponse, errorFromTransport, exceedsTokenLimit, parseErrorBody, parseRetryAfter, refusedByThisModel } from './classify.js';
import { UpstreamError, type ErrorCategory } from './upstream-error.js';

/** Thu, 01 Jan 2026 00:00:00 GMT: the injected "now" for HTTP-date Retry-After. */
const NOW = Date.UTC(2026, 0, 1);

interface Row {
  name: string;
  status: number;
  /** An object is sent as JSON; a string is sent as is. */
  body: unknown;
  headers?: UpstreamHeaders;
  category: ErrorCategory;
  message: string;
  providerCode?: string;
  retryAfterMs?: number;
  param?: string | null;
}

// Bodies as the providers send them (OpenAI, Anthropic, Gemini, Cohere, Ollama and Azure
// error references and reported issues). Message texts are kept whole: the classifier
// reads them, and a shortened text could hide a misread.
const OPENAI_TPM =
  'Rate limit reached for gpt-4o in organization org-abc123 on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms. Visit https://platform.openai.com/account/rate-limits to learn more.';
const OPENAI_QUOTA =
  'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.';
const OPENAI_CONTEXT =
  "This model's maximum context length is 128000 tokens. However, your messages resulted in 130017 tokens. Please reduce the length of the messages.";
const OPENAI_SAFETY =
  'Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.';
const OPENAI_FLAGGED =
  'Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt: https://platform.openai.com/docs/guides/reasoning#advice-on-prompting';
const OPENAI_BAD_KEY =
  'Incorrect API key provided: sk-abc12***************************************xyz9. You can find your API key at https://platform.openai.com/account/api-keys.';
const OPENAI_500 =
  'The server had an error while processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if the error persists.';
const OPENAI_503 =
  'That model is currently overloaded with other requests. You can retry your request, or contact us through our help center at help.openai.com if the error persists. (Please include the request ID 500d9fff2057e4af93a280f67002c342 in your message.)';
const ANTHROPIC_429 =
  'This request would exceed the rate limit for your organization of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.';
const GEMINI_429 =
  'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.';
const GEMINI_403 =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
const COHERE_429 =
  "You are using a Trial key, which is limited to 10 API calls / minute. You can continue to use the Trial key for free or upgrade to a Production key with higher rate limits at 'https://dashboard.cohere.com/api-keys'. Contact us on 'https://discord.gg/XW44jPfYJu' or email us at support@cohere.com with any questions";
const COHERE_TOO_LONG =
  'too many tokens: total number of tokens in the prompt cannot exceed 128000 - received 131072. Try using a shorter prompt, or enabling prompt truncating. See https://docs.cohere.com/reference/chat for more details.';
const AZURE_FILTER =
  "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766";
const AZURE_429 =
  'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit.';

const openai = (message: string, type: string | null, code: string | null, param: string | null = null) => ({
  error: { message, type, param, code },
});
const anthropic = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
  request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy',
});
const gemini = (code: number, status: string, message: string) => ({ error: { code, message, status } });

const ROWS: Row[] = [
  // OpenAI
  {
    name: 'openai 429 rate_limit_exceeded (TPM), retry-after-ms wins over retry-after',
    status: 429,
    body: openai(OPENAI_TPM, 'tokens', 'rate_limit_exceeded'),
    headers: { 'retry-after-ms': '644', 'retry-after': '1', 'x-ratelimit-reset-tokens': '644ms' },
    category: 'rate_limited',
    message: OPENAI_TPM,
    providerCode: 'rate_limit_exceeded',
    retryAfterMs: 644,
  },
  {
    name: 'openai 429 insufficient_quota, no Retry-After',
    status: 429,
    body: openai(OPENAI_QUOTA, 'insufficient_quota', 'insufficient_quota'),
    category: 'rate_limited',
    message: OPENAI_QUOTA,
    providerCode: 'insufficient_quota',
  },
  {
    name: 'openai 400 context_length_exceeded (param passes through)',
    status: 400,
    body: openai(OPENAI_CONTEXT, 'invalid_request_error', 'context_length_exceeded', 'messages'),
    category: 'context_length',
    message: OPENAI_CONTEXT,
    providerCode: 'context_length_exceeded',
    param: 'messages',
  },
  {
    name: 'openai 400 content_policy_violation',
    status: 400,
    body: openai(OPENAI_SAFETY, 'invalid_request_error', 'content_policy_violation'),
    category: 'content_policy',
    message: OPENAI_SAFETY,
    providerCode: 'content_policy_violation',
  },
  {
    name: 'openai 400 safety rejection with a null code (older form)',
    status: 400,
    body: openai(OPENAI_SAFETY, 'invalid_request_error', null),
    category: 'content_policy',
    message: OPENAI_SAFETY,
    providerCode: 'invalid_request_error',
  },
  {
    name: 'openai 400 invalid_prompt flagged by the usage policy',
    status: 400,
    body: openai(OPENAI_FLAGGED, 'invalid_request_error', 'invalid_prompt'),
    category: 'content_policy',
    message: OPENAI_FLAGGED,
    providerCode: 'invalid_prompt',
  },
  {
    name: 'openai 400 invalid_type names its param',
    status: 400,
    body: openai(
      "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead.",
      'invalid_request_error',
      'invalid_type',
      'messages[0].content',
    ),
    category: 'invalid_request',
    message: "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead.",
    providerCode: 'invalid_type',
    param: 'messages[0].content',
  },
  {
    name: 'openai 404 model_not_found',
    status: 404,
    body: openai('The model `gpt-9` does not exist or you do not have access to it.', 'invalid_request_error', 'model_not_found'),
    category: 'not_found',
    message: 'The model `gpt-9` does not exist or you do not have access to it.',
    providerCode: 'model_not_found',
  },
  {
    name: 'openai 401 invalid_api_key',
    status: 401,
    body: openai(OPENAI_BAD_KEY, 'invalid_request_error', 'invalid_api_key'),
    category: 'auth',
    message: OPENAI_BAD_KEY,
    providerCode: 'invalid_api_key',
  },
  {
    name: 'openai 500 server_error',
    status: 500,
    body: openai(OPENAI_500, 'server_error', null),
    category: 'server',
    message: OPENAI_500,
    providerCode: 'server_error',
  },
  {
    name: 'openai 503 "model is currently overloaded"',
    status: 503,
    body: openai(OPENAI_503, 'server_error', null),
    category: 'overloaded',
    message: OPENAI_503,
    providerCode: 'server_error',
  },
  {
    name: 'openai 503 server_is_overloaded with a Retry-After',
    status: 503,
    body: openai('Our servers are currently overloaded. Please try again later.', 'service_unavailable_error', 'server_is_overloaded'),
    headers: { 'retry-after': '2' },
    category: 'overloaded',
    message: 'Our servers are currently overloaded. Please try again later.',
    providerCode: 'server_is_overloaded',
    retryAfterMs: 2000,
  },
  // Anthropic
  {
    name: 'anthropic 529 overloaded_error',
    status: 529,
    body: anthropic('overloaded_error', 'Overloaded'),
    category: 'overloaded',
    message: 'Overloaded',
    providerCode: 'overloaded_error',
  },
  {
    name: 'anthropic 429 rate_limit_error with retry-after seconds',
    status: 429,
    body: anthropic('rate_limit_error', ANTHROPIC_429),
    headers: { 'retry-after': '20', 'anthropic-ratelimit-input-tokens-remaining': '0' },
    category: 'rate_limited',
    message: ANTHROPIC_429,
    providerCode: 'rate_limit_error',
    retryAfterMs: 20_000,
  },
  {
    name: 'anthropic 400 "prompt is too long"',
    status: 400,
    body: anthropic('invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum'),
    category: 'context_length',
    message: 'prompt is too long: 208310 tokens > 200000 maximum',
    providerCode: 'invalid_request_error',
  },
  {
    name: 'anthropic 400 input + max_tokens over the context limit',
    status: 400,
    body: anthropic(
      'invalid_request_error',
      'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again',
    ),
    category: 'context_length',
    message: 'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again',
    providerCode: 'invalid_request_error',
  },
  {
    name: 'anthropic 400 malformed request',
    status: 400,
    body: anthropic('invalid_request_error', 'messages.1.content.0.tool_use.input: Input should be a valid dictionary'),
    category: 'invalid_request',
    message: 'messages.1.content.0.tool_use.input: Input should be a valid dictionary',
    providerCode: 'invalid_request_error',
  },
  {
    name: 'anthropic 401 authentication_error',
    status: 401,
    body: anthropic('authentication_error', 'invalid x-api-key'),
    category: 'auth',
    message: 'invalid x-api-key',
    providerCode: 'authentication_error',
  },
  {
    name: 'anthropic 403 permission_error',
    status: 403,
    body: anthropic('permission_error', 'Your API key does not have permission to use the specified resource.'),
    category: 'auth',
    message: 'Your API key does not have permission to use the specified resource.',
    providerCode: 'permission_error',
  },
  {
    name: 'anthropic 404 not_found_error',
    status: 404,
    body: anthropic('not_found_error', 'model: claude-nonexistent-1'),
    category: 'not_found',
    message: 'model: claude-nonexistent-1',
    providerCode: 'not_found_error',
  },
  {
    name: 'anthropic 500 api_error',
    status: 500,
    body: anthropic('api_error', 'Internal server error'),
    category: 'server',
    message: 'Internal server error',
    providerCode: 'api_error',
  },
  {
    name: 'anthropic 413 request_too_large ("exceeds the maximum" is not a context error)',
    status: 413,
    body: anthropic('request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
    category: 'invalid_request',
    message: 'Request exceeds the maximum allowed number of bytes.',
    providerCode: 'request_too_large',
  },
  {
    name: 'anthropic 400 credit balance too low is the deployment\'s problem',
    status: 400,
    body: anthropic(
      'invalid_request_error',
      'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
    ),
    category: 'auth',
    message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
    providerCode: 'invalid_request_error',
  },
  {
    name: 'anthropic 402 billing_error',
    status: 402,
    body: anthropic('billing_error', 'Payment required'),
    category: 'auth',
    message: 'Payment required',
    providerCode: 'billing_error',
  },
  // Gemini (google.rpc status first in providerCode; RetryInfo is the gemini adapter's job)
  {
    name: 'gemini 429 RESOURCE_EXHAUSTED',
    status: 429,
    body: { error: { ...gemini(429, 'RESOURCE_EXHAUSTED', GEMINI_429).error, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '53s' }] } },
    category: 'rate_limited',
    message: GEMINI_429,
    providerCode: 'RESOURCE_EXHAUSTED',
  },
  {
    name: 'gemini 429 wrapped in an array (streaming form)',
    status: 429,
    body: [gemini(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).')],
    category: 'rate_limited',
    message: 'Resource has been exhausted (e.g. check quota).',
    providerCode: 'RESOURCE_EXHAUSTED',
  },
  {
    name: 'gemini 503 UNAVAILABLE "The model is overloaded"',
    status: 503,
    body: gemini(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'),
    category: 'overloaded',
    message: 'The model is overloaded. Please try again later.',
    providerCode: 'UNAVAILABLE',
  },
  {
    name: 'gemini 503 UNAVAILABLE without "overloaded"',
    status: 503,
    body: gemini(503, 'UNAVAILABLE', 'The service is currently unavailable.'),
    category: 'server',
    message: 'The service is currently unavailable.',
    providerCode: 'UNAVAILABLE',
  },
  {
    name: 'gemini 400 INVALID_ARGUMENT',
    status: 400,
    body: gemini(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified\n'),
    category: 'invalid_request',
    message: '* GenerateContentRequest.contents: contents is not specified\n',
    providerCode: 'INVALID_ARGUMENT',
  },
  {
    name: 'gemini 400 INVALID_ARGUMENT input token count over the maximum',
    status: 400,
    body: gemini(400, 'INVALID_ARGUMENT', 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).'),
    category: 'context_length',
    message: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
    providerCode: 'INVALID_ARGUMENT',
  },
  {
    name: 'gemini 403 PERMISSION_DENIED',
    status: 403,
    body: gemini(403, 'PERMISSION_DENIED', GEMINI_403),
    category: 'auth',
    message: GEMINI_403,
    providerCode: 'PERMISSION_DENIED',
  },
  {
    name: 'gemini 400 API key not valid (Gemini does not answer 401)',
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
      },
    },
    category: 'auth',
    message: 'API key not valid. Please pass a valid API key.',
    providerCode: 'INVALID_ARGUMENT',
  },
  {
    name: 'gemini 400 bad safety_settings value is not a refusal',
    status: 400,
    body: gemini(400, 'INVALID_ARGUMENT', "Invalid value at 'safety_settings[0].category' (type.googleapis.com/google.ai.generativelanguage.v1beta.HarmCategory), \"HARM_CATEGORY_UNKNOWN\""),
    category: 'invalid_request',
    message: "Invalid value at 'safety_settings[0].category' (type.googleapis.com/google.ai.generativelanguage.v1beta.HarmCategory), \"HARM_CATEGORY_UNKNOWN\"",
    providerCode: 'INVALID_ARGUMENT',
  },
  {
    name: 'gemini 400 FAILED_PRECONDITION region',
    status: 400,
    body: gemini(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.'),
    category: 'auth',
    message: 'User location is not supported for the API use.',
    providerCode: 'FAILED_PRECONDITION',
  },
  {
    name: 'gemini 504 DEADLINE_EXCEEDED',
    status: 504,
    body: gemini(504, 'DEADLINE_EXCEEDED', 'The request timed out. Please try again.'),
    category: 'timeout',
    message: 'The request timed out. Please try again.',
    providerCode: 'DEADLINE_EXCEEDED',
  },
  // Cohere ({id, message} bodies)
  {
    name: 'cohere 429 trial key limit',
    status: 429,
    body: { id: '0b3f6c1e-7a2d-4e9b-8c5f-1d2e3f4a5b6c', message: COHERE_429 },
    category: 'rate_limited',
    message: COHERE_429,
  },
  {
    name: 'cohere 400 too many tokens',
    status: 400,
    body: { id: '7c1d9e2a-3b4f-4e5d-8a6b-9c0d1e2f3a4b', message: COHERE_TOO_LONG },
    category: 'context_length',
    message: COHERE_TOO_LONG,
  },
  {
    name: 'cohere 400 invalid request',
    status: 400,
    body: { id: '2f5a0b6e-8d3b-4a1e-9c3f-0e7b1f6d4c21', message: 'invalid request: message must be at least 1 token long or tool results must be specified.' },
    category: 'invalid_request',
    message: 'invalid request: message must be at least 1 token long or tool results must be specified.',
  },
  {
    name: 'cohere 401 invalid api token',
    status: 401,
    body: { id: '9e8d7c6b-5a4f-4e3d-2c1b-0a9f8e7d6c5b', message: 'invalid api token' },
    category: 'auth',
    message: 'invalid api token',
  },
  {
    name: 'cohere 500',
    status: 500,
    body: { id: '1a2b3c4d-0000-4000-8000-000000000000', message: 'internal server error, this has been reported to our developers' },
    category: 'server',
    message: 'internal server error, this has been reported to our developers',
  },
  // Ollama ({"error":"..."} natively, OpenAI shape on /v1)
  {
    name: 'ollama 404 model not found (native)',
    status: 404,
    body: { error: 'model "llama3" not found, try pulling it first' },
    category: 'not_found',
    message: 'model "llama3" not found, try pulling it first',
  },
  {
    name: 'ollama 404 model not found (OpenAI-compatible /v1)',
    status: 404,
    body: openai('model "llama3" not found, try pulling it first', 'api_error', null),
    category: 'not_found',
    message: 'model "llama3" not found, try pulling it first',
    providerCode: 'api_error',
  },
  {
    name: 'ollama 500 runner crash',
    status: 500,
    body: { error: 'llama runner process has terminated: signal: killed' },
    category: 'server',
    message: 'llama runner process has terminated: signal: killed',
  },
  {
    // Generic table says server; the ollama adapter (fixOllamaError) turns its 503 into overloaded.
    name: 'ollama 503 queue full',
    status: 503,
    body: { error: 'server busy, please try again.  maximum pending requests exceeded' },
    category: 'server',
    message: 'server busy, please try again.  maximum pending requests exceeded',
  },
  // Azure OpenAI
  {
    name: 'azure 400 content_filter with innererror (numeric status is not the code)',
    status: 400,
    body: {
      error: {
        message: AZURE_FILTER,
        type: null,
        param: 'prompt',
        code: 'content_filter',
        status: 400,
        innererror: {
          code: 'ResponsibleAIPolicyViolation',
          content_filter_result: {
            hate: { filtered: false, severity: 'safe' },
            self_harm: { filtered: false, severity: 'safe' },
            sexual: { filtered: false, severity: 'safe' },
            violence: { filtered: true, severity: 'medium' },
          },
        },
      },
    },
    category: 'content_policy',
    message: AZURE_FILTER,
    providerCode: 'content_filter',
    param: 'prompt',
  },
  {
    name: 'azure 429 with retry-after-ms and a string code',
    status: 429,
    body: { error: { code: '429', message: AZURE_429 } },
    headers: { 'retry-after-ms': '6000', 'retry-after': '6' },
    category: 'rate_limited',
    message: AZURE_429,
    providerCode: '429',
    retryAfterMs: 6000,
  },
  // Bodies that are not JSON, and statuses judged by range
  {
    name: '502 HTML from a proxy',
    status: 502,
    body: '<html><head><title>502 Bad Gateway</title></head><body>Bad Gateway</body></html>',
    category: 'server',
    message: '<html><head><title>502 Bad Gateway</title></head><body>Bad Gateway</body></html>',
  },
  { name: '503 with an empty body gets a made-up message', status: 503, body: '', category: 'server', message: 'upstream answered 503' },
  { name: '504 gateway timeout is a timeout', status: 504, body: '', category: 'timeout', message: 'upstream answered 504' },
  { name: '520 (Cloudflare) is a 5xx like any other', status: 520, body: 'error code: 520', category: 'server', message: 'error code: 520' },
  { name: '599 is still server', status: 599, body: '', category: 'server', message: 'upstream answered 599' },
  { name: '529 without a body is overloaded', status: 529, body: '', category: 'overloaded', message: 'upstream answered 529' },
  { name: '408 is a timeout', status: 408, body: 'Request Timeout', category: 'timeout', message: 'Request Timeout' },
  { name: '413 plain text', status: 413, body: 'Request Entity Too Large', category: 'invalid_request', message: 'Request Entity Too Large' },
  { name: '422 unprocessable', status: 422, body: { detail: 'bad field' }, category: 'invalid_request', message: '{"detail":"bad field"}' },
  {
    name: '429 that only says overloaded',
    status: 429,
    body: { error: { message: 'Overloaded', type: 'overloaded_error' } },
    category: 'overloaded',
    message: 'Overloaded',
    providerCode: 'overloaded_error',
  },
];

describe('errorFromResponse: real provider bodies → category, message, retryAfterMs', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', (_name, r) => {
    const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
    const headers = r.headers ?? {};
    const err = errorFromResponse(r.status, text, headers, NOW);
    expect(err).toBeInstanceOf(UpstreamError);
    expect({
      category: err.category,
      status: err.status,
      message: err.message,
      providerCode: err.providerCode,
      retryAfterMs: err.retryAfterMs,
      param: err.param,
    }).toEqual({
      category: r.category,
      status: r.status,
      message: r.message,
      providerCode: r.providerCode,
      retryAfterMs: r.retryAfterMs,
      param: r.param ?? null,
    });
    expect(err.headers).toBe(headers);
    expect(err.label).toBe(`${r.status} ${r.category}`);
  });
});

describe('categorize by status range', () => {
  it.each([
    [500, 'server'],
    [501, 'server'],
    [502, 'server'],
    [503, 'server'],
    [504, 'timeout'],
    [529, 'overloaded'],
    [429, 'rate_limited'],
    [401, 'auth'],
    [403, 'auth'],
    [400, 'invalid_request'],
    [404, 'not_found'],
    [409, 'invalid_request'],
    [413, 'invalid_request'],
    [422, 'invalid_request'],
    [451, 'auth'],
    [498, 'server'],
    [499, 'server'],
    // The route's method, framing or headers (the gateway's own), or a vendor's code: not the client's request.
    [406, 'server'],
    [415, 'server'],
    [418, 'server'],
    [420, 'server'],
    [431, 'server'],
    // The deployment's URL or model is not there.
    [405, 'not_found'],
    [410, 'not_found'],
    [408, 'timeout'],
  ] as const)('%i with a bland body → %s', (status, category) => {
    expect(categorize(status, 'something went wrong')).toBe(category);
  });

  it('403 for a content block (no credential words) is content_policy, but a key problem stays auth', () => {
    expect(categorize(403, 'Request blocked by the content filter')).toBe('content_policy');
    expect(categorize(403, 'API key blocked by the content filter')).toBe('auth');
  });

  it('a model retired upstream and answered with 400 is not_found (out of rotation, the next candidate); a parameter that is no longer supported is not', () => {
    // Groq
    expect(categorize(400, 'model_decommissioned The model `mixtral-8x7b-32768` has been decommissioned and is no longer supported. Please refer to https://console.groq.com/docs/deprecations')).toBe('not_found');
    // Gemini
    expect(categorize(400, 'This model models/gemini-2.5-flash is no longer available to new users. Please update your code to use models/gemini-3.6-flash.')).toBe('not_found');
    expect(categorize(400, "The 'functions' parameter is no longer supported. Use 'tools' instead.")).toBe('invalid_request');
    expect(categorize(400, 'This feature has been deprecated. The model answered anyway.')).toBe('invalid_request');
  });

  it('a model asked for an operation it does not do refuses this request, not the deployment: fail over, never auth', () => {
    // OpenAI, embeddings on a chat model: a 403 that is no credential problem.
    const openai = errorFromResponse(403, JSON.stringify({ error: { message: 'You are not allowed to generate embeddings from this model', type: 'invalid_request_error', param: null, code: null } }), {}, NOW);
    // Azure, embeddings on a chat deployment (and chat on an embeddings one).
    const azure = errorFromResponse(
      400,
      JSON.stringify({ error: { code: 'OperationNotSupported', message: 'The embeddings operation does not work with the specified model, gpt-35-turbo. Please choose different model and try again. You can learn more about which models can be used with each operation here: https://go.microsoft.com/fwlink/?linkid=2197993.' } }),
      {},
      NOW,
    );
    // Gemini, embeddings on a chat model: a 404 that names the operation.
    const gemini = errorFromResponse(
      404,
      JSON.stringify({ error: { code: 404, message: 'models/gemini-2.5-flash is not found for API version v1beta, or is not supported for batchEmbedContents. Call ListModels to see the list of available models and their supported methods.', status: 'NOT_FOUND' } }),
      {},
      NOW,
    );
    // Ollama: a 500 from its runner (and so from its OpenAI-compatible route), a 400 where it checks first.
    const ollama = errorFromResponse(400, JSON.stringify({ error: 'this model does not support embeddings' }), {}, NOW);
    const ollamaCompat = errorFromResponse(500, JSON.stringify({ error: { message: 'this model does not support embeddings', type: 'api_error', param: null, code: null } }), {}, NOW);
    for (const e of [openai, azure, gemini, ollama, ollamaCompat]) {
      expect(e.category).toBe('invalid_request');
      expect(refusedByThisModel(e)).toBe(true);
    }
    // Gemini 3 behind its OpenAI-compatible endpoint, given tool calls from another model's turn.
    const signature = errorFromResponse(
      400,
      JSON.stringify([{ error: { code: 400, message: 'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:lookup` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.', status: 'INVALID_ARGUMENT' } }]),
      {},
      NOW,
    );
    expect(signature.category).toBe('invalid_request');
    expect(refusedByThisModel(signature)).toBe(true);
    // Gemini's chat twin is how it names a model that is gone: still not_found.
    expect(categorize(404, 'models/gemini-pro is not found for API version v1beta, or is not supported for generateContent.')).toBe('not_found');
    // No access to a model at all is still the deployment's problem.
    expect(categorize(403, 'You are not allowed to sample from this model')).toBe('auth');
  });

  it('a 4xx quota message outside 429 is rate_limited', () => {
    expect(categorize(400, 'RESOURCE_EXHAUSTED quota exceeded for the project')).toBe('rate_limited');
  });
});

describe('parseErrorBody', () => {
  it('picks message/code/param out of each provider shape', () => {
    expect(parseErrorBody('{"error":{"message":"m","type":"t","code":"c","param":"p"}}')).toEqual({ message: 'm', code: 'c', param: 'p' });
    expect(parseErrorBody('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toEqual({
      message: 'Overloaded',
      code: 'overloaded_error',
      param: null,
    });
    expect(parseErrorBody('{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}').code).toBe('RESOURCE_EXHAUSTED');
    expect(parseErrorBody('{"message":"cohere says","code":"x"}')).toEqual({ message: 'cohere says', code: 'x' });
    expect(parseErrorBody('{"error":"ollama says"}')).toEqual({ message: 'ollama says' });
  });

  it('falls back to the (bounded) raw text for anything else', () => {
    expect(parseErrorBody('not json').message).toBe('not json');
    expect(parseErrorBody('42').message).toBe('42');
    expect(parseErrorBody('null').message).toBe('null');
    expect(parseErrorBody('{"unexpected":true}').message).toBe('{"unexpected":true}');
    expect(parseErrorBody('x'.repeat(2000)).message).toHaveLength(500);
  });
});

describe('parseRetryAfter', () => {
  const cases: [string, UpstreamHeaders | undefined, number | undefined][] = [
    ['seconds', { 'retry-after': '20' }, 20_000],
    ['zero seconds', { 'retry-after': '0' }, 0],
    ['fractional seconds', { 'retry-after': '1.5' }, 1500],
    ['HTTP date in the future (against the injected now)', { 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, 30_000],
    ['HTTP date in the past → 0, never negative', { 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }, 0],
    ['retry-after-ms', { 'retry-after-ms': '644' }, 644],
    ['retry-after-ms wins over retry-after', { 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    ['unparsable retry-after-ms falls back to retry-after', { 'retry-after-ms': 'soon', 'retry-after': '3' }, 3000],
    ['negative retry-after-ms falls back to retry-after', { 'retry-after-ms': '-5', 'retry-after': '3' }, 3000],
    ['first of a repeated header', { 'retry-after': ['7', '9'] }, 7000],
    ['garbage word', { 'retry-after': 'soon' }, undefined],
    ['garbage with a unit', { 'retry-after': '5 seconds' }, undefined],
    ['negative seconds', { 'retry-after': '-5' }, undefined],
    ['empty', { 'retry-after': '' }, undefined],
    ['absent', {}, undefined],
    ['no headers at all', undefined, undefined],
  ];
  it.each(cases)('%s', (_name, headers, expected) => {
    expect(parseRetryAfter(headers, NOW)).toBe(expected);
  });

  // Regression (was a bug): V8's Date.parse is lenient ("1 2" is Jan 2 2001, "abc 12" is Dec 2001), so
  // garbage that is neither delay-seconds nor an HTTP-date becomes a past date → 0 ms,
  // which policy.ts reads as "short Retry-After: retry now, cool down 0".
  it('garbage that V8 happens to parse as a date is still garbage', () => {
    expect(parseRetryAfter({ 'retry-after': '1 2' }, NOW)).toBeUndefined();
  });
  // Regression (was a bug): Number('') is 0, so an empty retry-after-ms wins over a real retry-after.
  it('an empty retry-after-ms does not hide retry-after', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '', 'retry-after': '3' }, NOW)).toBe(3000);
  });
});

describe('errorFromTransport: undici and node:net failures', () => {
  const sys = (code: string, message: string, syscall = 'connect') =>
    Object.assign(new Error(message), { code, errno: -1, syscall });

  const cases: [string, unknown, ErrorCategory, string | undefined][] = [
    ['ECONNRESET', sys('ECONNRESET', 'read ECONNRESET', 'read'), 'network', 'ECONNRESET'],
    ['ECONNREFUSED', sys('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'), 'network', 'ECONNREFUSED'],
    ['ENOTFOUND (DNS)', sys('ENOTFOUND', 'getaddrinfo ENOTFOUND api.example.invalid', 'getaddrinfo'), 'network', 'ENOTFOUND'],
    ['EAI_AGAIN (DNS)', sys('EAI_AGAIN', 'getaddrinfo EAI_AGAIN api.example.com', 'getaddrinfo'), 'network', 'EAI_AGAIN'],
    ['TLS: expired certificate', Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' }), 'network', 'CERT_HAS_EXPIRED'],
    ['TLS: wrong host', Object.assign(new Error("Hostname/IP does not match certificate's altnames"), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), 'network', 'ERR_TLS_CERT_ALTNAME_INVALID'],
    ['ETIMEDOUT (socket connect) is network', sys('ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.1:443'), 'network', 'ETIMEDOUT'],
    ['UND_ERR_SOCKET (other side closed)', new undiciErrors.SocketError('other side closed'), 'network', 'UND_ERR_SOCKET'],
    ['UND_ERR_CONNECT_TIMEOUT is network, not timeout', new undiciErrors.ConnectTimeoutError(), 'network', 'UND_ERR_CONNECT_TIMEOUT'],
    ['UND_ERR_HEADERS_TIMEOUT', new undiciErrors.HeadersTimeoutError(), 'timeout', 'UND_ERR_HEADERS_TIMEOUT'],
    ['UND_ERR_BODY_TIMEOUT', new undiciErrors.BodyTimeoutError(), 'timeout', 'UND_ERR_BODY_TIMEOUT'],
    ['fetch-style TypeError with the code on its cause', new TypeError('fetch failed', { cause: sys('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9') }), 'network', 'ECONNREFUSED'],
    ['a bare Error without a code', new Error('socket hang up'), 'network', undefined],
    ['a thrown string', 'boom', 'network', undefined],
  ];
  it.each(cases)('%s', (_name, thrown, category, code) => {
    const err = errorFromTransport(thrown);
    expect(err.category).toBe(category);
    expect(err.providerCode).toBe(code);
    expect(err.status).toBeUndefined();
    expect(err.cause).toBe(thrown);
    if (code) expect(err.message.startsWith(`${code}: `)).toBe(true);
  });

  it('an UpstreamError passes through as the same object', () => {
    const e = new UpstreamError({ category: 'timeout', message: 'ttft' });
    expect(errorFromTransport(e)).toBe(e);
  });
});

describe('errorFromTransport on real loopback failures', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
  });

  async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
    server = createServer(handler);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  async function thrownBy(url: string): Promise<unknown> {
    try {
      const res = await request(url, { method: 'POST', body: '{}' });
      await res.body.text();
    } catch (err) {
      return err;
    }
    throw new Error('expected the request to fail');
  }

  it('a refused connection is network/ECONNREFUSED', async () => {
    const port = await listen(() => {});
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    const err = errorFromTransport(await thrownBy(`http://127.0.0.1:${port}/v1/chat/completions`));
    expect(err.category).toBe('network');
    expect(err.providerCode).toBe('ECONNREFUSED');
  });

  it('a socket destroyed before the answer is network', async () => {
    const port = await listen((req) => req.socket.destroy());
    const err = errorFromTransport(await thrownBy(`http://127.0.0.1:${port}/v1/chat/completions`));
    expect(err.category).toBe('network');
    expect(['UND_ERR_SOCKET', 'ECONNRESET']).toContain(err.providerCode);
  });

  it('a body cut short after the headers is network', async () => {
    const port = await listen((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"partial":');
      setImmediate(() => res.socket?.destroy());
    });
    const err = errorFromTransport(await thrownBy(`http://127.0.0.1:${port}/`));
    expect(err.category).toBe('network');
  });
});

describe('a request larger than the deployment’s whole tpm', () => {
  const openai = 'Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 36278. The input or output tokens must be reduced in order to run successfully.';
  const groq = 'Request too large for model `llama-3.1-8b-instant` in organization `org_1` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 7964, please reduce your message size and try again.';
  const rateLimit = 'Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 28000, Requested 3000. Please try again in 2s.';

  it('is read from OpenAI’s and Groq’s messages, and from a limit below what was requested', () => {
    expect(exceedsTokenLimit(openai)).toBe(true);
    expect(exceedsTokenLimit(groq)).toBe(true);
    expect(exceedsTokenLimit('Limit 1000, Requested 1001')).toBe(true);
    expect(exceedsTokenLimit(rateLimit)).toBe(false);
    expect(exceedsTokenLimit('Limit 1000, Requested 999')).toBe(false);
  });

  it('is a refusal by this deployment alone (429 or 413), not a rate limit; an ordinary TPM 429 still is one', () => {
    const e = errorFromResponse(429, JSON.stringify({ error: { message: openai, type: 'tokens', code: 'rate_limit_exceeded' } }), {}, 0);
    expect(e.category).toBe('invalid_request');
    expect(refusedByThisModel(e)).toBe(true);
    expect(categorize(413, groq)).toBe('invalid_request');
    expect(refusedByThisModel(errorFromResponse(413, JSON.stringify({ error: { message: groq } }), {}, 0))).toBe(true);
    expect(categorize(429, `rate_limit_exceeded ${rateLimit}`)).toBe('rate_limited');
  });
});
