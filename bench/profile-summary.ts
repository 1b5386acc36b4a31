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
import { summarise, type Profile } from './cpu-profile.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' }, folded: { type: 'string' } } });
const TOP = Number(values.top);

// One file parsed at a time: a profile of a long run is tens of MB.
function* profiles(): Generator<Profile> {
  for (const file of positionals) yield JSON.parse(readFileSync(file, 'utf8')) as Profile;
}
const { total, self, bySource, inclusiveOurs, folded } = summarise(profiles(), Boolean(values.folded));

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
