/**
 * `npm run bench:gc`: what a request costs each gateway's young-generation
 * collector. A scavenge's work is what is still alive when it runs (copied once
 * within the young generation, then promoted), not what was allocated, so a
 * gateway that allocates more need not collect for longer: this prints both,
 * a request's bytes allocated, survived and promoted, and the scavenges' main-thread
 * pause a thousand requests, from V8's `--trace-gc-nvp` lines over a window of load
 * after a warm-up. Unpinned, one gateway at a time; timings vary with the machine's
 * phase, the byte counts do not.
 *
 *   npm run bench:gc                                    # bare proxy and Switchyard, buffered: ~30 s
 *   npm run bench:gc -- --case stream20
 *   npm run bench:gc -- --paths switchyard,baseline --baseline DIR
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chatBody, type CaseName } from './bodies.js';
import { runLoad } from './loadgen.js';
import { startMock } from './mock-upstream.js';
import { freePort, httpRequest, LABEL, loadOptions, pathsArg, positiveArg, startGateway, unpinnedGateway } from './paths.js';

const { values: args } = parseArgs({ options: loadOptions('5') });
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const positive = positiveArg;
const CASE = args.case as CaseName;
if (CASE !== 'buffered' && CASE !== 'stream20') throw new Error(`--case: '${args.case}' is not measured (buffered, stream20)`);
const paths = pathsArg(args.paths!, args.baseline);

interface GcTotals {
  scavenges: number;
  fullCollections: number;
  allocated: number;
  survived: number;
  promoted: number;
  scavengePauseMs: number;
}

const field = (line: string, name: string): number => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);

/** Sums the `--trace-gc-nvp` lines (one a collection: `gc=s` a scavenge, `gc=ms`/`gc=mc` a full one). */
function gcTotals(lines: readonly string[]): GcTotals {
  const t: GcTotals = { scavenges: 0, fullCollections: 0, allocated: 0, survived: 0, promoted: 0, scavengePauseMs: 0 };
  for (const l of lines) {
    if (l.includes(' gc=s ')) {
      t.scavenges++;
      t.allocated += field(l, 'allocated');
      t.survived += field(l, 'new_space_survived');
      t.promoted += field(l, 'promoted');
      t.scavengePauseMs += field(l, 'pause');
    } else if (/ gc=m[sc] /.test(l)) t.fullCollections++;
  }
  return t;
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), 'switchyard-gc-'));
  const mock = startMock();
  const mockPort = await mock.listening;
  const stream = CASE === 'stream20';
  const connections = positive('connections', args.connections);
  console.log(`Switchyard young-generation cost — ${new Date().toISOString()}`);
  console.log(`${stream ? '20-chunk streams' : 'buffered chat'}, ${connections} connections; ${args.warmup} s warm-up, then ${args.seconds} s measured; logs in ${logDir}\n`);
  console.log('| path | requests | scavenges | allocated a request | survived a request | promoted a request | scavenge pause per 1,000 requests | full collections |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  try {
    for (const name of paths) {
      const port = await freePort();
      const g = await startGateway(name, unpinnedGateway(args, { root: ROOT, mockPort, port, logDir }, ['--trace-gc-nvp']));
      try {
        const request = httpRequest(g, port, chatBody(CASE, g.model));
        const spec = (seconds: number) => ({ port, request, connections, durationMs: seconds * 1000, stream });
        const log = join(logDir, `${name}.log`);
        await runLoad(spec(positive('warmup', args.warmup)));
        const from = readFileSync(log, 'utf8').split('\n').length - 1;
        const res = await runLoad(spec(positive('seconds', args.seconds)));
        if (res.errors > 0 || res.completed === 0) throw new Error(`${name}: ${res.errors} errors, ${res.completed} completed (${res.errorKinds.join('; ')})`);
        // The window's lines: a line half written at the start belongs to the warm-up.
        const t = gcTotals(readFileSync(log, 'utf8').split('\n').slice(from));
        const per = (v: number) => Math.round(v / res.completed).toLocaleString('en-US');
        console.log(
          `| ${LABEL[name]} | ${res.completed.toLocaleString('en-US')} | ${t.scavenges} | ${per(t.allocated)} B | ${per(t.survived)} B | ${per(t.promoted)} B | ${((t.scavengePauseMs / res.completed) * 1000).toFixed(2)} ms | ${t.fullCollections} |`,
        );
      } finally {
        await g.stop();
      }
    }
  } finally {
    mock.server.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
