/**
 * Tool call arguments that a native provider sends as a JSON value (Gemini's
 * `args`, Anthropic's `input`, Ollama's `arguments`) become OpenAI's string.
 * JSON.parse reads any depth, but JSON.stringify recurses: arguments nested
 * some thousands deep overflow the stack. That is the upstream's malformed
 * answer, not the gateway's fault, so it fails the attempt as `server` (the
 * request fails over) instead of surfacing as a 500 internal error.
 */
import { UpstreamError } from '../resilience/upstream-error.js';

export function toolArgumentsJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) {
      throw new UpstreamError({ category: 'server', message: 'upstream sent a malformed answer (tool arguments nested too deeply)' });
    }
    throw err;
  }
}
