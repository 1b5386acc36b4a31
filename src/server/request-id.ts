/**
 * The request id: the client's `x-request-id` when it is a sane token, else a
 * fresh UUID. Decided once at the edge and written back into the headers the
 * gateway reads, so an error response, the routed response and the trace all
 * carry the same id (a client's invalid id is never echoed).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { REQUEST_ID_RE } from '../core/request-meta.js';


export function requestIdOf(headers: IncomingHttpHeaders): string {
  const v = headers['x-request-id'];
  if (typeof v === 'string' && REQUEST_ID_RE.test(v)) return v;
  const id = randomUUID();
  headers['x-request-id'] = id;
  return id;
}
