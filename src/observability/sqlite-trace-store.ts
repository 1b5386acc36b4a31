/**
 * Traces in a SQLite file (better-sqlite3, WAL) so they survive restarts.
 *
 * better-sqlite3 is synchronous, so writes never happen in `add`: records are
 * buffered and written in one transaction per batch, from an unref'd timer
 * (`flushIntervalMs`) or, when the buffer reaches `batchSize`, from a
 * setImmediate — after the current request's work. A batch of a few hundred
 * rows costs a millisecond or two of event loop, once, instead of a disk write
 * per request.
 *
 * Reads flush first: `query`/`get` write the pending buffer (and apply
 * retention) before reading, so they always see every record added so far.
 * Retention keeps the newest `capacity` rows (by insertion) and drops rows
 * older than `maxAgeMs` (by startedAt); it runs with every flush and on open.
 *
 * Each row holds the record as JSON plus the filterable fields as indexed
 * columns.
 */
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.js';
import { makeDir } from './make-dir.js';
import type { TraceRecord } from './events.js';
import { resolveLimit, startedAtMs, type TraceFilter, type TraceStore } from './trace-store.js';

export const DEFAULT_FLUSH_INTERVAL_MS = 200;
export const DEFAULT_BATCH_SIZE = 500;

export interface SqliteTraceStoreOptions {
  /** File path; its directory is created if missing. `:memory:` for a private in-memory database. */
  path: string;
  capacity: number;
  /** Rows whose startedAt is older than this are deleted; 0 or Infinity keeps them (count retention still applies). */
  maxAgeMs: number;
  clock?: Clock;
  flushIntervalMs?: number;
  batchSize?: number;
  /** A failed write drops its batch and reports here; it never throws into the gateway. */
  onError?: (err: unknown) => void;
}

