/**
 * `reasoning_effort` → Ollama's `think`, and the models that refused it.
 *
 * gpt-oss takes a level (`"low"`, `"medium"`, `"high"`) and cannot stop thinking: `minimal`
 * and `none` go as `"low"`, `xhigh` as `"high"`. Other thinking models take a switch: `none`
 * is `false`, any other effort `true`. Thinking comes back in `message.thinking`.
 *
 * A model without thinking refuses `think: true` with a 400, `"NAME" does not support
 * thinking`. Ollama's model list is the operator's, so which of them think is learnt from
 * that refusal (ThinkRefusals) rather than guessed from names: the executor asks the same
 * deployment again at once, and from then on `think` is left out for that model, the answer
 * coming without reasoning as it would from the model anyway.
 */
import type { Clock } from '../../core/clock.js';
import type { ReasoningEffort } from '../reasoning-effort.js';
import type { UpstreamError } from '../../resilience/upstream-error.js';
import type { OllamaThink } from './wire.js';

/** How long a learnt refusal holds before the model is asked with `think` again (a re-pulled tag may think). */
export const THINK_REFUSAL_MS = 60 * 60 * 1000;
/** Models an adapter remembers at most (model names of pinned requests are the client's). */
export const MAX_THINK_REFUSALS = 256;

const DOES_NOT_THINK = /does not support thinking/i;

export function ollamaThinkOf(effort: ReasoningEffort, model: string): OllamaThink {
  if (model.includes('gpt-oss')) {
    if (effort === 'medium') return 'medium';
    return effort === 'high' || effort === 'xhigh' ? 'high' : 'low';
  }
  return effort !== 'none';
}

export class ThinkRefusals {
  /** Model → when it refused. */
  private readonly refused = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /** Whether `model` refused `think` lately. One size check while none has. */
  has(model: string): boolean {
    if (this.refused.size === 0) return false;
    const at = this.refused.get(model);
    if (at === undefined) return false;
    if (this.clock.now() - at < THINK_REFUSAL_MS) return true;
    this.refused.delete(model);
    return false;
  }

  /** Learns from `err` when it is the refusal of `think`; true then (asking again without it will do). */
  learn(err: UpstreamError, model: string): boolean {
    if (err.category !== 'invalid_request' || !DOES_NOT_THINK.test(err.message)) return false;
    if (!this.refused.has(model) && this.refused.size >= MAX_THINK_REFUSALS) {
      // The oldest learnt goes: a Map iterates in insertion order.
      this.refused.delete(this.refused.keys().next().value!);
    }
    this.refused.set(model, this.clock.now());
    return true;
  }
}
