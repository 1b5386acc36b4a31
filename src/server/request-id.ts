/**
 * The request id: the client's `x-request-id` when it is a sane token, else a
 * fresh UUID. Decided once at the edge and written back into the headers the
 * gateway reads, so an error response, the routed response and the trace all
 * carry the same id (a client's invalid id is never echoed).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { REQUEST_ID_RE } from '../core/request-meta.js';
import { newUuid } from '../observability/compact-id.js';

/** `words`: where a made id's words go (see newUuid), for the gateway to hand to the trace ring. */
export function requestIdOf(headers: IncomingHttpHeaders, words?: number[]): string {
  const v = headers['x-request-id'];
  if (typeof v === 'string' && REQUEST_ID_RE.test(v)) return v;
  const id = newUuid(words);
  headers['x-request-id'] = id;
  return id;
}
