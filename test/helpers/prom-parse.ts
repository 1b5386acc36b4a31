/**
 * A small, strict parser of the Prometheus text exposition format (0.0.4),
 * independent of prom-client so tests check what a real scraper would read.
 * It throws on anything a scraper would reject or that signals a bug: bad
 * names, bad escapes, duplicate series, samples of an undeclared or
 * interleaved family, histogram buckets that are not cumulative or whose
 * `+Inf` bucket disagrees with `_count`.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: Sample[];
}

export type Exposition = Map<string, Family>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Exposition {
  const families: Exposition = new Map();
  const seenSeries = new Set<string>();
  const closed = new Set<string>();
  let current: Family | undefined;

  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((line, i) => {
    const at = `line ${i + 1}`;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!m) return; // plain comment
      const [, kind, name, rest = ''] = m;
      if (!METRIC_NAME.test(name!)) throw new Error(`${at}: bad metric name ${name}`);
      if (closed.has(name!)) throw new Error(`${at}: family ${name} appears twice (interleaved)`);
      if (current && current.name !== name) closed.add(current.name);
      let fam = families.get(name!);
      if (!fam) {
        fam = { name: name!, type: 'untyped', help: undefined, samples: [] };
        families.set(name!, fam);
      }
      if (kind === 'HELP') {
        if (fam.help !== undefined) throw new Error(`${at}: second HELP for ${name}`);
        fam.help = unescapeHelp(rest, at);
      } else {
        if (fam.samples.length > 0) throw new Error(`${at}: TYPE for ${name} after its samples`);
        if (!TYPES.has(rest as MetricType)) throw new Error(`${at}: unknown type ${rest}`);
        fam.type = rest as MetricType;
      }
      current = fam;
      return;
    }
    const sample = parseSample(line, at);
    const fam = familyOf(sample.name, families);
    if (!fam) throw new Error(`${at}: sample ${sample.name} has no HELP/TYPE family`);
    if (closed.has(fam.name)) throw new Error(`${at}: family ${fam.name} interleaved`);
    if (current && current !== fam) closed.add(current.name);
    current = fam;
    const seriesKey = sample.name + JSON.stringify(Object.entries(sample.labels).sort());
    if (seenSeries.has(seriesKey)) throw new Error(`${at}: duplicate series ${seriesKey}`);
    seenSeries.add(seriesKey);
    fam.samples.push(sample);
  });

  for (const fam of families.values()) if (fam.type === 'histogram') checkHistogram(fam);
  return families;
}

/** The value of the one sample with exactly these labels, or undefined. */
export function sampleValue(exp: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const fam of exp.values()) {
    for (const s of fam.samples) {
      if (s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want) return s.value;
    }
  }
  return undefined;
}

export function samplesNamed(exp: Exposition, name: string): Sample[] {
  const out: Sample[] = [];
  for (const fam of exp.values()) for (const s of fam.samples) if (s.name === name) out.push(s);
  return out;
}

/** The declared family a sample belongs to: its own name, or a histogram/summary's `_bucket`/`_sum`/`_count`. */
function familyOf(sampleName: string, families: Exposition): Family | undefined {
  const exact = families.get(sampleName);
  if (exact && exact.type !== 'histogram') return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const fam = families.get(sampleName.slice(0, -suffix.length));
    if (fam && (fam.type === 'histogram' || (fam.type === 'summary' && suffix !== '_bucket'))) return fam;
  }
  return undefined;
}

function parseSample(line: string, at: string): Sample {
  let i = 0;
  while (i < line.length && line[i] !== '{' && line[i] !== ' ') i++;
  const name = line.slice(0, i);
  if (!METRIC_NAME.test(name)) throw new Error(`${at}: bad metric name ${JSON.stringify(name)}`);
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      if (line[i] === '}') {
        i++;
        break;
      }
      const eq = line.indexOf('=', i);
      if (eq === -1) throw new Error(`${at}: label without '='`);
      const lname = line.slice(i, eq);
      if (!LABEL_NAME.test(lname)) throw new Error(`${at}: bad label name ${JSON.stringify(lname)}`);
      if (lname in labels) throw new Error(`${at}: repeated label ${lname}`);
      if (line[eq + 1] !== '"') throw new Error(`${at}: label value not quoted`);
      let j = eq + 2;
      let value = '';
      for (;;) {
        const c = line[j];
        if (c === undefined) throw new Error(`${at}: unterminated label value`);
        if (c === '"') break;
        if (c === '\\') {
          const e = line[j + 1];
          if (e === '\\') value += '\\';
          else if (e === '"') value += '"';
          else if (e === 'n') value += '\n';
          else throw new Error(`${at}: bad escape \\${e}`);
          j += 2;
          continue;
        }
        value += c;
        j++;
      }
      labels[lname] = value;
      i = j + 1;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`${at}: expected ',' or '}' after label ${lname}`);
    }
  }
  if (line[i] !== ' ') throw new Error(`${at}: expected a space before the value`);
  const parts = line.slice(i + 1).split(' ');
  if (parts.length > 2 || parts[0] === '') throw new Error(`${at}: expected "value [timestamp]"`);
  const value = parseValue(parts[0]!, at);
  if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`${at}: bad timestamp ${parts[1]}`);
  return { name, labels, value };
}

function parseValue(s: string, at: string): number {
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  if (!FLOAT.test(s)) throw new Error(`${at}: bad value ${JSON.stringify(s)}`);
  return Number(s);
}

function unescapeHelp(s: string, at: string): string {
  return s.replace(/\\(.)/g, (_, e: string) => {
    if (e === '\\') return '\\';
    if (e === 'n') return '\n';
    throw new Error(`${at}: bad escape in HELP \\${e}`);
  });
}

function checkHistogram(fam: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of fam.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { buckets: [] }));
    if (s.name === `${fam.name}_bucket`) {
      if (le === undefined) throw new Error(`${fam.name}: bucket without le`);
      g.buckets.push([parseValue(le, fam.name), s.value]);
    } else if (s.name === `${fam.name}_count`) g.count = s.value;
    else if (s.name === `${fam.name}_sum`) g.sum = s.value;
    else throw new Error(`${fam.name}: unexpected sample ${s.name}`);
  }
  for (const [key, g] of groups) {
    if (g.count === undefined || g.sum === undefined) throw new Error(`${fam.name}${key}: missing _count or _sum`);
    const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.length === 0 || sorted[sorted.length - 1]![0] !== Infinity) throw new Error(`${fam.name}${key}: no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${fam.name}${key}: buckets not cumulative`);
    }
    if (sorted[sorted.length - 1]![1] !== g.count) throw new Error(`${fam.name}${key}: +Inf bucket != _count`);
  }
}
