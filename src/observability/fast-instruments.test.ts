import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '../../test/helpers/prom-parse.js';
import { FastCounter, FastHistogram } from './fast-instruments.js';

const BUCKETS = [0.1, 0.5, 1];

describe('fast instruments', () => {
  it('render exactly what prom-client renders for the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const fast = new FastHistogram('t_seconds', 'help', ['model'], BUCKETS, ours);
    const slow = new Histogram({ name: 't_seconds', help: 'help', labelNames: ['model'], buckets: BUCKETS, registers: [theirs] });
    const series = fast.labels('chat');
    // On a bound, just above, in between, above every bound, zero.
    for (const v of [0.1, 0.10001, 0.3, 0.5, 2, 0, 1]) {
      series.observe(v);
      slow.labels('chat').observe(v);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('cumulates buckets with le as an upper bound, +Inf equal to the count', async () => {
    const reg = new Registry();
    const h = new FastHistogram('h', 'help', [], BUCKETS, reg).labels();
    for (const v of [0.1, 0.4, 0.9, 7]) h.observe(v);
    const exp = parsePrometheusText(await reg.metrics());
    expect(sampleValue(exp, 'h_bucket', { le: '0.1' })).toBe(1);
    expect(sampleValue(exp, 'h_bucket', { le: '0.5' })).toBe(2);
    expect(sampleValue(exp, 'h_bucket', { le: '1' })).toBe(3);
    expect(sampleValue(exp, 'h_bucket', { le: '+Inf' })).toBe(4);
    expect(sampleValue(exp, 'h_sum')).toBeCloseTo(8.4);
    expect(sampleValue(exp, 'h_count')).toBe(4);
  });

  it('counters export every series made, zero included, and reset keeps the series', async () => {
    const reg = new Registry();
    const c = new FastCounter('c_total', 'help', ['deployment', 'direction'], reg);
    c.labels('a/m', 'in').inc(0);
    const out = c.labels('a/m', 'out');
    out.inc();
    out.inc(2.5);
    let exp = parsePrometheusText(await reg.metrics());
    expect(sampleValue(exp, 'c_total', { deployment: 'a/m', direction: 'in' })).toBe(0);
    expect(sampleValue(exp, 'c_total', { deployment: 'a/m', direction: 'out' })).toBe(3.5);
    reg.resetMetrics();
    exp = parsePrometheusText(await reg.metrics());
    expect(sampleValue(exp, 'c_total', { deployment: 'a/m', direction: 'out' })).toBe(0);
  });
});
