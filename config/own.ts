/**
 * `table[key]` for a key a user wrote (a label, a requirement key, a resource name): only
 * the table's own entries. A plain `table[key]` answers `constructor`, `toString` or
 * `valueOf`, all valid label keys, with Object.prototype's functions.
 */
export function own<T>(table: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}
