/** The pre-serialised request the load generator sends every path. */
import { describe, expect, it } from 'vitest';
import { httpRequest, LABEL, PATHS, type Gateway } from '../../bench/paths.js';

describe('httpRequest', () => {
  const g = { headers: { authorization: 'Bearer sk-x', 'x-portkey-provider': 'openai' } } as Partial<Gateway> as Gateway; // only the headers are read

  it("is a whole HTTP/1.1 POST: the path's headers, a content-length in bytes, the body", () => {
    const body = '{"content":"héllo"}'; // é: 2 bytes
    const req = httpRequest(g, 8123, body);
    const [head, rest] = req.split('\r\n\r\n');
    expect(rest).toBe(body);
    expect(head!.split('\r\n')).toEqual([
      'POST /v1/chat/completions HTTP/1.1',
      'host: 127.0.0.1:8123',
      'content-type: application/json',
      `content-length: ${body.length + 1}`,
      'authorization: Bearer sk-x',
      'x-portkey-provider: openai',
    ]);
  });
});

describe('PATHS and LABEL', () => {
  it('runs by default every path the verdict and the CPU steps compare', () => {
    for (const p of ['bare', 'parsing', 'switchyard', 'portkey'] as const) expect(PATHS).toContain(p);
  });

  it('labels each path differently: the tables tell rows apart by label', () => {
    expect(new Set(Object.values(LABEL)).size).toBe(Object.keys(LABEL).length);
  });
});
