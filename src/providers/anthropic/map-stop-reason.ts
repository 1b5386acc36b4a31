/**
 * Anthropic `stop_reason` → OpenAI `finish_reason`. `pause_turn` (a server tool
 * paused a long turn) ends this answer like a normal stop; an unknown future
 * reason is reported as `stop` rather than failing an answer that did finish.
 */
import type { FinishReason } from '../../protocol/openai.js';

export function mapStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn and anything new.
      return 'stop';
  }
}
