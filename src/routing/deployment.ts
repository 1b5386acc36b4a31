/**
 * A deployment as the runtime sees it: one provider's concrete model, with its
 * effective timeouts and limits resolved once from the config. Built at start-up
 * (and for `PROVIDER/MODEL` pins on first use), never per request.
 */
import type {
  Capability,
  DeploymentConfig,
  Price,
  ProviderConfig,
  TimeoutConfig,
} from '../config/types.js';

export interface Deployment {
  /** `PROVIDER_ID/MODEL`: the name in headers, traces and metrics. */
  readonly key: string;
  /**
   * Key of its shared state (breaker, cooldown, pacing): `key` for configured
   * deployments and for the first ad-hoc pins of each provider that answered
   * (see Catalog.servedPinned); one `PROVIDER_ID/~pinned` for the others, so
   * clients inventing model names cannot grow the gateway's state.
   */
  readonly stateKey: string;
  readonly provider: ProviderConfig;
  readonly model: string;
  readonly weight: number;
  readonly price: Price | undefined;
  readonly rpm: number | undefined;
  readonly tpm: number | undefined;
  readonly contextWindow: number | undefined;
  readonly capabilities: ReadonlySet<Capability>;
  /**
   * It lists a feature (tools, vision, json, embeddings), so it is taken at its word
   * (routing/requirements.ts `supports`). `prefill` and `streaming` are no such list:
   * declaring `[prefill]` to opt in to stream resume must not take its tools away.
   */
  readonly declaresFeatures: boolean;
  /** Deployment overrides merged over the resilience defaults. */
  readonly timeouts: TimeoutConfig;
  /** Pinned via `PROVIDER/MODEL` rather than configured in a pool. */
  readonly pinned: boolean;
}

export function makeDeployment(
  provider: ProviderConfig,
  d: Pick<DeploymentConfig, 'model'> & Partial<DeploymentConfig>,
  defaults: TimeoutConfig,
  /** Pinned via `PROVIDER/MODEL`: with a state of its own, or in the provider's shared one. */
  pinned: false | 'own-state' | 'shared-state' = false,
): Deployment {
  const key = `${provider.id}/${d.model}`;
  const capabilities = new Set(d.capabilities ?? []);
  return Object.freeze({
    key,
    stateKey: pinned === 'shared-state' ? `${provider.id}/~pinned` : key,
    provider,
    model: d.model,
    weight: d.weight ?? 1,
    price: d.price,
    rpm: d.rpm,
    tpm: d.tpm,
    contextWindow: d.contextWindow,
    capabilities,
    declaresFeatures: [...capabilities].some((c) => c !== 'prefill' && c !== 'streaming'),
    timeouts: {
      requestTimeoutMs: d.requestTimeoutMs ?? defaults.requestTimeoutMs,
      ttftTimeoutMs: d.ttftTimeoutMs ?? defaults.ttftTimeoutMs,
      idleTimeoutMs: d.idleTimeoutMs ?? defaults.idleTimeoutMs,
    },
    pinned: pinned !== false,
  });
}
