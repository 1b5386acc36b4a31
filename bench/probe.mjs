/**
 * Preloaded (`node --import`) into every gateway the benchmark runs — the bare
 * proxy, Switchyard and Portkey alike — so event-loop lag is measured the same
 * way for each without adding a route to any of them. Over the IPC channel the
 * orchestrator opened: `lag-start` resets and enables the histogram, `lag`
 * reports it (ms) and disables it, so it costs nothing outside the hold case;
 * with it, the garbage collector's pauses over the same window (the longest,
 * its kind, and the total), so a lag spike can be told from a collection;
 * `memory` reports the process's memory and V8 heap spaces (MB); `alloc-start`
 * and `alloc-stop` sample every allocation in between, collected or not (V8's
 * sampling heap profiler through the inspector), and write the profile to the
 * file `alloc-stop` names (`npm run bench:alloc`).
 */
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { writeFileSync } from 'node:fs';

if (process.send) {
  // The histogram records whole sampling intervals: lateness is the value minus the resolution.
  const RESOLUTION_MS = 10;
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  const KIND = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
  };
  let gc = { maxMs: 0, maxKind: '', totalMs: 0 };
  const onGc = (entries) => {
    for (const e of entries) {
      gc.totalMs += e.duration;
      if (e.duration > gc.maxMs) gc = { ...gc, maxMs: e.duration, maxKind: KIND[e.detail?.kind] ?? String(e.detail?.kind) };
    }
  };
  const gcObserver = new PerformanceObserver((list) => onGc(list.getEntries()));
  process.on('message', (m) => {
    if (m?.type === 'lag-start') {
      h.reset();
      h.enable();
      gc = { maxMs: 0, maxKind: '', totalMs: 0 };
      gcObserver.observe({ entryTypes: ['gc'] });
      process.send({ type: 'lag-started' });
    } else if (m?.type === 'lag') {
      h.disable();
      onGc(gcObserver.takeRecords()); // entries not yet delivered
      gcObserver.disconnect();
      const ms = (ns) => Math.max(0, Math.round(ns / 1e4) / 100 - RESOLUTION_MS);
      const r2 = (x) => Math.round(x * 100) / 100;
      process.send({
        type: 'lag',
        p50Ms: ms(h.percentile(50)),
        p99Ms: ms(h.percentile(99)),
        maxMs: ms(h.max),
        gcMaxMs: r2(gc.maxMs),
        gcMaxKind: gc.maxKind,
        gcTotalMs: r2(gc.totalMs),
      });
    } else if (m?.type === 'alloc-start' || m?.type === 'alloc-stop') {
      // A failure is answered too: the orchestrator waits for the reply, and the gateway under test must not crash.
      const reply = m.type === 'alloc-start' ? 'alloc-started' : 'alloc-stopped';
      allocProfile(m).then(
        () => process.send({ type: reply }),
        (err) => process.send({ type: reply, error: String(err) }),
      );
    } else if (m?.type === 'memory') {
      // With --expose-gc, `gc: true` collects first: live memory rather than garbage not yet collected.
      if (m.gc) globalThis.gc?.();
      const mb = (n) => Math.round(n / 1048576);
      const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, mb(s.space_used_size) + '/' + mb(s.space_size)]));
      const u = process.memoryUsage();
      process.send({ type: 'memory', rss: mb(u.rss), heapUsed: mb(u.heapUsed), heapTotal: mb(u.heapTotal), external: mb(u.external), arrayBuffers: mb(u.arrayBuffers), spaces });
    }
  });
  let session;
  const post = (method, params = {}) => new Promise((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r))));
  async function allocProfile(m) {
    if (m.type === 'alloc-start') {
      const { Session } = await import('node:inspector');
      session ??= new Session();
      session.connect();
      await post('HeapProfiler.enable');
      // Objects the GC already took count too: a request's garbage is what this measures.
      await post('HeapProfiler.startSampling', { samplingInterval: m.intervalBytes ?? 1024, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
      return;
    }
    const { profile } = await post('HeapProfiler.stopSampling');
    session.disconnect();
    writeFileSync(m.file, JSON.stringify(profile));
  }
  // The channel must not keep a gateway alive on its own.
  process.channel?.unref();
}
