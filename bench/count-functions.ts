/**
 * `bench:count --functions N`: where a window's instructions went, by
 * function. callgrind names what it finds symbols for — V8's builtins
 * (`Builtins_JsonParse…`), its runtime and node's C++, libc — but JIT-compiled
 * JavaScript (and compiled regexes) is anonymous code to it, listed by
 * address. With `--perf-basic-prof` V8 writes `/tmp/perf-PID.map` (start,
 * size, name of every code object it makes), and each such address is looked
 * up there. Inlined functions count for the function they were inlined into;
 * a function optimised twice appears once (tier marks are dropped).
 *
 * Why this and not `--cpu-prof`: a sampling profile of a gateway under load
 * moves with the machine's phase by several percent a frame, while these
 * counts repeat to within ~1 %, so a before/after shows even a 300-instruction
 * change (a regex test, a Map lookup, a clock read).
 */
import { execFile } from 'node:child_process';
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Per-request instructions by name. */
export type ByFunction = Map<string, number>;

export interface CodeRange {
  start: number;
  end: number;
  name: string;
  /** Line in the map: V8 reuses freed code space, and a later entry for an address supersedes an earlier one. */
  order: number;
}

/** Reads V8's map of process `pid` and moves it to `keepAs` (beside the callgrind files, for `callgrind_annotate --tree=caller` lookups). */
function readPerfMap(pid: number, keepAs: string): CodeRange[] {
  const file = `/tmp/perf-${pid}.map`;
  const ranges = parsePerfMap(readFileSync(file, 'utf8'));
  try {
    renameSync(file, keepAs);
  } catch {
    rmSync(file, { force: true }); // another file system: not worth a copy
  }
  return ranges;
}

/** The lines of a perf map (`START SIZE NAME`, hex, the name may hold spaces), sorted by start. */
export function parsePerfMap(text: string): CodeRange[] {
  const ranges: CodeRange[] = [];
  for (const line of text.split('\n')) {
    const a = line.indexOf(' ');
    const b = line.indexOf(' ', a + 1);
    if (a === -1 || b === -1) continue;
    const start = parseInt(line.slice(0, a), 16);
    ranges.push({ start, end: start + parseInt(line.slice(a + 1, b), 16), name: line.slice(b + 1), order: ranges.length });
  }
  return ranges.sort((x, y) => x.start - y.start);
}

/** The most recently written range that holds `addr` (ranges sorted by start; code objects are at most a few MB). */
export function lookup(ranges: CodeRange[], addr: number): string | undefined {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid]!.start <= addr) lo = mid + 1;
    else hi = mid - 1;
  }
  let best: CodeRange | undefined;
  // Every range starting at or before addr, nearest first, until none that far back could reach it.
  for (let i = hi; i >= 0 && addr - ranges[i]!.start < MAX_CODE_BYTES; i--) {
    const r = ranges[i]!;
    if (addr < r.end && (best === undefined || r.order > best.order)) best = r;
  }
  return best?.name;
}

/** Larger than any code object V8 makes for a function or a builtin. */
const MAX_CODE_BYTES = 4 * 1024 * 1024;

/**
 * `JS:*name file:///…/dist/x.js:1:2` → `name dist/x.js:1`: V8's tier marks and
 * the checkout's path go, so a baseline checkout's functions match this one's.
 */
export function shortName(name: string): string {
  return name
    .replace(/^JS:[*~^+]?/, '')
    .replace(/(?:file:\/\/)?\/\S*?\/(dist|node_modules|bench)\//, '$1/')
    .replace(/:(\d+):\d+$/, ':$1');
}

/**
 * Instructions a request, by function, of one callgrind dump (`requests`
 * requests long) of process `pid`; V8's map of it is moved to `keepMap`.
 * `toJs`: native work charged to the JavaScript that called it (chargeToJs).
 */
export async function byFunction(file: string, pid: number, requests: number, keepMap: string, toJs = false): Promise<ByFunction> {
  const ranges = readPerfMap(pid, keepMap);
  const args = toJs ? ['--tree=caller', '--threshold=100', file] : ['--threshold=100', file];
  const { stdout } = await execFileAsync('callgrind_annotate', args, { maxBuffer: 1024 * 1024 * 1024 });
  return toJs ? chargeToJs(stdout, ranges, requests) : attribute(stdout, ranges, requests);
}

/**
 * The name a callgrind_annotate entry (`file:function [object]`, or an anonymous
 * `???:0xADDR [???]`) is listed under, and whether it is JavaScript (JIT code V8
 * named in its map: functions, scripts, regular expressions); undefined for the entry
 * points whose inclusive counts hold everything (main, the event loop).
 */
function nameOf(what: string, ranges: CodeRange[]): { name: string; js: boolean } | undefined {
  const jit = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]$/.exec(what);
  if (jit) {
    const name = lookup(ranges, parseInt(jit[1]!, 16));
    if (name === undefined) return { name: '(JIT code not in the map)', js: false };
    return { name: shortName(name), js: /^(JS|Eval|Script|RegExp):/.test(name) };
  }
  const fn = what.replace(/^[^:]*:/, '').replace(/ \[[^\]]*\]$/, '');
  if (/^(main|\(below main\)|node::Start|node::NodeMainInstance::Run|node::SpinEventLoop|0x000000000001ab70|__libc_start)/.test(fn)) return undefined;
  return { name: fn.length > 110 ? `${fn.slice(0, 107)}…` : fn, js: false };
}

/**
 * `callgrind_annotate`'s per-function lines, a request each: anonymous (JIT)
 * addresses named from the perf map, the same function in several files
 * (inlined from headers) summed, the program total and the entry points that
 * hold everything left out.
 */
