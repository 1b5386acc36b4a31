/**
 * The loopback Gemini server's extended thinking: what the real API refuses in a
 * `generationConfig.thinkingConfig`, by model family, and whether thought summaries go back
 * (only when the request sets `includeThoughts`, as parts with `thought: true`).
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const THINKING_FIELDS = new Set(['includeThoughts', 'thinkingBudget', 'thinkingLevel']);
/** The enum's names: proto JSON takes those exactly. */
const LEVELS = new Set(['MINIMAL', 'LOW', 'MEDIUM', 'HIGH']);
/** Gemini 3 Pro's levels; Flash has all four. */
const PRO_LEVELS = new Set(['LOW', 'HIGH']);

/** The refusal `thinkingConfig` earns on `model`, or undefined when the API takes it. */
export function thinkingProblem(gen: Obj, model: string): string | undefined {
  const t = gen.thinkingConfig;
  if (t === undefined) return undefined;
  if (!isObj(t)) return "Invalid value at 'generation_config.thinking_config'.";
  for (const k of Object.keys(t)) if (!THINKING_FIELDS.has(k)) return `Invalid JSON payload received. Unknown name "${k}" at 'generation_config.thinking_config': Cannot find field.`;
  const m = /gemini-(\d+)(?:\.(\d+))?/.exec(model);
  const version = m ? Number(m[1]) + Number(m[2] ?? 0) / 10 : undefined;
  if (version !== undefined && version < 2.5) return `Thinking is not supported by models/${model}.`;
  const level = t.thinkingLevel;
  const budget = t.thinkingBudget;
  if (level !== undefined && budget !== undefined) return 'Only one of thinking_budget and thinking_level may be set.';
  if (level !== undefined) {
    const l = String(level);
    if (!LEVELS.has(l)) return `Invalid value at 'generation_config.thinking_config.thinking_level' (type.googleapis.com/google.ai.generativelanguage.v1beta.ThinkingConfig.ThinkingLevel), "${String(level)}"`;
    if (version !== undefined && version < 3) return 'Thinking level is not supported for this model.';
    if (!model.includes('flash') && !PRO_LEVELS.has(l)) return `Thinking level ${l} is not supported for this model.`;
  }
  if (budget !== undefined) {
    if (typeof budget !== 'number' || !Number.isInteger(budget)) return "Invalid value at 'generation_config.thinking_config.thinking_budget' (TYPE_INT32)";
    if (budget === 0 && model.includes('pro')) return 'Budget 0 is invalid. This model only works in thinking mode.';
  }
  return undefined;
}

/** Whether the request asked for thought summaries. */
export function includesThoughts(body: Obj): boolean {
  const gen = body.generationConfig;
  return isObj(gen) && isObj(gen.thinkingConfig) && gen.thinkingConfig.includeThoughts === true;
}
