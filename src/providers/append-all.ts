/**
 * `to.push(...items)` without the spread: a spread passes each item as an argument on the
 * stack, and past about 120,000 of them it overflows. The native adapters merge consecutive
 * same-role messages into one turn this way, and a user message of 140,000 one-letter text
 * parts after another (3.8 MB, under the default body limit) was a 500 internal_error.
 */
export function appendAll<T>(to: T[], items: readonly T[]): void {
  for (let i = 0; i < items.length; i++) to.push(items[i]!);
}
