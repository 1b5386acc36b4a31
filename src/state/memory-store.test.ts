import { describe } from 'vitest';
import { MemoryStateStore } from './memory-store.js';
import { runStateStoreCases } from './store.case.js';

describe('MemoryStateStore', () => {
  runStateStoreCases(() => new MemoryStateStore());
});