export function attribute(annotated: string, ranges: CodeRange[], requests: number): ByFunction {
  const out: ByFunction = new Map();
  for (const line of annotated.split('\n')) {
    const m = /^\s*([\d,]+) \([\s\d.]+%\)\s+(.+)$/.exec(line);
    if (!m || m[2]!.includes('PROGRAM TOTALS')) continue;
    const named = nameOf(m[2]!, ranges);
    if (named !== undefined) out.set(named.name, (out.get(named.name) ?? 0) + Number(m[1]!.replace(/,/g, '')) / requests);
  }
  return out;
}

/**
 * With `--charge-to-js`: each function's own instructions, where the work of V8's
 * builtins and runtime, node's C++ and libc is charged to the JavaScript that called
 * it. The plain table lists `Builtins_KeyedLoadIC_Megamorphic` as one line; this one
 * says whose property reads those were. Read from `callgrind_annotate --tree=caller`:
 * a native function's own count is split among its callers by what their calls into it
 * cost, a native caller's share passed on up the same way until JavaScript takes it.
 * What reaches no JavaScript (libuv's polling, a GC thread's work) stays where it is;
 * so does what goes round a cycle of native calls. The total is the plain table's.
 */
export function chargeToJs(annotated: string, ranges: CodeRange[], requests: number): ByFunction {
  interface Fn {
    self: number;
    js: boolean;
    callers: Map<string, number>;
  }
  const fns = new Map<string, Fn>();
  const fnOf = (name: string, js: boolean): Fn => {
    let f = fns.get(name);
    if (f === undefined) fns.set(name, (f = { self: 0, js, callers: new Map() }));
    return f;
  };
  // One block per function: its callers (`<`), each with what its calls cost, then the function itself (`*`).
  let pending: { name: string; js: boolean; cost: number }[] = [];
  for (const line of annotated.split('\n')) {
    const caller = /^\s*([\d,]+) \([\s\d.]+%\)\s+<\s+(.+?) \([\d,]+x\)( \[[^\]]*\])$/.exec(line);
    if (caller) {
      const named = nameOf(caller[2]! + caller[3]!, ranges);
      if (named !== undefined) pending.push({ ...named, cost: Number(caller[1]!.replace(/,/g, '')) });
      continue;
    }
    const self = /^\s*([\d,]+) \([\s\d.]+%\)\s+\*\s+(.+)$/.exec(line);
    if (self) {
      const named = nameOf(self[2]!, ranges);
      if (named !== undefined) {
        const f = fnOf(named.name, named.js);
        f.self += Number(self[1]!.replace(/,/g, ''));
        for (const c of pending) {
          fnOf(c.name, c.js);
          if (c.name !== named.name) f.callers.set(c.name, (f.callers.get(c.name) ?? 0) + c.cost);
        }
      }
      pending = [];
    } else if (line.trim() === '') pending = [];
  }
  /** Where one of `name`'s own instructions goes: to JavaScript functions, or (key STAYS) nowhere but `name`. */
  const STAYS = '';
  const shares = new Map<string, Map<string, number>>();
  const onPath = new Set<string>();
  const shareOf = (name: string): Map<string, number> => {
    const known = shares.get(name);
    if (known !== undefined) return known;
    const f = fns.get(name)!;
    const out = new Map<string, number>();
    const add = (to: string, w: number) => out.set(to, (out.get(to) ?? 0) + w);
    let total = 0;
    for (const cost of f.callers.values()) total += cost;
    if (f.js || total === 0) add(STAYS, 1);
    else {
      onPath.add(name);
      for (const [c, cost] of f.callers) {
        const w = cost / total;
        if (fns.get(c)!.js) add(c, w);
        else if (onPath.has(c)) add(STAYS, w);
        else for (const [to, v] of shareOf(c)) add(to, w * v);
      }
      onPath.delete(name);
    }
    shares.set(name, out);
    return out;
  };
  const out: ByFunction = new Map();
  for (const [name, f] of fns) {
    if (f.self === 0) continue;
    for (const [to, w] of shareOf(name)) {
      const at = to === STAYS ? name : to;
      out.set(at, (out.get(at) ?? 0) + (f.self * w) / requests);
    }
  }
  return out;
}

const fmt = (n: number) => (n >= 0 ? ` ${Math.round(n).toLocaleString('en-US')}` : `−${Math.round(-n).toLocaleString('en-US')}`);

/** The `top` largest entries; with `base`, the `top` largest differences from it instead. */
export function functionTable(label: string, own: ByFunction, top: number, base?: { label: string; counts: ByFunction }, unit = 'instructions'): string {
  const lines: string[] = [];
  if (base === undefined) {
    lines.push(`\n#### ${label}: ${unit} a request by function (top ${top})\n`, `| ${unit} | function |`, '| ---: | --- |');
    for (const [name, n] of [...own].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`| ${fmt(n)} | \`${name}\` |`);
    return lines.join('\n');
  }
  lines.push(`\n#### ${label} against ${base.label}: the largest differences a request (top ${top})\n`, `| difference | ${label} | ${base.label} | function |`, '| ---: | ---: | ---: | --- |');
  const names = new Set([...own.keys(), ...base.counts.keys()]);
  const rows = [...names].map((name) => ({ name, a: own.get(name) ?? 0, b: base.counts.get(name) ?? 0 }));
  rows.sort((x, y) => Math.abs(y.a - y.b) - Math.abs(x.a - x.b));
  for (const r of rows.slice(0, top)) lines.push(`| ${fmt(r.a - r.b)} | ${fmt(r.a)} | ${fmt(r.b)} | \`${r.name}\` |`);
  return lines.join('\n');
}
