/**
 * The streamed chat path: run the chain to a commit point, then hand the
 * client a LiveStream that can resume on a prefill-capable candidate if the
 * upstream breaks after the first token.
 */
import { performance } from 'node:perf_hooks';
import type { ResilienceConfig } from '../config/types.js';
import type { ChatRequest } from '../protocol/openai.js';
import { forgetRawBody } from '../protocol/raw-body.js';
import type { Candidate } from '../routing/chain.js';
import { supports, type Requirements } from '../routing/requirements.js';
import { AttemptAborted } from '../resilience/abort.js';
import type { AttemptInput, Executor } from '../resilience/executor.js';
import type { Health } from '../resilience/health.js';
import { LiveStream } from '../resilience/live-stream.js';
import { seamStops } from '../resilience/stop-across-cut.js';
import { openUntilCommit } from '../resilience/stream-attempt.js';
import { resumeRequest } from './resume-request.js';
import type { Clock } from './clock.js';
import { GatewayError } from './errors.js';
import type { RequestLifecycle } from './request-lifecycle.js';
import { metaOf } from './request-meta.js';
import type { ChatStreamResponse } from './gateway.js';

export interface StreamDeps {
  executor: Executor;
  health: Health;
  clock: Clock;
  resilience: ResilienceConfig;
}

const attemptStream = (req: ChatRequest, resume: boolean, run: { malformedEvents: number }) => (input: AttemptInput) => {
  if (resume) input.trace.resume = true;
  return openUntilCommit(input, req, input.requestId, run);
};

export async function chatStream(
  deps: StreamDeps,
  req: ChatRequest,
  requirements: Requirements,
  life: RequestLifecycle,
  contentPolicyChain: (refused: Candidate) => Candidate[],
): Promise<ChatStreamResponse> {
  const { executor, health, clock, resilience } = deps;
  const { run, chain, estimatedTokens } = life;
  /** The content-policy fallbacks the chain moved to, if a candidate refused the prompt: a resume continues among them. */
  let policyChain: Candidate[] | undefined;
  const toPolicyChain = (refused: Candidate) => (policyChain = contentPolicyChain(refused));
  let first;
  try {
    first = await executor.run(run, chain, attemptStream(req, false, run), { estimatedTokens, contentPolicyChain: toPolicyChain, keepScope: true });
  } catch (err) {
    // No candidate failed when the client left: its stream was abandoned, not failed.
    run.streamOutcome = err instanceof AttemptAborted && err.kind === 'client' ? 'client_aborted' : 'failed_before_commit';
    life.fail(err);
    throw err;
  }
  // Committed: the stall timer guards a flowing stream from here; the client link stays until it ends.
  life.clearDeadline();
  forgetRawBody(req);
  // The client's time to first token runs from the request's start: failed attempts and waits
  // before the commit are part of it (the serving attempt's own TTFT is in its trace entry).
  const committedAt = performance.now();
  run.ttftMs = Math.round((committedAt - run.t0) * 1000) / 1000;
  run.markResponseStart(committedAt);

  // Resume on the same deployment first, then the chain's others: only prefill-capable, healthy ones.
  // A deployment that has already broken this answer before goes behind those that broke it less
  // often, so a route that keeps cutting does not use up every resume while a fallback could continue.
  let breaks: Map<string, number> | undefined;
  const resumeCandidates = (): Candidate[] => {
    const current = run.served!;
    const key = current.deployment.key;
    breaks ??= new Map();
    const own = (breaks.get(key) ?? 0) + 1;
    breaks.set(key, own);
    // Not back to the deployments that refused this prompt: after a content-policy move, the fallbacks' own chain.
    const from = policyChain !== undefined && policyChain.includes(current) ? policyChain : chain;
    const rest = from.filter((c) => c.deployment.key !== key);
    const order = [current, ...rest].filter((c) => supports(c.deployment, 'prefill') && health.available(c.deployment.stateKey));
    // Its latest break is excused once (same deployment first); the sort is stable.
    const rank = (c: Candidate) => (c === current ? own - 1 : (breaks!.get(c.deployment.key) ?? 0));
    return own > 1 ? order.sort((a, b) => rank(a) - rank(b)) : order;
  };
  const live = new LiveStream(first, {
    run,
    health,
    cfg: resilience,
    includeUsage: req.stream_options?.include_usage === true,
    choices: typeof req.n === 'number' && req.n > 1 ? req.n : 1,
    promptTokensEstimate: requirements.promptTokens,
    stop: seamStops(req.stop),
    resume: async (prefill, spentTokens) => {
      const candidates = resumeCandidates();
      if (candidates.length === 0) throw new GatewayError(503, 'all_candidates_unavailable', 'no prefill-capable candidate');
      const continued = resumeRequest(req, prefill, spentTokens);
      run.deadlineAt = clock.now() + resilience.deadlineMs;
      return executor.run(run, candidates, attemptStream(continued, true, run), { estimatedTokens, keepScope: true, failFastAsFailover: true });
    },
    onAttemptEnd: (attempt, usage) => executor.attemptEnded(run, attempt, usage),
    onEnd: () => life.finish(),
  });
  return { stream: true, meta: metaOf(run), reader: live, [Symbol.asyncIterator]: () => live[Symbol.asyncIterator]() };
}
