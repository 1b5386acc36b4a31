/**
 * One upstream deployment (`PROVIDER/MODEL`) may sit in several aliases, each
 * with its own rpm/tpm. Its pacing state is one (keyed by the deployment), so
 * one pair of limits must apply: the lowest given anywhere, since the upstream
 * counts every alias's traffic against the same limit. Taking whichever alias
 * built the state first made the pacing depend on which alias was asked first.
 */
import type { ModelConfig } from '../config/types.js';

export interface SharedLimits {
  rpm: number | undefined;
  tpm: number | undefined;
}

/** The most restrictive rpm and tpm each deployment key is given across `models` (unset: no limit there). */
export function sharedDeploymentLimits(models: readonly ModelConfig[]): Map<string, SharedLimits> {
  const out = new Map<string, SharedLimits>();
  for (const m of models) {
    for (const d of m.deployments) {
      const key = `${d.provider}/${d.model}`;
      const l = out.get(key);
      if (l === undefined) out.set(key, { rpm: d.rpm, tpm: d.tpm });
      else {
        l.rpm = lowest(l.rpm, d.rpm);
        l.tpm = lowest(l.tpm, d.tpm);
      }
    }
  }
  return out;
}

function lowest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
