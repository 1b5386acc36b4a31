/**
 * Turns the provider gateway tests take through the official `openai` client, and the
 * checks every provider's answer must pass whatever its wire format. Each test still
 * queues its own upstream's reply (the loopback servers speak different formats).
 */
import type OpenAI from 'openai';
import { expect } from 'vitest';
import { assembleStream } from './assemble-stream.js';

type Tool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;
type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** A streamed answer to `content` from alias `chat`, usage asked for, checked to have finished with `stop`. */
export async function streamWithUsage(client: OpenAI, content: string) {
  const stream = await client.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const assembled = await assembleStream(stream);
  expect(assembled.out.finish_reason).toBe('stop');
  return assembled;
}

/** Lyon's weather asked of alias `chat`, streamed, get_weather offered: the one call comes back whole, its id `id`. */
export async function expectStreamedLyonCall(client: OpenAI, id: string): Promise<void> {
  const runner = client.chat.completions.stream({
    model: 'chat',
    messages: [{ role: 'user', content: 'Weather in Lyon?' }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
  });
  const final = await runner.finalChatCompletion();
  expect(final.choices[0]!.finish_reason).toBe('tool_calls');
  expect(final.choices[0]!.message.tool_calls).toEqual([{ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } }]);
}

/** `params` asked buffered, then streamed: both answers are `content`, with `reasoning` beside it as reasoning_content. */
export async function expectReasoningBothWays(
  client: OpenAI,
  params: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
  content: string,
  reasoning: string,
): Promise<void> {
  const res = await client.chat.completions.create(params);
  expect(res.choices[0]!.message.content).toBe(content);
  expect((res.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBe(reasoning);
  const stream = await client.chat.completions.create({ ...params, stream: true });
  const { out, chunks } = await assembleStream(stream);
  expect(out.content).toBe(content);
  expect(chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('')).toBe(reasoning);
}

/** get_weather by location, as the Paris conversation offers it; `extra` joins its parameters' schema. */
export function parisWeatherTools(extra: Record<string, unknown> = {}): Tool[] {
  return [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Get the current weather',
        parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], ...extra },
      },
    },
  ];
}

/** The same get_weather as a legacy `functions` entry. */
export function parisWeatherFunctions(): OpenAI.Chat.Completions.ChatCompletionCreateParams.Function[] {
  return parisWeatherTools().map((t) => t.function);
}

export const PARIS_WEATHER: Message[] = [
  { role: 'system', content: 'You are a weather assistant.' },
  { role: 'user', content: 'What is the weather in Paris?' },
];

/** The Paris conversation after the model called get_weather (its call id `id`) and the tool answered. */
export function parisToolResultTurn(id: string): Message[] {
  return [
    ...PARIS_WEATHER,
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, FR"}' } }] },
    { role: 'tool', tool_call_id: id, content: '15 degrees' },
  ];
}

/**
 * A story streamed from `model` whose upstream stream is cut after "Once upon " and
 * resumed (the caller queues both replies): the client sees the whole story, once.
 */
export async function expectResumedStory(client: OpenAI, model: string): Promise<void> {
  const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Tell me a story.' }], stream: true });
  const { out } = await assembleStream(stream);
  expect(out.content).toBe('Once upon a time, far away.');
  expect(out.finish_reason).toBe('stop');
}
