/**
 * `npm run bench:alloc`: the bytes of JavaScript heap a request makes each
 * gateway allocate, and by which function. What a request leaves behind is
 * garbage the young-generation collector runs for, and fresh memory every
 * allocation writes to (cache misses the instruction count cannot see), so it
 * is a cost of its own beside `bench:count`'s instructions.
 *
 * How: each gateway (one at a time, unpinned) gets `--warmup` seconds of load,
 * then V8's sampling heap profiler runs for `--seconds` of the same load,
 * keeping the samples of objects the GC already took (the preloaded probe,
 * bench/probe.mjs, drives it through the inspector). A sample stands for
 * `--interval` bytes on average: figures under ~100 bytes a request are
 * noise. Buffers' contents live outside the heap and are not counted; their
 * objects are.
 *
 *   npm run bench:alloc                                   # bare proxy and Switchyard, buffered: ~30 s
 *   npm run bench:alloc -- --case stream20 --top 40
 *   npm run bench:alloc -- --paths switchyard,baseline --baseline DIR   # a change's allocations, before/after
 *
 * The first path gets its top N functions; every other path its N largest
 * differences from the first.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chatBody, type CaseName } from './bodies.js';
import { functionTable, type ByFunction } from './count-functions.js';
import { bytesByFunction, type ProfileNode } from './heap-profile.js';
import { runLoad } from './loadgen.js';
import { startMock } from './mock-upstream.js';
import { freePort, httpRequest, LABEL, loadOptions, pathsArg, positiveArg, startGateway, unpinnedGateway, type PathName } from './paths.js';

const { values: args } = parseArgs({
  options: {
    ...loadOptions('3'),
    interval: { type: 'string', default: '1024' },
    top: { type: 'string', default: '30' },
  },
});
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Checkout roots whose prefix file names lose (with the slash after them). */
const ROOTS = [ROOT, ...(args.baseline ? [resolve(args.baseline)] : [])].map((r) => `${r}/`);
const positive = positiveArg;
const CASE = args.case as CaseName;
if (CASE !== 'buffered' && CASE !== 'stream20') throw new Error(`--case: '${args.case}' is not profiled (buffered, stream20)`);
const paths = pathsArg(args.paths!, args.baseline);

/** The probe answers a failure with its message. */
function probeDid(reply: { error?: string }): void {
  if (reply.error !== undefined) throw new Error(`the gateway's probe could not profile: ${reply.error}`);
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), 'switchyard-alloc-'));
  const mock = startMock();
  const mockPort = await mock.listening;
  const stream = CASE === 'stream20';
  const connections = positive('connections', args.connections);
  console.log(`Switchyard allocation profile — ${new Date().toISOString()}`);
  console.log(
    `${stream ? '20-chunk streams' : 'buffered chat'}, ${connections} connections; ${args.warmup} s warm-up, then ${args.seconds} s sampled every ~${args.interval} bytes; profiles in ${logDir}`,
  );
  const results: { path: PathName; requests: number; total: number; byFunction: ByFunction }[] = [];
  try {
    for (const name of paths) {
      const port = await freePort();
      const g = await startGateway(name, unpinnedGateway(args, { root: ROOT, mockPort, port, logDir }));
      try {
        const request = httpRequest(g, port, chatBody(CASE, g.model));
        const spec = (seconds: number) => ({ port, request, connections, durationMs: seconds * 1000, stream });
        await runLoad(spec(positive('warmup', args.warmup)));
        probeDid(await g.ask('alloc-start', 'alloc-started', { intervalBytes: positive('interval', args.interval) }));
        const res = await runLoad(spec(positive('seconds', args.seconds)));
        const file = join(logDir, `${name}.heapprofile`);
        probeDid(await g.ask('alloc-stop', 'alloc-stopped', { file }));
        if (res.errors > 0 || res.completed === 0) throw new Error(`${name}: ${res.errors} errors, ${res.completed} completed (${res.errorKinds.join('; ')})`);
        const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode };
        results.push({ path: name, requests: res.completed, ...bytesByFunction(profile.head, res.completed, ROOTS) });
      } finally {
        await g.stop();
      }
    }
  } finally {
    mock.server.close();
  }
  const first = results[0]!;
  console.log('\n| path | bytes allocated a request | requests sampled | vs first |\n| --- | ---: | ---: | ---: |');
  for (const r of results) console.log(`| ${LABEL[r.path]} | ${Math.round(r.total).toLocaleString('en-US')} | ${r.requests.toLocaleString('en-US')} | ${(r.total / first.total).toFixed(2)}× |`);
  const top = positive('top', args.top);
  console.log(functionTable(LABEL[first.path], first.byFunction, top, undefined, 'bytes'));
  for (const r of results.slice(1)) console.log(functionTable(LABEL[r.path], r.byFunction, top, { label: LABEL[first.path], counts: first.byFunction }, 'bytes'));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
