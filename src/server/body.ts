/**
 * Reading a request body: bounded by `maxBodyBytes` (413 as soon as the bound
 * is crossed, declared or not), strict UTF-8, parsed once.
 */
import type { IncomingMessage } from 'node:http';
import { GatewayError, invalidRequest } from '../core/errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (buf: Buffer) => {
      size += buf.length;
      if (size > maxBytes) {
        cleanup();
        // Stop reading; the connection is closed after the 413 is sent.
        req.pause();
        reject(tooLarge(maxBytes));
        return;
      }
      parts.push(buf);
    };
    const onEnd = () => {
      cleanup();
      resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onAborted = () => {
      cleanup();
      reject(new Error('client aborted the request body'));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

const tooLarge = (max: number) => new GatewayError(413, 'payload_too_large', `Request body exceeds ${max} bytes`);

export function parseJsonBody(buf: Buffer): unknown {
  if (buf.length === 0) throw invalidRequest('Request body is empty: expected JSON');
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    throw invalidRequest('Request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalidRequest(`Malformed JSON: ${(err as Error).message}`);
  }
}
