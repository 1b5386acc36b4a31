/**
 * What /proc says about a process: CPU time (all threads, user + system) and
 * resident memory. Linux only, like the benchmark's core pinning.
 */
import { readFileSync } from 'node:fs';

const TICK_US = 1_000_000 / 100; // USER_HZ is 100 on Linux

/** utime + stime of the whole process, in µs (10 ms resolution). */
export function cpuUs(pid: number): number {
  return parseStatCpuUs(readFileSync(`/proc/${pid}/stat`, 'latin1'));
}

/** utime + stime in µs from the text of /proc/PID/stat. */
export function parseStatCpuUs(stat: string): number {
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
  return parseIoCalls(readFileSync(`/proc/${pid}/io`, 'latin1'));
}

/** `syscr` and `syscw` from the text of /proc/PID/io (NaN for one missing). */
export function parseIoCalls(io: string): { reads: number; writes: number } {
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
  return parseCpuJiffies(readFileSync('/proc/stat', 'latin1'), cpu);
}

/** One CPU's line (null: the `cpu` line of all of them) of the text of /proc/stat; NaN if it has none. */
export function parseCpuJiffies(procStat: string, cpu: string | null): CpuJiffies {
  const name = cpu === null ? 'cpu' : `cpu${cpu}`;
  for (const line of procStat.split('\n')) {
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
export function stealWatch(
  cpu: string | null,
  everyMs = 100,
  // Replaceable so a test can feed readings without /proc.
  read: (cpu: string | null) => CpuJiffies = cpuJiffies,
): { stop(): { stealPct: number; softirqPct: number; maxStealMs: number } } {
  const first = read(cpu);
  let prev = first;
  let maxStealMs = 0;
  const t = setInterval(() => {
    const now = read(cpu);
    maxStealMs = Math.max(maxStealMs, (now.steal - prev.steal) * (TICK_US / 1000));
    prev = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(t);
      const last = read(cpu);
      maxStealMs = Math.max(maxStealMs, (last.steal - prev.steal) * (TICK_US / 1000));
      return { ...cpuShares(first, last), maxStealMs };
    },
  };
}

/** Resident set size in MB. */
export function rssMb(pid: number): number {
  return parseRssMb(readFileSync(`/proc/${pid}/status`, 'latin1'));
}

/** VmRSS of the text of /proc/PID/status, in MB (NaN if it has none: a zombie). */
export function parseRssMb(status: string): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The CPUs this process may run on, as `taskset` prints them. */
export function allowedCpus(pid: number | 'self' = 'self'): string {
  return parseAllowedCpus(readFileSync(`/proc/${pid}/status`, 'latin1'));
}

/** Cpus_allowed_list of the text of /proc/PID/status ('?' if it has none). */
export function parseAllowedCpus(status: string): string {
  const m = /Cpus_allowed_list:\s+(\S+)/.exec(status);
  return m ? m[1]! : '?';
}

/** Samples RSS every `everyMs` and keeps the peak. */
export function rssPeak(
  pid: number,
  everyMs = 200,
  // Replaceable so a test can feed readings without /proc.
  read: (pid: number) => number = rssMb,
): { stop(): number } {
  let peak = read(pid);
  const t = setInterval(() => {
    try {
      peak = Math.max(peak, read(pid));
    } catch {
      // The process is gone: keep what was seen.
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(t);
      try {
        peak = Math.max(peak, read(pid));
      } catch {
        // gone
      }
      return peak;
    },
  };
}
