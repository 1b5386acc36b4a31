import { describe, expect, it } from 'vitest';
import { configProblems } from '../../test/helpers/config-problems.js';
import { parseConfig } from './parse.js';

const doc = (origins: unknown) => ({
  server: { cors: { origins } },
  providers: [{ id: 'sim', type: 'simulated' }],
  models: [{ name: 'fast', deployments: [{ provider: 'sim', model: 'm' }] }],
});

const problemsOf = (d: unknown) => configProblems(() => parseConfig(d, {}));

describe('server.cors.origins', () => {
  it('takes exact origins and "*", and none by default', () => {
    // Extensions and app webviews send origins of their own schemes.
    const origins = ['https://app.example.com', 'http://localhost:3000', 'http://[::1]:8080', 'http://127.0.0.1', 'chrome-extension://abcdefghijklmnop', 'app://obsidian.md', '*'];
    expect(parseConfig(doc(origins), {}).server.cors.origins).toEqual(origins);
    expect(parseConfig({ ...doc([]), server: {} }, {}).server.cors).toEqual({ origins: [] });
  });

  it('refuses anything a browser would not send as Origin, one `path: reason` line each', () => {
    const form = 'scheme://host[:port], such as https://app.example.com, or "*"';
    expect(
      problemsOf(
        doc([
          'https://app.example.com/',
          'https://App.Example.com',
          'https://app.example.com:443',
          'https://app.example.com/chat?x=1',
          'app.example.com',
          'localhost:3000',
          'null',
          'file:///tmp/x.html',
          'https://*.example.com',
          '',
          7,
        ]),
      ),
    ).toEqual([
      'server.cors.origins[0]: must be written as browsers send it: https://app.example.com (no path or trailing slash, no default port, lower case)',
      'server.cors.origins[1]: must be written as browsers send it: https://app.example.com (no path or trailing slash, no default port, lower case)',
      'server.cors.origins[2]: must be written as browsers send it: https://app.example.com (no path or trailing slash, no default port, lower case)',
      'server.cors.origins[3]: must be written as browsers send it: https://app.example.com (no path or trailing slash, no default port, lower case)',
      `server.cors.origins[4]: must be an origin: ${form}`,
      `server.cors.origins[5]: must be an origin: ${form}`,
      `server.cors.origins[6]: must be an origin: ${form}`,
      `server.cors.origins[7]: must be an origin: ${form}`,
      `server.cors.origins[8]: wildcards are not supported: list each origin, or use "*" alone (${form})`,
      `server.cors.origins[9]: must be an origin: ${form}`,
      'server.cors.origins[10]: expected string, got 7',
    ]);
    expect(problemsOf({ ...doc([]), server: { cors: { origin: ['*'] } } })).toEqual(['server.cors.origin: unknown field (did you mean "origins"?)']);
  });
});
