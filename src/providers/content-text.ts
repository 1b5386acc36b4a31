/**
 * A message's content as one text: a string as it is, text parts concatenated.
 * For the messages whose native form is text only (system, tool results, an
 * assistant's words), where the protocol admits no other parts.
 */
import type { ContentPart } from '../protocol/openai.js';

export function contentText(content: string | ContentPart[] | null | undefined): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  let text = '';
  for (const p of content) if (p.type === 'text') text += (p as { text: string }).text;
  return text;
}
