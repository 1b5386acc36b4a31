import { describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../config/parse.js';
import type { Capability, ProviderConfig } from '../config/types.js';
import type { ChatRequest } from '../protocol/openai.js';
import { makeDeployment, type Deployment } from './deployment.js';
import { chatRequirements, embeddingsRequirements, supports, unmetRequirement } from './requirements.js';
import { DEFAULT_COMPLETION_TOKENS } from '../protocol/text-weight.js';
import { rememberRawBody } from '../protocol/raw-body.js';

const config = parseConfig(
  {
    providers: [
      { id: 'oa', type: 'openai', apiKey: '${OA_KEY}' },
      { id: 'an', type: 'anthropic', apiKey: '${AN_KEY}' },
      { id: 'ol', type: 'ollama' },
    ],
  },
  { OA_KEY: 'sk-oa', AN_KEY: 'sk-an' },
);
const provider = (id: string): ProviderConfig => config.providers.find((p) => p.id === id)!;
const dep = (providerId: string, capabilities?: Capability[], contextWindow?: number): Deployment =>
  makeDeployment(provider(providerId), { model: 'm', capabilities, contextWindow }, config.resilience);

const chat = (extra: Partial<ChatRequest>): ChatRequest => ({ model: 'fast', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('chatRequirements', () => {
  it('a plain request needs nothing special', () => {
    expect(chatRequirements(chat({})).needs).toEqual([]);
  });

  it.each<[string, Partial<ChatRequest>, Capability[]]>([
    ['tools', { tools: [{ type: 'function', function: { name: 'f' } }] }, ['tools']],
    ['an empty tools array needs no tools', { tools: [] }, []],
    ['legacy functions', { functions: [{ name: 'f' }], function_call: 'auto' }, ['tools']],
    ['an empty functions array needs no tools', { functions: [] }, []],
    ['an image part', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] }] }, ['vision']],
    ['json_object', { response_format: { type: 'json_object' } }, ['json']],
    ['json_schema', { response_format: { type: 'json_schema', json_schema: { name: 's' } } }, ['json']],
    ['response_format text needs nothing', { response_format: { type: 'text' } }, []],
    ['stream', { stream: true }, ['streaming']],
    ['stream: false needs nothing', { stream: false }, []],
    [
      'all of them, in a stable order',
      {
        stream: true,
        tools: [{ type: 'function', function: { name: 'f' } }],
        response_format: { type: 'json_object' },
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'u' } }] }],
      },
      ['tools', 'vision', 'json', 'streaming'],
    ],
  ])('%s', (_name, extra, needs) => {
    expect(chatRequirements(chat(extra)).needs).toEqual(needs);
  });

  it('estimates tokens as chars/4 + 85 per image + 4 per message + the completion budget; paces images at 800', () => {
    const req = chat({
      messages: [
        { role: 'system', content: 'x'.repeat(40) }, // 40
        { role: 'user', content: [{ type: 'text', text: 'y'.repeat(20) }, { type: 'image_url', image_url: { url: 'u' } }] }, // 20 + image
      ],
      max_tokens: 100,
    });
    const r = chatRequirements(req);
    expect(r.estimatedTokens).toBe(Math.ceil(60 / 4) + 85 + 2 * 4 + 100);
    expect(r.promptTokens).toBe(Math.ceil(60 / 4) + 800 + 2 * 4);
  });

  it('ten images and a short question fit an 8k vision model (llava counts 576 an image): the window filter keeps it', () => {
    const image = { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,AAAA' } };
    const r = chatRequirements(chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What changed between these?' }, ...Array.from({ length: 10 }, () => image)] }], max_tokens: 1024 }));
    expect(r.estimatedTokens).toBeLessThan(8192);
    expect(r.estimatedTokens).toBeGreaterThan(10 * 50 + 1024);
  });

  it('prefers max_completion_tokens over max_tokens, and counts tools and tool_calls as prompt', () => {
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } }];
    const toolCalls = [{ id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } }];
    const req = chat({
      messages: [
        { role: 'user', content: 'abcd' },
        { role: 'assistant', content: null, tool_calls: toolCalls },
      ],
      tools,
      max_tokens: 50,
      max_completion_tokens: 7,
    });
    const chars = 4 + JSON.stringify(toolCalls).length + JSON.stringify(tools).length;
    const r = chatRequirements(req);
    expect(r.estimatedTokens).toBe(Math.ceil(chars / 4) + 2 * 4 + 7);
  });

  it('sizes tools and tool calls as their JSON text would be, without building it (a per-request cost that grows with an agent\'s tools and history)', () => {
    const tools = Array.from({ length: 20 }, (_, i) => ({
      type: 'function' as const,
      function: {
        name: `tool_${i}`,
        description: 'Looks a thing up, carefully',
        strict: true,
        parameters: { type: 'object', properties: { q: { type: 'string', enum: ['a', 'b'] }, limit: { type: 'integer', minimum: 1, maximum: 50.5 } }, required: ['q'], extra: null, gone: undefined },
      },
    }));
    const toolCalls = [{ id: 'c1', type: 'function' as const, function: { name: 'tool_1', arguments: '{"q":"a"}' } }];
    const req = chat({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: toolCalls }], tools });
    const stringify = vi.spyOn(JSON, 'stringify');
    let r: ReturnType<typeof chatRequirements>;
    try {
      r = chatRequirements(req);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
    // The figure the text's length gives, but for the four backslashes escaping the arguments' quotes (the model reads them unescaped).
    expect(r!.estimatedTokens).toBe(Math.ceil((2 + JSON.stringify(toolCalls).length - 4 + JSON.stringify(tools).length) / 4) + 2 * 4);
  });

  it('counts legacy functions as prompt, as tools are', () => {
    const functions = [{ name: 'lookup', description: 'Look it up', parameters: { type: 'object' } }];
    expect(chatRequirements(chat({ functions })).promptTokens).toBe(Math.ceil((2 + JSON.stringify(functions).length) / 4) + 4);
  });

  it('paces a request by its prompt and its completion budget: 1024 when unset, times n', () => {
    const prompt = Math.ceil(40 / 4) + 4;
    expect(chatRequirements(chat({ messages: [{ role: 'user', content: 'x'.repeat(40) }] }))).toMatchObject({ promptTokens: prompt, estimatedTokens: prompt, paceTokens: prompt + DEFAULT_COMPLETION_TOKENS });
    expect(chatRequirements(chat({ messages: [{ role: 'user', content: 'x'.repeat(40) }], max_tokens: 10, n: 3 }))).toMatchObject({ estimatedTokens: prompt + 10, paceTokens: prompt + 30 });
  });

  it('weighs non-ASCII text at about a token a character or more, not a quarter of one', () => {
    const japanese = 'これは日本語の文章です。'.repeat(20); // 240 characters, 720 bytes
    const r = chatRequirements(chat({ messages: [{ role: 'user', content: japanese }] }));
    expect(r.promptTokens).toBeGreaterThanOrEqual(japanese.length);
    expect(r.promptTokens).toBe(Math.ceil(japanese.length / 4 + (720 - 240) * 0.75) + 4);
    // Not for the context-window filter: that figure must not skip a deployment the prompt fits.
    expect(r.estimatedTokens).toBe(Math.ceil(japanese.length / 4) + 4);
    // In text parts, tool calls and tool definitions too.
    const tools = [{ type: 'function' as const, function: { name: 'suche', description: 'Ищет документы по запросу', parameters: { type: 'object' } } }];
    const withTools = chatRequirements(chat({ messages: [{ role: 'user', content: [{ type: 'text', text: japanese }] }], tools }));
    expect(withTools.promptTokens).toBeGreaterThan(r.promptTokens + JSON.stringify(tools).length / 4);
  });

  it('weighs a body the server kept by what its bytes say: non-ASCII bytes are weighed, ASCII ones weigh their length', () => {
    const parse = (text: string) => {
      const req = JSON.parse(text) as ChatRequest;
      rememberRawBody(req, Buffer.from(text), text);
      return req;
    };
    const japanese = 'これは日本語の文章です。'.repeat(20);
    const kept = chatRequirements(parse(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: japanese }] })));
    expect(kept.promptTokens).toBe(chatRequirements(chat({ messages: [{ role: 'user', content: japanese }] })).promptTokens);
    const english = chatRequirements(parse(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(40) }] })));
    expect(english.promptTokens).toBe(Math.ceil(40 / 4) + 4);
  });

  it('embeddings need the embeddings capability only, and weigh their texts (token ids counted) for pacing; no context-window figure', () => {
    expect(embeddingsRequirements('x'.repeat(40))).toEqual({ needs: ['embeddings'], promptTokens: 10, estimatedTokens: 0, paceTokens: 10 });
    expect(embeddingsRequirements(['x'.repeat(40), '한국어 문장'.repeat(10)]).paceTokens).toBeGreaterThanOrEqual(10 + 60);
    expect(embeddingsRequirements([1, 2, 3]).paceTokens).toBe(3);
    expect(embeddingsRequirements([[1, 2], [3, 4, 5]]).paceTokens).toBe(5);
  });
});

