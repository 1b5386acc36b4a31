/**
 * The in-process StateStore: a Map. State is per process and lost on restart,
 * which is what a single gateway instance needs.
 */
import type { StateStore } from './store.js';

export class MemoryStateStore implements StateStore {
  readonly backend = 'memory' as const;
  private readonly objects = new Map<string, object>();

  local<T extends object>(key: string, create: () => T): T {
    let v = this.objects.get(key);
    if (v === undefined) {
      v = create();
      this.objects.set(key, v);
    }
    // Safe by the key-namespacing contract: one key always holds one kind of object.
    return v as T;
  }

  get size(): number {
    return this.objects.size;
  }

  async close(): Promise<void> {
    this.objects.clear();
  }
}
