/**
 * `DEFAULT_RPM` (env; `limits.defaultRpm` in the file) paces every provider
 * that sets no `rpm` of its own, and only those. Over real sockets to two
 * loopback upstreams, on a manual VirtualClock: at DEFAULT_RPM=12 a provider
 * without `rpm` takes its burst of 10 at once, then one request every 5 s.
 */
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import { openaiProvider, startGateway, type TestGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let plain: FaultServer;
let own: FaultServer;
let gw: TestGateway | undefined;
let clock: VirtualClock;

beforeEach(async () => {
  clock = new VirtualClock();
  plain = await startFaultServer({ clock });
  own = await startFaultServer({ clock });
});

afterEach(async () => {
  await gw?.close(0);
  gw = undefined;
  await plain.close();
  await own.close();
});

async function start(env: Record<string, string>): Promise<OpenAI> {
  gw = await startGateway(
    {
      // Refuse at once rather than wait: the count per instant is what is under test.
      resilience: { throttleMaxWaitMs: 0 },
      providers: [openaiProvider('plain', plain.url), openaiProvider('own', own.url, { rpm: 1200 })],
      models: [
        { name: 'plain', deployments: [{ provider: 'plain', model: 'm' }] },
        { name: 'own', deployments: [{ provider: 'own', model: 'm' }] },
      ],
    },
    { clock, env },
  );
  return new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
}

/** Send `n` requests to `model` now; the HTTP status of each. */
async function burst(client: OpenAI, model: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    try {
      await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      out.push(200);
    } catch (err) {
      out.push(err instanceof OpenAI.APIError ? (err.status ?? 0) : 0);
    }
  }
  return out;
}

describe('DEFAULT_RPM', () => {
  it('paces a provider without rpm at that rate', async () => {
    const client = await start({ DEFAULT_RPM: '12' });
    expect(gw!.config.limits.defaultRpm).toBe(12);
    const statuses = await burst(client, 'plain', 12);
    expect(statuses).toEqual([...Array(10).fill(200), 503, 503]);
    expect(plain.requests).toHaveLength(10);

    const err = await client.chat.completions.create({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('5');
    await clock.advance(5_000);
    expect(await burst(client, 'plain', 2)).toEqual([200, 503]);
  });

  it('leaves a provider with its own rpm alone', async () => {
    const client = await start({ DEFAULT_RPM: '12' });
    expect(await burst(client, 'own', 15)).toEqual(Array(15).fill(200));
    expect(own.requests).toHaveLength(15);
  });

  it('is off by default: a provider without rpm is not paced', async () => {
    const client = await start({});
    expect(gw!.config.limits.defaultRpm).toBeNull();
    expect(await burst(client, 'plain', 15)).toEqual(Array(15).fill(200));
  });
});