describe('supports', () => {
  const ALL: Capability[] = ['tools', 'vision', 'json', 'prefill', 'streaming', 'embeddings'];

  it('a deployment that declares nothing is assumed capable, except prefill', () => {
    const d = dep('oa');
    expect(ALL.filter((c) => supports(d, c))).toEqual(['tools', 'vision', 'json', 'streaming', 'embeddings']);
  });

  it('an undeclared anthropic deployment is not assumed to embed', () => {
    expect(supports(dep('an'), 'embeddings')).toBe(false);
    expect(supports(dep('an'), 'tools')).toBe(true);
  });

  it('a deployment that declares capabilities is taken at its word (streaming is always assumed)', () => {
    const d = dep('ol', ['tools']);
    expect(ALL.filter((c) => supports(d, c))).toEqual(['tools', 'streaming']);
  });

  it('declaring only prefill or streaming (no features) keeps the provider\'s features assumed: opting in to stream resume must not take tools away', () => {
    for (const caps of [['prefill'], ['streaming'], ['prefill', 'streaming']] as Capability[][]) {
      expect(ALL.filter((c) => supports(dep('oa', caps), c))).toEqual(['tools', 'vision', 'json', ...(caps.includes('prefill') ? ['prefill'] : []), 'streaming', 'embeddings']);
    }
    expect(supports(dep('an', ['prefill']), 'embeddings')).toBe(false);
    expect(unmetRequirement(dep('an', ['prefill']), chatRequirements(chat({ tools: [{ type: 'function', function: { name: 'f' } }] })))).toBeNull();
  });

  it('prefill only when declared', () => {
    expect(supports(dep('an', ['prefill']), 'prefill')).toBe(true);
    expect(supports(dep('an', ['tools', 'vision', 'json']), 'prefill')).toBe(false);
  });
});

describe('unmetRequirement', () => {
  const r = (needs: Capability[], estimatedTokens = 10) => ({ needs, estimatedTokens, promptTokens: estimatedTokens, paceTokens: estimatedTokens });

  it('names the first missing capability', () => {
    expect(unmetRequirement(dep('ol', ['tools']), r(['tools', 'vision', 'json']))).toBe('lacks vision');
  });

  it('names a context window that is too small; an unknown window never filters', () => {
    expect(unmetRequirement(dep('ol', [], 8192), r([], 8193))).toBe('context window 8192 too small');
    expect(unmetRequirement(dep('ol', [], 8192), r([], 8192))).toBeNull();
    expect(unmetRequirement(dep('ol'), r([], 10_000_000))).toBeNull();
  });

  it('null when the deployment can serve', () => {
    expect(unmetRequirement(dep('oa'), r(['tools', 'vision', 'json', 'streaming']))).toBeNull();
  });
});
