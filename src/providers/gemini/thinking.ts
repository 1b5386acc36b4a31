/**
 * `reasoning_effort` → Gemini's `generationConfig.thinkingConfig`. Pure.
 *
 * - Gemini 3 and later take a `thinkingLevel`: Flash models minimal, low, medium and high; Pro
 *   models only low and high (minimal and low go as low, medium and above as high). None of
 *   them can stop thinking: `none` asks for the least there is, and no thoughts back.
 * - Gemini 2.5 takes a `thinkingBudget` (THINKING_BUDGET, within every 2.5 model's range).
 *   `none` is a budget of 0 on Flash and Flash-Lite; 2.5 Pro cannot stop thinking either, and
 *   gets its minimum, 128.
 * - A name without a version (`gemini-flash-latest`) gets a budget, which Gemini 3 still takes,
 *   and nothing for `none` (0 is refused by models that always think). Models before 2.5 do not
 *   think: they get no thinkingConfig, which they would refuse; nor do Gemma, the speech and
 *   embedding models, or the 2.x image models (NEVER_THINKS).
 *
 * Any effort but `none` sets `includeThoughts`, so thought summaries come back (as parts marked
 * `thought: true`, which the response converters give as reasoning_content).
 */
import { THINKING_BUDGET, type ReasoningEffort, type ThinkingEffort } from '../reasoning-effort.js';
import type { GeminiThinkingConfig } from './wire.js';

/** 2.5 Pro's smallest budget: it always thinks. */
const PRO_25_MIN_BUDGET = 128;

const VERSION = /gemini-(\d+)(?:\.(\d+))?/;

/**
 * Models served by the same API that do not think, and refuse a thinkingConfig (a 400 a
 * single-deployment alias passed on): Gemma, speech, embeddings, and 2.x's image models.
 */
const NEVER_THINKS = /gemma|tts|embedding/;
const IMAGE = /image/;

export function thinkingConfigOf(effort: ReasoningEffort, model: string): GeminiThinkingConfig | undefined {
  if (NEVER_THINKS.test(model)) return undefined;
  const m = VERSION.exec(model);
  const major = m ? Number(m[1]) : undefined;
  const minor = m?.[2] === undefined ? 0 : Number(m[2]);
  if (IMAGE.test(model) && (major === undefined || major < 3)) return undefined;
  const flash = model.includes('flash');
  if (major !== undefined && major >= 3) {
    if (effort === 'none') return { thinkingLevel: flash ? 'MINIMAL' : 'LOW' };
    return { thinkingLevel: flash ? flashLevel(effort) : proLevel(effort), includeThoughts: true };
  }
  if (major !== undefined && (major < 2 || (major === 2 && minor < 5))) return undefined;
  if (effort === 'none') {
    if (major === undefined) return undefined;
    return { thinkingBudget: flash ? 0 : PRO_25_MIN_BUDGET };
  }
  return { thinkingBudget: THINKING_BUDGET[effort], includeThoughts: true };
}

function flashLevel(effort: ThinkingEffort): GeminiThinkingConfig['thinkingLevel'] {
  return effort === 'xhigh' ? 'HIGH' : (effort.toUpperCase() as GeminiThinkingConfig['thinkingLevel']);
}

function proLevel(effort: ThinkingEffort): GeminiThinkingConfig['thinkingLevel'] {
  return effort === 'minimal' || effort === 'low' ? 'LOW' : 'HIGH';
}
