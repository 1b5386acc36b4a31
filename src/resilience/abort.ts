/**
 * Why an attempt's signal fired. The executor aborts with one of these;
 * adapters rethrow `signal.reason`, so the executor learns which limit ended
 * the attempt without guessing from transport errors.
 */
export type AbortKind = 'attempt_timeout' | 'ttft' | 'idle' | 'deadline' | 'client' | 'shutdown';

export class AttemptAborted extends Error {
  constructor(readonly kind: AbortKind, message: string) {
    super(message);
    this.name = 'AttemptAborted';
  }
}

export const CLIENT_GONE = () => new AttemptAborted('client', 'client disconnected');
export const DEADLINE = () => new AttemptAborted('deadline', 'request deadline exceeded');
/** The server's shutdown grace ran out with the request still in flight (http-server.ts `close`). */
export const SHUTTING_DOWN = () => new AttemptAborted('shutdown', 'the gateway is shutting down');
