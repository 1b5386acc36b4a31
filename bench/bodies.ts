/**
 * Request bodies for each case, identical for every path apart from `model`
 * (Switchyard's alias, or the upstream model for the others).
 */
export type CaseName = 'buffered' | 'stream20' | 'stream200' | 'body100k' | 'hold';

const SYSTEM = 'You are a helpful assistant. Answer briefly and plainly.';
const QUESTION = 'In one short sentence, what does a load balancer do?';

/** ~100 KB of ordinary prose: a long document pasted into the prompt. */
const DOCUMENT = (() => {
  const words = 'the gateway forwards each request to a healthy upstream and records what happened so that operators can see latency errors and cost over time'.split(' ');
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < 100 * 1024; i++) {
    const w = words[(i * 7) % words.length]!;
    out.push(w);
    size += w.length + 1;
  }
  return out.join(' ');
})();

export function chatBody(c: CaseName, model: string): string {
  const stream = c === 'stream20' || c === 'stream200' || c === 'hold';
  const user = c === 'body100k' ? `Summarise this document in one sentence:\n\n${DOCUMENT}` : QUESTION;
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: user },
    ],
    max_tokens: 256,
    temperature: 0.2,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}
