import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { LEARNT_MS, MAX_MODELS, RefusedParams } from './refused-params.js';

const clockAt = (t: { now: number }) => ({ now: () => t.now, setTimer: () => ({ clear() {} }) }) as never;
const req = (extra: Record<string, unknown>) => ({ model: 'x', messages: [{ role: 'user', content: 'hi' }], ...extra }) as ChatRequest;
const refusal = (providerCode: string, param: string | null, message: string) => new UpstreamError({ category: 'invalid_request', status: 400, message, providerCode, param });
const onlyDefault = (param: string, v: string, d: string) => refusal('unsupported_value', param, `Unsupported value: '${param}' does not support ${v} with this model. Only the default (${d}) value is supported.`);

describe('RefusedParams', () => {
  it('learns a value refusal that names the default: other values are refused for that model only, the default and none pass', () => {
    const t = { now: 0 };
    const r = new RefusedParams(clockAt(t));
    expect(r.empty).toBe(true);
    r.learn(onlyDefault('temperature', '0.2', '1'), 'o3');
    expect(r.empty).toBe(false);
    const e = r.refusal(req({ temperature: 0.7 }), 'o3')!;
    expect([e.unsent, e.category, e.param, e.providerCode]).toEqual([true, 'invalid_request', 'temperature', 'unsupported_value']);
    expect(e.message).toBe("Unsupported value: 'temperature' does not support 0.7 with this model. Only the default (1) value is supported.");
    expect(r.refusal(req({ temperature: 1 }), 'o3')).toBeUndefined();
    expect(r.refusal(req({ temperature: null }), 'o3')).toBeUndefined();
    expect(r.refusal(req({}), 'o3')).toBeUndefined();
    expect(r.refusal(req({ temperature: 0.7 }), 'gpt-4o')).toBeUndefined();
    // Booleans are read as such.
    r.learn(onlyDefault('parallel_tool_calls', 'true', 'false'), 'o3');
    expect(r.refusal(req({ parallel_tool_calls: false }), 'o3')).toBeUndefined();
    expect(r.refusal(req({ parallel_tool_calls: true }), 'o3')?.param).toBe('parallel_tool_calls');
  });

  it('learns a parameter refused outright, whatever its value; nothing from refusals of other forms', () => {
    const r = new RefusedParams(clockAt({ now: 0 }));
    r.learn(refusal('unsupported_parameter', 'logprobs', "Unsupported parameter: 'logprobs' is not supported with this model."), 'o1');
    expect(r.refusal(req({ logprobs: false }), 'o1')?.param).toBe('logprobs');
    for (const e of [
      refusal('unsupported_value', 'temperature', "Unsupported value: 'temperature' does not support 0.2 with this model."),
      refusal('invalid_value', 'messages[0].role', "Invalid value: 'robot'."),
      refusal('unsupported_parameter', 'messages[0].content', 'Unsupported parameter'),
      refusal('unsupported_parameter', null, 'Unsupported parameter'),
    ]) r.learn(e, 'o3');
    expect(r.refusal(req({ temperature: 0.2, messages: [] }), 'o3')).toBeUndefined();
  });

  it('lapses after LEARNT_MS: the model is asked again', () => {
    const t = { now: 1_000 };
    const r = new RefusedParams(clockAt(t));
    r.learn(onlyDefault('temperature', '0.2', '1'), 'o3');
    t.now += LEARNT_MS;
    expect(r.refusal(req({ temperature: 0.2 }), 'o3')).toBeDefined();
    t.now += 1;
    expect(r.refusal(req({ temperature: 0.2 }), 'o3')).toBeUndefined();
    expect(r.empty).toBe(true);
  });

  it('a full table still learns: lapsed entries go first, else the model learnt longest ago', () => {
    const t = { now: 0 };
    const r = new RefusedParams(clockAt(t));
    const temp = onlyDefault('temperature', '0.2', '1');
    // A client pinning made-up names, each refused once, fills the table.
    for (let i = 0; i < MAX_MODELS; i++) r.learn(temp, `junk-${i}`);
    r.learn(temp, 'o3');
    expect(r.refusal(req({ temperature: 0.2 }), 'o3')).toBeDefined();
    expect(r.refusal(req({ temperature: 0.2 }), 'junk-0')).toBeUndefined(); // the oldest made room
    expect(r.refusal(req({ temperature: 0.2 }), 'junk-1')).toBeDefined();
    // Learning again makes a model the newest: junk-1 goes before it next time.
    r.learn(temp, 'junk-1');
    r.learn(temp, 'o4');
    expect(r.refusal(req({ temperature: 0.2 }), 'junk-1')).toBeDefined();
    expect(r.refusal(req({ temperature: 0.2 }), 'junk-2')).toBeUndefined();
    // Once everything has lapsed, one new model clears the lot rather than one name.
    t.now += LEARNT_MS + 1;
    r.learn(temp, 'o5');
    r.learn(temp, 'o6');
    expect(r.refusal(req({ temperature: 0.2 }), 'o5')).toBeDefined();
    expect(r.refusal(req({ temperature: 0.2 }), 'o3')).toBeUndefined();
    r.learn(temp, 'o3');
    expect(r.refusal(req({ temperature: 0.2 }), 'o5')).toBeDefined(); // not pushed out: room was made by the sweep
  });
});
