/**
 * Parameters a model refused, learnt from its refusals (`adaptTo`), so a later
 * request carrying the same is refused here, without a call: OpenAI's reasoning
 * models answer any `temperature` but 1 with "Unsupported value: 'temperature'
 * does not support 0.2 with this model. Only the default (1) value is
 * supported.", and a pool that mixes them with models that take it paid that
 * round trip on every such request before failing over. The refusal made here
 * is in the model's words (its code and param, its message about this
 * request's value), marked unsent: the executor
 * moves on to the next candidate as it did, and when none takes the request the
 * client gets it as before.
 *
 * Only top-level parameters with a primitive value are learnt, and only two
 * forms: a parameter the model does not take at all (`unsupported_parameter`),
 * and one that takes only its default, named in the message (`unsupported_value`
 * with "Only the default (X) value is supported"); a value refusal that names no
 * default is not generalised. Learnt refusals lapse after LEARNT_MS, as a model
 * behind a name may change, and are bounded per adapter (model names of pinned
 * requests are the client's): a full table makes room (makeRoom).
 */
import type { Clock } from '../../core/clock.js';
import type { ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';

/** How long a learnt refusal is applied before the model is asked again. */
export const LEARNT_MS = 60 * 60 * 1000;
/** Models with learnt refusals an adapter keeps at most. */
export const MAX_MODELS = 256;
const PARAM = /^[a-z][a-z_]{0,63}$/;
const ONLY_DEFAULT = /Only the default \(([^)]{1,40})\) value is supported/;
/** The refused parameter whatever its value. */
const ANY = Symbol('any value');

interface Learnt {
  param: string;
  /** The one value the model takes, or ANY when it takes none. */
  allowed: string | number | boolean | typeof ANY;
  /** The default as the model's message named it (for the refusal's words). */
  named: string;
  message: string;
  code: string;
  at: number;
}

export class RefusedParams {
  private readonly byModel = new Map<string, Learnt[]>();

  constructor(private readonly clock: Clock) {}

  /** None learnt: the one test a request pays. */
  get empty(): boolean {
    return this.byModel.size === 0;
  }

  /** Learns from `err` when it is a refusal of one of the two forms above. */
  learn(err: UpstreamError, model: string): void {
    const param = err.param;
    const code = err.providerCode;
    if (param == null || !PARAM.test(param) || (code !== 'unsupported_parameter' && code !== 'unsupported_value')) return;
    let allowed: Learnt['allowed'] = ANY;
    let named = '';
    if (code === 'unsupported_value') {
      const d = ONLY_DEFAULT.exec(err.message)?.[1];
      if (d === undefined) return;
      named = d;
      allowed = d === 'true' ? true : d === 'false' ? false : Number.isFinite(Number(d)) ? Number(d) : d;
    }
    const now = this.clock.now();
    let learnt = this.byModel.get(model);
    // Most recently learnt last: the Map's order is what a full table gives up first.
    if (learnt !== undefined) this.byModel.delete(model);
    else if (this.byModel.size >= MAX_MODELS) this.makeRoom(now);
    this.byModel.set(model, (learnt ??= []));
    const entry: Learnt = { param, allowed, named, message: err.message, code, at: now };
    const same = learnt.findIndex((l) => l.param === param);
    if (same === -1) learnt.push(entry);
    else learnt[same] = entry;
  }

  /** The refusal `model` gave a request like `req`, or undefined when none is known. */
  refusal(req: ChatRequest, model: string): UpstreamError | undefined {
    const learnt = this.byModel.get(model);
    if (learnt === undefined) return undefined;
    for (const l of learnt) {
      const v = (req as Record<string, unknown>)[l.param];
      if (v === undefined || v === null || (l.allowed !== ANY && v === l.allowed)) continue;
      if (this.clock.now() - l.at > LEARNT_MS) {
        this.forget(model, l);
        continue;
      }
      // In the model's words, about this request's value (the learnt message named another's).
      const message = l.allowed === ANY ? l.message : `Unsupported value: '${l.param}' does not support ${String(v)} with this model. Only the default (${l.named}) value is supported.`;
      return new UpstreamError({ category: 'invalid_request', message, providerCode: l.code, param: l.param, unsent: true });
    }
    return undefined;
  }

  /**
   * A full table drops what has lapsed, else the model learnt longest ago. Refusing to learn
   * when full, as it did, let a client pinning 256 made-up model names (each refused once)
   * stop the gateway learning for good: lapsed entries went only when their model was asked
   * again, and a junk name never is. What is dropped costs one round trip to learn again.
   */
  private makeRoom(now: number): void {
    for (const [model, learnt] of this.byModel) {
      const kept = learnt.filter((l) => now - l.at <= LEARNT_MS);
      if (kept.length === 0) this.byModel.delete(model);
      else if (kept.length !== learnt.length) this.byModel.set(model, kept);
    }
    if (this.byModel.size >= MAX_MODELS) this.byModel.delete(this.byModel.keys().next().value!);
  }

  private forget(model: string, l: Learnt): void {
    const learnt = this.byModel.get(model)!;
    learnt.splice(learnt.indexOf(l), 1);
    if (learnt.length === 0) this.byModel.delete(model);
  }
}
