/**
 * A Cohere stream whose generation failed ends with `message-end` and `finish_reason: "ERROR"`
 * (its `delta.error` saying why). Over real loopback sockets: the official `openai` client →
 * the gateway → two loopback Cohere servers. That end is a failure, not an answer: before the
 * first token the request fails over to the next candidate, after it the stream ends with
 * `stream_broken`, never as a clean `finish_reason: "stop"` over a cut-short text.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCohereServer, type CohereServer } from '../servers/cohere-server.js';
import { startNativeFallbackPair, type TestGateway } from '../helpers/gateway.js';

let primary: CohereServer;
let secondary: CohereServer;
let gw: TestGateway;
let client: OpenAI;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ primary, secondary, gw, close } = await startNativeFallbackPair(startCohereServer, 'cohere', { id: 'co1', model: 'command-a' }, { id: 'co2', model: 'command-r' }));
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
});

afterAll(() => close());

const messages = [{ role: 'user' as const, content: 'Hello' }];

describe('cohere finish_reason ERROR', () => {
  it('before the first token: fails over to the next candidate', async () => {
    primary.enqueue({ kind: 'message', finishReason: 'ERROR', error: 'internal server error, this has been reported to our developers' });
    secondary.enqueue({ kind: 'message', text: 'Hi there' });
    const { data: stream, response } = await client.chat.completions.create({ model: 'chat', messages, stream: true }).withResponse();
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(response.headers.get('x-switchyard-deployment')).toBe('co2/command-r');
    expect(text).toBe('Hi there');
    expect(finish).toBe('stop');
  });

  it('after the first token: the stream ends with stream_broken, not a clean stop', async () => {
    primary.enqueue({ kind: 'message', text: 'The answer is', finishReason: 'ERROR', error: 'internal server error, this has been reported to our developers' });
    const stream = await client.chat.completions.create({ model: 'chat', messages, stream: true });
    let text = '';
    let finish: string | null = null;
    const err = await (async () => {
      for await (const c of stream) {
        text += c.choices[0]?.delta.content ?? '';
        finish = c.choices[0]?.finish_reason ?? finish;
      }
    })().then(() => undefined, (e: unknown) => e);
    expect(text).toBe('The answer is');
    expect(finish).toBeNull();
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('stream_broken');
  });

  it('a buffered answer that says ERROR fails over too', async () => {
    primary.enqueue({ kind: 'message', text: 'The answer is', finishReason: 'ERROR' });
    secondary.enqueue({ kind: 'message', text: 'Forty-two' });
    const { data, response } = await client.chat.completions.create({ model: 'chat', messages }).withResponse();
    expect(response.headers.get('x-switchyard-deployment')).toBe('co2/command-r');
    expect(data.choices[0]!.message.content).toBe('Forty-two');
  });
});
