/**
 * `derive()` once per owner and key, for as long as the owner lives (a WeakMap): for the
 * analyzer's results that are pure functions of a shared value, such as a parsed catalogue
 * or the admitted list that pools of one selection share, in one environment or in 300.
 * Results are shared between callers, so they are never mutated.
 */
export function memo<T>(cache: WeakMap<object, Map<string, T>>, owner: object, key: string, derive: () => T): T {
  let byKey = cache.get(owner);
  if (!byKey) cache.set(owner, (byKey = new Map()));
  if (byKey.has(key)) return byKey.get(key)!;
  const value = derive();
  byKey.set(key, value);
  return value;
}
