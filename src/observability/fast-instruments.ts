/**
 * Counters and histograms whose hot-path operation is one field update.
 *
 * Why not prom-client's own: a cached `metric.labels(...)` child still
 * re-validates its labels and rebuilds their hash string (`model:chat,endpoint:
 * chat,code:200,`) on every `inc`/`observe`, and a histogram observation also
 * allocates — several µs a request across the gateway's series. Here a series
 * is a plain object created once per label set (callers cache it); its value is
 * turned into prom-client's export shape only when /metrics is scraped. Each
 * family registers itself in a prom-client Registry, which renders it like
 * any other metric.
 */
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

interface ExportValue {
  labels: Record<string, string | number>;
  /** Rendered after `labels` (prom-client's histogram buckets put `le` first). */
  sharedLabels?: Labels;
  value: number;
  metricName?: string;
}

export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}

  inc(n = 1): void {
    this.value += n;
  }
}

export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

abstract class Family<S extends { labels: Labels }> {
  readonly aggregator = 'sum';
  protected readonly series: S[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    // prom-client's Registry takes any object with its metric interface.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** A new series for these label values, in `labelNames` order. Cache it: this allocates. */
  labels(...values: string[]): S {
    const labels: Labels = {};
    for (let i = 0; i < this.labelNames.length; i++) labels[this.labelNames[i]!] = values[i]!;
    const s = this.make(labels);
    this.series.push(s);
    return s;
  }

  protected abstract make(labels: Labels): S;
  abstract readonly type: 'counter' | 'histogram';
  protected abstract values(): ExportValue[];

  /** prom-client's export shape, built on scrape. */
  async get(): Promise<{ name: string; help: string; type: string; values: ExportValue[]; aggregator: string }> {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: this.aggregator };
  }

  abstract reset(): void;
}

export class FastCounter extends Family<CounterSeries> {
  readonly type = 'counter' as const;

  protected make(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  protected values(): ExportValue[] {
    return this.series.map((s) => ({ labels: s.labels, value: s.value }));
  }

  reset(): void {
    for (const s of this.series) s.value = 0;
  }
}

export class FastHistogram extends Family<HistogramSeries> {
  readonly type = 'histogram' as const;

  constructor(name: string, help: string, labelNames: readonly string[], readonly buckets: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
  }

  protected make(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.buckets);
  }

  protected values(): ExportValue[] {
    const out: ExportValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series) {
      let acc = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        acc += s.counts[i]!;
        out.push({ labels: { le: this.buckets[i]! }, sharedLabels: s.labels, value: acc, metricName: bucket });
      }
      out.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket });
      out.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      out.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return out;
  }

  reset(): void {
    for (const s of this.series) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
