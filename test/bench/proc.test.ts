/**
 * The /proc readings behind CPU a request, socket calls a request, RSS and
 * steal: parsed from text shaped as Linux writes it, and the sampling of
 * steal and peak RSS driven by fake timers.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  cpuShares,
  parseAllowedCpus,
  parseCpuJiffies,
  parseIoCalls,
  parseRssMb,
  parseStatCpuUs,
  rssPeak,
  stealWatch,
  type CpuJiffies,
} from '../../bench/proc.js';

describe('parseStatCpuUs', () => {
  it('sums utime and stime (fields 14 and 15) at 10 ms a tick, past a command name with spaces and parentheses', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime …
    const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 75 9 9 20 0 11 0 12345 1000000 2000\n';
    // 250 + 75 ticks; the children's cutime and cstime (9 + 9) are not the gateway's.
    expect(parseStatCpuUs(stat)).toBe(325 * 10_000);
  });
});

describe('parseIoCalls', () => {
  it('reads syscr as reads and syscw as writes, not rchar/wchar', () => {
    const io = 'rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n';
    expect(parseIoCalls(io)).toEqual({ reads: 632687, writes: 632675 });
  });

  it('is NaN for a field that is not there', () => {
    const r = parseIoCalls('rchar: 1\nsyscr: 5\n');
    expect(r.reads).toBe(5);
    expect(r.writes).toBeNaN();
  });
});

describe('parseCpuJiffies', () => {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const stat = [
    'cpu  1000 20 300 4000 50 60 70 80 500 0',
    'cpu0 600 10 200 1000 25 30 40 50 300 0',
    // Ahead of cpu1 here, so only an exact name match finds cpu1.
    'cpu10 9 9 9 9 9 9 9 9 0 0',
    'cpu1 100 2 30 400 5 6 7 8 50 0',
    'intr 123 4 5',
    'ctxt 999',
  ].join('\n');

  it("totals one CPU's first eight fields, leaving out guest time (already in user)", () => {
    // 100 + 2 + 30 + 400 + 5 + 6 + 7 + 8
    expect(parseCpuJiffies(stat, '1')).toEqual({ total: 558, softirq: 7, steal: 8 });
  });

  it('null reads the all-CPU line, whose name is followed by two spaces', () => {
    expect(parseCpuJiffies(stat, null)).toEqual({ total: 5580, softirq: 70, steal: 80 });
  });

  it('cpu1 is not cpu10, and a CPU that is not there reads NaN', () => {
    expect(parseCpuJiffies(stat, '10').total).toBe(72);
    const none = parseCpuJiffies(stat, '7');
    expect([none.total, none.steal, none.softirq].every(Number.isNaN)).toBe(true);
    // Without the all-CPU line, null finds nothing rather than cpu0.
    expect(parseCpuJiffies(stat.replace(/^cpu .*\n/, ''), null).total).toBeNaN();
  });

  it.runIf(existsSync('/proc/stat'))("fits this machine's /proc/stat", () => {
    const j = parseCpuJiffies(readFileSync('/proc/stat', 'latin1'), null);
    expect(j.total).toBeGreaterThan(0);
    expect(j.steal + j.softirq).toBeLessThanOrEqual(j.total);
  });
});

describe('cpuShares', () => {
  it("gives steal and softirq as % of the CPU's time between two readings", () => {
    const a: CpuJiffies = { total: 1000, steal: 10, softirq: 20 };
    const b: CpuJiffies = { total: 3000, steal: 110, softirq: 320 };
    // 100 and 300 jiffies of 2000
    expect(cpuShares(a, b)).toEqual({ stealPct: 5, softirqPct: 15 });
  });

  it('is NaN when no time passed, not a division by zero', () => {
    const a: CpuJiffies = { total: 1000, steal: 10, softirq: 20 };
    const r = cpuShares(a, a);
    expect(r.stealPct).toBeNaN();
    expect(r.softirqPct).toBeNaN();
  });
});

describe('parseRssMb and parseAllowedCpus', () => {
  const status = 'Name:\tnode\nState:\tS (sleeping)\nVmPeak:\t 1200000 kB\nVmRSS:\t   102400 kB\nCpus_allowed:\t2\nCpus_allowed_list:\t1\n';

  it('reads VmRSS (not VmPeak) in MB', () => {
    expect(parseRssMb(status)).toBe(100);
  });

  it('is NaN without VmRSS (a process that exited and was not yet reaped)', () => {
    expect(parseRssMb('Name:\tnode\nState:\tZ (zombie)\n')).toBeNaN();
  });

  it('reads Cpus_allowed_list (not the Cpus_allowed mask), or ? without it', () => {
    expect(parseAllowedCpus(status)).toBe('1');
    expect(parseAllowedCpus(status.replace('Cpus_allowed_list:\t1', 'Cpus_allowed_list:\t0-3,6'))).toBe('0-3,6');
    expect(parseAllowedCpus('Name:\tnode\n')).toBe('?');
  });
});

describe('sampling', () => {
  afterEach(() => vi.useRealTimers());

  it('stealWatch: the share over the whole window, and the most stolen in one sample (10 ms a jiffy)', () => {
    vi.useFakeTimers();
    const readings: CpuJiffies[] = [
      { total: 0, steal: 0, softirq: 0 }, // at start
      { total: 100, steal: 2, softirq: 1 },
      { total: 200, steal: 7, softirq: 2 }, // 5 jiffies stolen in this sample: 50 ms
      { total: 300, steal: 8, softirq: 3 },
      { total: 400, steal: 8, softirq: 4 }, // at stop
    ];
    const read = vi.fn((cpu: string | null) => {
      expect(cpu).toBe('1');
      return readings.shift()!;
    });
    const w = stealWatch('1', 100, read);
    vi.advanceTimersByTime(300);
    expect(w.stop()).toEqual({ stealPct: 2, softirqPct: 1, maxStealMs: 50 });
    expect(read).toHaveBeenCalledTimes(5);
    // Stopped: no more samples.
    vi.advanceTimersByTime(1000);
    expect(read).toHaveBeenCalledTimes(5);
  });

  it('stealWatch counts the stretch between the last sample and stop', () => {
    vi.useFakeTimers();
    const readings: CpuJiffies[] = [
      { total: 0, steal: 0, softirq: 0 },
      { total: 100, steal: 1, softirq: 0 },
      { total: 150, steal: 31, softirq: 0 }, // at stop, half a sample later: 300 ms stolen
    ];
    const w = stealWatch(null, 100, () => readings.shift()!);
    vi.advanceTimersByTime(150);
    expect(w.stop().maxStealMs).toBe(300);
  });

  it('rssPeak keeps the highest reading, through a failed read, including the one at stop', () => {
    vi.useFakeTimers();
    const readings: (number | Error)[] = [80, 150, new Error('ENOENT'), 120, 130];
    const read = () => {
      const r = readings.shift()!;
      if (r instanceof Error) throw r;
      return r;
    };
    const p = rssPeak(42, 200, read);
    vi.advanceTimersByTime(600);
    expect(p.stop()).toBe(150);

    const late = [80, 90, 170];
    const q = rssPeak(42, 200, () => late.shift()!);
    vi.advanceTimersByTime(200);
    expect(q.stop()).toBe(170);
  });

  it('rssPeak keeps what it saw when the process is gone at stop', () => {
    vi.useFakeTimers();
    let gone = false;
    const p = rssPeak(42, 200, () => {
      if (gone) throw new Error('ENOENT');
      return 99;
    });
    gone = true;
    expect(p.stop()).toBe(99);
  });
});
