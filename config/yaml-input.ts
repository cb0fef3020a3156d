import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError, describeValue, issuesFromZod, scalarsOf } from './errors.js';

/**
 * Parses a YAML config file that must be a map and validates it with a zod schema.
 * Duplicate keys are errors (a second `cluster:` silently winning is how typos ship).
 * `shape` completes "must be a YAML map with ...".
 */
export function parseYamlInput<S extends z.ZodType>(file: string, text: string, schema: S, shape: string): z.infer<S> {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // prettyErrors puts "at line L, column C:" then a code frame in each message: keep the first line.
    throw new ConfigError(file, doc.errors.map((e) => ({ path: '', message: `is not valid YAML: ${e.message.split('\n')[0]!.replace(/:$/, '')}` })));
  }
  const raw: unknown = doc.toJS();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, [{ path: '', message: `must be a YAML map with ${shape}, got ${describeValue(raw)}` }]);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(file, issuesFromZod(parsed.error, raw, scalarsOf(doc)));
  return parsed.data;
}

/** Reads an input file; one that cannot be read is a ConfigError naming it, like any other bad input. */
export function readInputText(path: string, file: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: '', message: `cannot be read: ${(err as Error).message}` }]);
  }
}
