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
