/**
 * Summarise V8 .cpuprofile files (from `npm run bench -- --cpu-prof DIR`):
 * top frames by self time, self time by source (our files, node internals,
 * each dependency), and our own functions by inclusive time. Optionally writes
 * folded stacks (`--folded FILE`) for any flame-graph renderer
 * (flamegraph.pl, speedscope, inferno).
 *
 *   npx tsx bench/profile-summary.ts DIR/*.cpuprofile [--top 40] [--folded out.folded]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' }, folded: { type: 'string' } } });
const TOP = Number(values.top);

/** Where a frame's code lives: our source, a dependency, node itself, or V8. */
function origin(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const dist = url.indexOf('/dist/');
  if (dist !== -1 && !url.includes('node_modules')) return 'switchyard ' + url.slice(dist + 1).split('/').slice(0, 2).join('/');
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + 13).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  return url;
}
const label = (n: Node) => {
  const f = n.callFrame;
  const file = f.url ? f.url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^file:\/\//, '') : '';
  return `${f.functionName || '(anonymous)'} ${file}${file ? ':' + (f.lineNumber + 1) : ''}`;
};

const self = new Map<string, number>();
const bySource = new Map<string, number>();
const inclusiveOurs = new Map<string, number>();
const folded = new Map<string, number>();
let total = 0;

for (const file of positionals) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const time = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) time.set(p.samples[i]!, (time.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  for (const [id, us] of time) {
    const n = byId.get(id)!;
    if (n.callFrame.functionName === '(idle)') continue;
    total += us;
    const l = label(n);
    self.set(l, (self.get(l) ?? 0) + us);
    const src = origin(n.callFrame.url, n.callFrame.functionName);
    bySource.set(src, (bySource.get(src) ?? 0) + us);
    // Walk up: inclusive time of each of our functions (once per stack), and the folded stack.
    const stack: string[] = [];
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const c = byId.get(cur)!;
      if (c.callFrame.functionName === '(root)') break;
      const cl = label(c);
      stack.push(cl);
      if (origin(c.callFrame.url, '').startsWith('switchyard') && !seen.has(cl)) {
        seen.add(cl);
        inclusiveOurs.set(cl, (inclusiveOurs.get(cl) ?? 0) + us);
      }
    }
    if (values.folded) {
      const key = stack.reverse().join(';');
      folded.set(key, (folded.get(key) ?? 0) + us);
    }
  }
}

const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
const print = (title: string, m: Map<string, number>, n = TOP) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${pct(us)}  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
};
console.log(`busy time sampled: ${(total / 1000).toFixed(0)} ms (idle excluded)`);
print('Self time by source', bySource, 25);
print('Top frames by self time', self);
print("Switchyard's own functions by inclusive time", inclusiveOurs);
if (values.folded) {
  writeFileSync(values.folded, [...folded].map(([k, us]) => `${k} ${Math.round(us)}`).join('\n') + '\n');
  console.log(`\nfolded stacks written to ${values.folded}`);
}
