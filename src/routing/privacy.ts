/**
 * Data classes: a key sets a floor, the `x-switchyard-data-class` header may
 * raise it (never lower it). `confidential` and `restricted` data, and every
 * request of a key with `allowExternal: false`, stay on `locality: local`
 * deployments.
 */
import type { DataClass, KeyConfig } from '../config/types.js';
import { invalidRequest } from '../core/errors.js';

const RANK: Record<DataClass, number> = { public: 0, internal: 1, confidential: 2, restricted: 3 };

export function effectiveDataClass(floor: DataClass, header: string | undefined): DataClass {
  if (header === undefined || header === '') return floor;
  const asked = header.trim().toLowerCase() as DataClass;
  if (!Object.hasOwn(RANK, asked)) throw invalidRequest(`x-switchyard-data-class must be one of ${Object.keys(RANK).join(', ')}`, 'x-switchyard-data-class');
  return RANK[asked] > RANK[floor] ? asked : floor;
}

export function requiresLocal(dataClass: DataClass, key: KeyConfig | null): boolean {
  // Fails closed: a class that is none of the four (a library caller's hand-built key with
  // 'Restricted' or a typo) ranked as undefined, under confidential, and its data left.
  const rank = Object.hasOwn(RANK, dataClass) ? RANK[dataClass] : RANK.restricted;
  return rank >= RANK.confidential || (key !== null && !key.allowExternal);
}
