import { describe, expect, it } from 'vitest';
import { parseDataUrl } from './data-url.js';

const b64 = (bytes: number[] | string) => Buffer.from(bytes as never).toString('base64');

describe('parseDataUrl', () => {
  it('passes base64 through, whatever the case of the flag and with parameters before it', () => {
    expect(parseDataUrl('data:image/png;base64,iVBORw0KGgo=')).toEqual({ mediaType: 'image/png', base64: 'iVBORw0KGgo=' });
    expect(parseDataUrl('DATA:image/jpeg;BASE64,/9j/4AA=')).toEqual({ mediaType: 'image/jpeg', base64: '/9j/4AA=' });
    expect(parseDataUrl('data:text/plain;charset=utf-8;base64,aGk=')).toEqual({ mediaType: 'text/plain', base64: 'aGk=' });
    expect(parseDataUrl('data:image/png;base64,iVBO\nRw0K Ggo=')?.base64).toBe('iVBORw0KGgo='); // line-wrapped base64
  });

  it('reads a body without the flag as percent-encoded bytes, binary ones included', () => {
    expect(parseDataUrl('data:text/plain,hello%20world')).toEqual({ mediaType: 'text/plain', base64: b64('hello world') });
    expect(parseDataUrl('data:,caf%C3%A9')).toEqual({ mediaType: '', base64: b64('café') });
    expect(parseDataUrl('data:image/png,%89PNG%FF%00')?.base64).toBe(b64([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]));
    // What made decodeURIComponent throw (found by fuzzing): an invalid or truncated escape stays as it is.
    expect(parseDataUrl('data:text/plain,%E0%A4%A')?.base64).toBe(b64([0xe0, 0xa4, 0x25, 0x41]));
    expect(parseDataUrl('data:text/plain,100%')?.base64).toBe(b64('100%'));
    expect(parseDataUrl('data:text/plain,%zz é')?.base64).toBe(b64('%zz é'));
  });

  it('percent-decodes a base64 body first, and refuses one that is not base64 (found by review)', () => {
    expect(parseDataUrl('data:image/png;base64,iVBORw0KGgo%3D')?.base64).toBe('iVBORw0KGgo=');
    expect(parseDataUrl('data:image/png;base64,aGk')?.base64).toBe('aGk'); // padding may be left out
    expect(parseDataUrl('data:image/png;base64,not base64!')).toBeUndefined();
    expect(parseDataUrl('data:image/png;base64,aGk-_w')).toBeUndefined(); // URL-safe base64 is not the standard's
  });

  it('checks the padding as the standard places it', () => {
    for (const ok of ['', 'aGk=', 'aGk', 'aA==', 'aA', 'aGVsbG8h']) expect(parseDataUrl(`data:;base64,${ok}`)?.base64).toBe(ok);
    for (const bad of ['a', 'a===', 'aA=', 'aGk==', '=', 'aG=k', 'aGk\u00e9', 'aGk=aGk=']) expect(parseDataUrl(`data:;base64,${bad}`)).toBeUndefined();
  });

  it('reads an image of several megabytes (the base64 regex overflowed the stack past about 4.5 million characters)', () => {
    const base64 = 'iVBO'.repeat(2_000_000);
    expect(parseDataUrl(`data:image/png;base64,${base64}`)?.base64.length).toBe(base64.length);
    expect(parseDataUrl(`data:image/png;base64,${base64}!`)).toBeUndefined();
  });

  it('is undefined for what is not a data URL', () => {
    expect(parseDataUrl('https://example.com/cat.png')).toBeUndefined();
    expect(parseDataUrl('data:image/png;base64')).toBeUndefined(); // no comma
  });
});
