import { describe, expect, it } from 'vitest';
import { UpstreamError } from './upstream-error.js';

describe('UpstreamError', () => {
  const code = (providerCode: string) => new UpstreamError({ category: 'server', message: 'm', providerCode }).providerCode;

  it('keeps a provider code that is an identifier', () => {
    for (const c of ['rate_limit_exceeded', 'RESOURCE_EXHAUSTED', 'overloaded_error', 'DeploymentNotFound', 'UND_ERR_SOCKET', 'ECONNRESET', '429', 'google.rpc.x:y-z']) expect(code(c)).toBe(c);
  });

  it('drops one that is text or far too long: it goes into the trace, which keeps no upstream text', () => {
    for (const c of ['C'.repeat(65), 'C'.repeat(1_000_000), 'you said: tell me a secret', '', 'a\nb']) expect(code(c)).toBeUndefined();
  });
});