const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS traces (
  seq             INTEGER PRIMARY KEY,
  id              TEXT    NOT NULL,
  started_at      INTEGER NOT NULL,
  model           TEXT    NOT NULL,
  routed_model    TEXT,
  routed_provider TEXT,
  status          INTEGER NOT NULL,
  key_id          TEXT,
  fallback_used   INTEGER NOT NULL,
  record          TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS traces_started         ON traces (started_at);
CREATE INDEX IF NOT EXISTS traces_id              ON traces (id);
CREATE INDEX IF NOT EXISTS traces_model           ON traces (model, started_at);
CREATE INDEX IF NOT EXISTS traces_routed_model    ON traces (routed_model, started_at);
CREATE INDEX IF NOT EXISTS traces_routed_provider ON traces (routed_provider, started_at);
CREATE INDEX IF NOT EXISTS traces_status          ON traces (status, started_at);
CREATE INDEX IF NOT EXISTS traces_key_id          ON traces (key_id, started_at);
-- Fallbacks are the rare, interesting case: a partial index serves "fallbackUsed=true".
CREATE INDEX IF NOT EXISTS traces_fallback        ON traces (started_at) WHERE fallback_used = 1;
`;

type Row = [string, number, string, string | null, string | null, number, string | null, number, string];

export class SqliteTraceStore implements TraceStore {
  private readonly db: Database.Database;
  private readonly clock: Clock;
  private readonly capacity: number;
  private readonly maxAgeMs: number;
  private readonly flushIntervalMs: number;
  private readonly batchSize: number;
  private readonly onError: (err: unknown) => void;

  private buffer: TraceRecord[] = [];
  private timer: TimerHandle | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private closed = false;

  private readonly insertStmt: Database.Statement<Row>;
  private readonly pruneAgeStmt: Database.Statement<[number]>;
  private readonly pruneCountStmt: Database.Statement<[number]>;
  private readonly getStmt: Database.Statement<[string], string>;
  /** Prepared per combination of present filters (at most 2^6 × 2 shapes). */
  private readonly queryStmts = new Map<string, Database.Statement<unknown[], string>>();
  private readonly writeBatch: (batch: TraceRecord[]) => void;

  constructor(opts: SqliteTraceStoreOptions) {
    if (!Number.isInteger(opts.capacity) || opts.capacity < 1) {
      throw new RangeError(`trace capacity must be a positive integer, got ${opts.capacity}`);
    }
    this.clock = opts.clock ?? systemClock;
    this.capacity = opts.capacity;
    this.maxAgeMs = opts.maxAgeMs;
    this.flushIntervalMs = opts.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    this.batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
    this.onError = opts.onError ?? (() => {});

    if (opts.path !== ':memory:' && opts.path !== '') makeDir(dirname(opts.path));
    this.db = new Database(opts.path);
    this.db.pragma('journal_mode = WAL');
    // WAL + NORMAL: durable across process crashes, only an OS crash may lose the last commits.
    this.db.pragma('synchronous = NORMAL');
    // Short: a busy file (another process) must not stall the event loop; the batch is reported and dropped instead.
    this.db.pragma('busy_timeout = 500');
    this.db.exec(SCHEMA);
    this.db.pragma(`user_version = ${SCHEMA_VERSION}`);

    this.insertStmt = this.db.prepare(
      `INSERT INTO traces (id, started_at, model, routed_model, routed_provider, status, key_id, fallback_used, record)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.pruneAgeStmt = this.db.prepare('DELETE FROM traces WHERE started_at < ?');
    // Keep the newest `capacity` rows: delete everything at or below the (capacity+1)-th newest seq.
    this.pruneCountStmt = this.db.prepare(
      'DELETE FROM traces WHERE seq <= (SELECT seq FROM traces ORDER BY seq DESC LIMIT 1 OFFSET ?)',
    );
    this.getStmt = this.db.prepare<[string], string>('SELECT record FROM traces WHERE id = ? ORDER BY seq DESC LIMIT 1').pluck();

    this.writeBatch = this.db.transaction((batch: TraceRecord[]) => {
      for (const t of batch) {
        let json: string;
        try {
          json = JSON.stringify(t);
        } catch (err) {
          // One unserialisable record must not cost the rest of its batch.
          this.onError(err);
          continue;
        }
        this.insertStmt.run(
          t.id,
          startedAtMs(t),
          t.model,
          t.routedModel,
          t.routedProvider,
          t.status,
          t.keyId,
          t.fallbackUsed ? 1 : 0,
          json,
        );
      }
      this.prune();
    });
    this.db.transaction(() => this.prune())();
  }

  add(t: TraceRecord): void {
    if (this.closed) return;
    this.buffer.push(t);
    if (this.buffer.length >= this.batchSize) {
      if (this.immediate === undefined) {
        this.immediate = setImmediate(() => {
          this.immediate = undefined;
          this.flush();
        });
        this.immediate.unref();
      }
    } else if (this.timer === undefined) {
      this.timer = this.clock.setTimer(() => {
        this.timer = undefined;
        this.flush();
      }, this.flushIntervalMs);
    }
  }

  /** Write the buffer now (one transaction) and apply retention. */
  flush(): void {
    if (this.closed) return;
    this.timer?.clear();
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    try {
      this.writeBatch(batch);
    } catch (err) {
      this.onError(err);
    }
  }

  get(id: string): TraceRecord | undefined {
    if (this.closed) return undefined;
    this.flush();
    const json = this.getStmt.get(id);
    return json === undefined ? undefined : (JSON.parse(json) as TraceRecord);
  }

  query(f: TraceFilter): TraceRecord[] {
    if (this.closed) return [];
    this.flush();
    const where: string[] = [];
    const args: unknown[] = [];
    let shape = '';
    // Inlined literal (from a boolean, never client text) so the partial index applies.
    if (f.fallbackUsed !== undefined) {
      where.push(`fallback_used = ${f.fallbackUsed ? 1 : 0}`);
      shape += f.fallbackUsed ? 'F' : 'f';
    }
    if (f.routedProvider !== undefined) {
      where.push('routed_provider = ?');
      args.push(f.routedProvider);
      shape += 'p';
    }
    if (f.model !== undefined) {
      where.push('(model = ? OR routed_model = ?)');
      args.push(f.model, f.model);
      shape += 'm';
    }
    if (f.status !== undefined) {
      where.push('status = ?');
      args.push(f.status);
      shape += 's';
    }
    if (f.keyId !== undefined) {
      where.push('key_id = ?');
      args.push(f.keyId);
      shape += 'k';
    }
    if (f.since !== undefined) {
      where.push('started_at >= ?');
      args.push(f.since);
      shape += 't';
    }
    args.push(resolveLimit(f.limit));
    let stmt = this.queryStmts.get(shape);
    if (stmt === undefined) {
      const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
      stmt = this.db
        .prepare<unknown[], string>(`SELECT record FROM traces ${clause} ORDER BY started_at DESC, seq DESC LIMIT ?`)
        .pluck();
      this.queryStmts.set(shape, stmt);
    }
    return stmt.all(...args).map((json) => JSON.parse(json) as TraceRecord);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.closed = true;
    this.db.close();
  }

  private prune(): void {
    if (this.maxAgeMs > 0 && Number.isFinite(this.maxAgeMs)) this.pruneAgeStmt.run(this.clock.now() - this.maxAgeMs);
    this.pruneCountStmt.run(this.capacity);
  }
}
