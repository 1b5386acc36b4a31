/**
 * OpenAI message content → Anthropic content blocks. Pure.
 *
 * Text parts become text blocks (empty or whitespace-only ones are dropped:
 * Anthropic rejects them); images become image blocks, a base64 data URL as a
 * base64 source and an http(s) URL as a url source; a `file` part with inline
 * base64 data (a PDF) becomes a document block. Anything else (audio, file
 * ids) cannot be expressed and is refused as an invalid request rather than
 * silently dropped.
 *
 * Prompt caching: a client marks a cache breakpoint with `cache_control` on a
 * content part (or on a whole message, or a tool: convert-request.ts), as
 * LiteLLM and Portkey take it in OpenAI-format requests; it goes out on the
 * block it marks. OpenAI-compatible upstreams get the request as it came.
 */
import { parseDataUrl } from '../../protocol/data-url.js';
import type { ChatMessage, ContentPart, ImagePart, TextPart } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { AnthropicCacheControl, AnthropicContentBlock, AnthropicDocumentBlock, AnthropicImageBlock, AnthropicMediaBlock, AnthropicTextBlock } from './wire.js';

/** `at` names the content for a refusal's `param` (`messages[2].content`): each part as `at[j]`. */
export function contentBlocks(content: ChatMessage['content'], at: string): AnthropicMediaBlock[] {
  const blocks: AnthropicMediaBlock[] = [];
  if (typeof content === 'string') {
    pushText(blocks, content);
    return blocks;
  }
  if (!Array.isArray(content)) return blocks;
  for (let j = 0; j < content.length; j++) {
    const part = content[j]!;
    const cache = cacheControlOf((part as { cache_control?: unknown }).cache_control, `${at}[${j}]`);
    if (part.type === 'text') pushText(blocks, (part as TextPart).text, cache);
    else if (part.type === 'image_url') blocks.push(marked(imageBlock(part as ImagePart, `${at}[${j}]`), cache));
    else if (part.type === 'file') blocks.push(marked(documentBlock(part, `${at}[${j}]`), cache));
    else throw unsupported(`content part type "${part.type}"`, `${at}[${j}]`);
  }
  return blocks;
}

/**
 * Appends a text block. Anthropic rejects empty and whitespace-only ones: such a part is
 * dropped, and a breakpoint it carried goes to the block before it (the same prefix, less
 * the blank), if any.
 */
export function pushText(blocks: AnthropicContentBlock[], text: unknown, cache?: AnthropicCacheControl): void {
  if (typeof text === 'string' && text.trim().length > 0) blocks.push(marked<AnthropicTextBlock>({ type: 'text', text }, cache));
  else if (cache !== undefined) markLast(blocks, cache);
}

/** `block`, with the breakpoint when there is one. */
export function marked<B extends { cache_control?: AnthropicCacheControl }>(block: B, cache: AnthropicCacheControl | undefined): B {
  if (cache !== undefined) block.cache_control = cache;
  return block;
}

/** A breakpoint on a whole message goes on its last block (the prefix it ends). */
export function markLast(blocks: readonly { cache_control?: AnthropicCacheControl }[], cache: AnthropicCacheControl | undefined): void {
  const last = blocks[blocks.length - 1];
  if (cache !== undefined && last !== undefined) last.cache_control = cache;
}

/**
 * A client's `cache_control`, checked: undefined when absent, else Anthropic's one shape
 * (`{"type": "ephemeral"}`, with an optional `ttl` of "5m" or "1h"), copied. Any other is
 * refused for this candidate rather than sent to come back as a 400.
 */
export function cacheControlOf(v: unknown, at: string): AnthropicCacheControl | undefined {
  if (v === undefined || v === null) return undefined;
  const c = v as { type?: unknown; ttl?: unknown };
  if (typeof v === 'object' && c.type === 'ephemeral' && Object.keys(v).length === (c.ttl === undefined ? 1 : 2)) {
    if (c.ttl === undefined) return { type: 'ephemeral' };
    if (c.ttl === '5m' || c.ttl === '1h') return { type: 'ephemeral', ttl: c.ttl };
  }
  throw unsupported('a cache_control other than {"type": "ephemeral"} with an optional "ttl" of "5m" or "1h"', `${at}.cache_control`);
}

function imageBlock(part: ImagePart, param: string): AnthropicImageBlock {
  const url = part.image_url?.url;
  if (typeof url !== 'string') throw unsupported('image_url without a url', param);
  if (/^data:/i.test(url)) {
    const d = parseDataUrl(url);
    if (d === undefined) throw unsupported('malformed image data URL', param);
    if (d.mediaType === '') throw unsupported('an image data URL without a media type (data:image/png;base64,…)', param);
    return { type: 'image', source: { type: 'base64', media_type: d.mediaType, data: d.base64 } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw unsupported('image URL scheme', param);
}

/** OpenAI `file` parts with inline data (PDFs) → Anthropic document blocks. */
function documentBlock(part: ContentPart, param: string): AnthropicDocumentBlock {
  const file = (part as { file?: { file_data?: unknown; filename?: unknown } }).file;
  const d = typeof file?.file_data === 'string' ? parseDataUrl(file.file_data) : undefined;
  if (d === undefined) throw unsupported('file part without inline file_data (a data: URL)', param);
  const block: AnthropicDocumentBlock = {
    type: 'document',
    source: { type: 'base64', media_type: d.mediaType, data: d.base64 },
  };
  if (typeof file?.filename === 'string') block.title = file.filename;
  return block;
}

export function plainText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const p of content) if (p.type === 'text' && typeof (p as TextPart).text === 'string') texts.push((p as TextPart).text);
  return texts.join('\n');
}

export function unsupported(what: string, param?: string): UpstreamError {
  return new UpstreamError({
    category: 'invalid_request',
    message: `the anthropic provider cannot accept ${what}`,
    unsent: true,
    ...(param !== undefined ? { param } : {}),
  });
}
