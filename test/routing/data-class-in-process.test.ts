/**
 * The in-process API (createGateway().chat/embeddings) takes the caller's key and
 * headers as given, without the HTTP server's parsing in between: what a library
 * caller passes for the data class must never let a request reach an external
 * provider that the same request over HTTP could not. Real loopback upstreams
 * count what arrives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import type { KeyConfig } from '../../src/config/types.js';
import { createGateway, type Gateway } from '../../src/core/gateway.js';
import { GatewayError } from '../../src/core/errors.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

const answer = (model: string) =>
  JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });

let ext: RawUpstream;
let loc: RawUpstream;
let gateway: Gateway;
beforeAll(async () => {
  const serve = (model: string) =>
    startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer(model));
    });
  ext = await serve('ext-model');
  loc = await serve('loc-model');
  gateway = createGateway(
    parseConfig({
      providers: [
        { id: 'ext', type: 'openai', baseUrl: ext.url },
        { id: 'loc', type: 'openai', baseUrl: loc.url, locality: 'local' },
      ],
      // The external deployment first: only the data class keeps a request off it.
      models: [{ name: 'chat', deployments: [{ provider: 'ext', model: 'e' }], fallbacks: ['private'] }, { name: 'private', deployments: [{ provider: 'loc', model: 'l' }] }],
    }),
  );
});
afterAll(async () => {
  await gateway.close();
  await ext.close();
  await loc.close();
});

const request = { model: 'chat', messages: [{ role: 'user' as const, content: 'patient record' }] };

/** Where the request went: the deployment that served it, or the refusal's status and code. */
async function routed(opts: Parameters<Gateway['chat']>[1]): Promise<string> {
  try {
    const r = await gateway.chat(request, opts);
    return r.meta.deployment;
  } catch (err) {
    if (err instanceof GatewayError) return `${err.status} ${err.code}`;
    throw err;
  }
}

describe("a hand-built key's data class", () => {
  const key = (dataClass: string): KeyConfig => ({ id: 'lib', key: 'k', dataClass: dataClass as KeyConfig['dataClass'], allowExternal: true });

  it('keeps the request local when it is not one of the four classes (a typo, another case): unknown is not public', async () => {
    const before = ext.hits.length;
    for (const dc of ['Restricted', 'CONFIDENTIAL', 'secret', 'toString']) expect(await routed({ key: key(dc) })).toBe('loc/l');
    expect(ext.hits.length).toBe(before);
  });

  it('a known class still routes as before', async () => {
    expect(await routed({ key: key('public') })).toBe('ext/e');
    expect(await routed({ key: key('restricted') })).toBe('loc/l');
  });
});

describe('x-switchyard-data-class passed in-process', () => {
  it('is read whatever the case of its name, as HTTP reads it: a raise is never silently dropped', async () => {
    const before = ext.hits.length;
    for (const name of ['X-Switchyard-Data-Class', 'X-SWITCHYARD-DATA-CLASS']) {
      expect(await routed({ headers: { [name]: 'restricted' } })).toBe('loc/l');
      expect(await routed({ headers: { [name]: 'bogus' } })).toBe('400 invalid_request');
    }
    expect(ext.hits.length).toBe(before);
  });

  it('given as a list, it is the list node would make of repeated lines: one class is that class, more are a 400, never the first alone', async () => {
    const before = ext.hits.length;
    expect(await routed({ headers: { 'x-switchyard-data-class': ['public', 'restricted'] } })).toBe('400 invalid_request');
    expect(await routed({ headers: { 'x-switchyard-data-class': ['restricted'] } })).toBe('loc/l');
    expect(ext.hits.length).toBe(before);
    // What the wire gives for the same two lines (node joins them with ", "): the same refusal.
    expect(await routed({ headers: { 'x-switchyard-data-class': 'public, restricted' } })).toBe('400 invalid_request');
  });

  it('without it, or with a lower class, the floor decides', async () => {
    expect(await routed({})).toBe('ext/e');
    expect(await routed({ headers: { 'x-switchyard-data-class': 'public' } })).toBe('ext/e');
  });
});
