/**
 * The arithmetic of `profile-summary.ts` (a script: it reads its arguments
 * when imported): where a V8 .cpuprofile's frames come from and where their
 * sampled time went.
 */

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: our source, a dependency, node itself, or V8. */
export function origin(url: string, name: string): string {
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

/** `name file:line` (line 1-based), the checkout's path cut at dist/ or node_modules/. */
export const label = (n: ProfileNode) => {
  const f = n.callFrame;
  const file = f.url ? f.url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^file:\/\//, '') : '';
  return `${f.functionName || '(anonymous)'} ${file}${file ? ':' + (f.lineNumber + 1) : ''}`;
};

/** Sampled µs (idle left out): by frame, by source, our functions inclusive, and by folded stack. */
export interface ProfileSummary {
  total: number;
  self: Map<string, number>;
  bySource: Map<string, number>;
  inclusiveOurs: Map<string, number>;
  folded: Map<string, number>;
}

/** Sums the profiles' samples; `folded` also builds the folded stacks (root first, `;` between frames). */
export function summarise(profiles: Iterable<Profile>, folded: boolean): ProfileSummary {
  const self = new Map<string, number>();
  const bySource = new Map<string, number>();
  const inclusiveOurs = new Map<string, number>();
  const stacks = new Map<string, number>();
  let total = 0;
  for (const p of profiles) {
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
      if (folded) {
        const key = stack.reverse().join(';');
        stacks.set(key, (stacks.get(key) ?? 0) + us);
      }
    }
  }
  return { total, self, bySource, inclusiveOurs, folded: stacks };
}
