import type { Random } from '../../core/clock.js';
import type { Deployment } from '../deployment.js';

/** Orders one pool for one request; `reason` goes to x-switchyard-selection and traces. */
export type Selector = (pool: readonly Deployment[], random: Random) => { ordered: readonly Deployment[]; reason: string };
