/**
 * What /proc says about a process: CPU time (all threads, user + system) and
 * resident memory. Linux only, like the benchmark's core pinning.
 */
import { readFileSync } from 'node:fs';

const TICK_US = 1_000_000 / 100; // USER_HZ is 100 on Linux

/** utime + stime of the whole process, in µs (10 ms resolution). */
export function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  // Fields after the command name, which may itself hold spaces and parentheses.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state): utime is field 14, stime field 15.
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

/**
 * Read and write system calls the process made so far (`syscr`, `syscw` of
 * /proc/PID/io: read/readv and write/writev, which is how libuv moves socket
 * data). How many a request costs shows how well a path batches its socket
 * work: the same answer in fewer, larger writes costs less kernel time on both
 * sides.
 */
export function ioCalls(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'latin1');
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? NaN);
  return { reads: field('syscr'), writes: field('syscw') };
}

/** Jiffies one CPU spent so far, from /proc/stat: all of them, and the two a process's own CPU time never shows. */
export interface CpuJiffies {
  total: number;
  /** Taken by the hypervisor for other guests: this VM's CPU was not running at all. */
  steal: number;
  /** Interrupt work (loopback TCP's receive side runs here), charged to no process. */
  softirq: number;
}

/**
 * `cpu` of /proc/stat (null: all CPUs). A round whose gateway core lost time
 * to steal measured a slower machine, not a slower gateway: the figures of a
 * "slow phase" can be told apart from a change in the code.
 */
export function cpuJiffies(cpu: string | null): CpuJiffies {
  const name = cpu === null ? 'cpu' : `cpu${cpu}`;
  for (const line of readFileSync('/proc/stat', 'latin1').split('\n')) {
    const f = line.split(/\s+/);
    if (f[0] !== name) continue;
    // user nice system idle iowait irq softirq steal (guest and guest_nice are already in user and nice).
    const n = f.slice(1, 9).map(Number);
    return { total: n.reduce((a, b) => a + b, 0), steal: n[7]!, softirq: n[6]! };
  }
  return { total: NaN, steal: NaN, softirq: NaN };
}

/** Steal and softirq as % of the CPU's time between two readings. */
export function cpuShares(a: CpuJiffies, b: CpuJiffies): { stealPct: number; softirqPct: number } {
  const t = b.total - a.total;
  return t > 0 ? { stealPct: ((b.steal - a.steal) / t) * 100, softirqPct: ((b.softirq - a.softirq) / t) * 100 } : { stealPct: NaN, softirqPct: NaN };
}

/**
 * Watches one CPU's steal over a window: its share, and the most stolen in any
 * one sample (a pause of hundreds of ms in a gateway's event loop that lines up
 * with as much steal was the hypervisor's, not the gateway's).
 */
export function stealWatch(cpu: string | null, everyMs = 100): { stop(): { stealPct: number; softirqPct: number; maxStealMs: number } } {
  const first = cpuJiffies(cpu);
  let prev = first;
  let maxStealMs = 0;
  const t = setInterval(() => {
    const now = cpuJiffies(cpu);
    maxStealMs = Math.max(maxStealMs, (now.steal - prev.steal) * (TICK_US / 1000));
    prev = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(t);
      const last = cpuJiffies(cpu);
      maxStealMs = Math.max(maxStealMs, (last.steal - prev.steal) * (TICK_US / 1000));
      return { ...cpuShares(first, last), maxStealMs };
    },
  };
}

/** Resident set size in MB. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The CPUs this process may run on, as `taskset` prints them. */
export function allowedCpus(pid: number | 'self' = 'self'): string {
  const m = /Cpus_allowed_list:\s+(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  return m ? m[1]! : '?';
}

/** Samples RSS every `everyMs` and keeps the peak. */
export function rssPeak(pid: number, everyMs = 200): { stop(): number } {
  let peak = rssMb(pid);
  const t = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(pid));
    } catch {
      // The process is gone: keep what was seen.
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(t);
      try {
        peak = Math.max(peak, rssMb(pid));
      } catch {
        // gone
      }
      return peak;
    },
  };
}
