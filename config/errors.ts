import { isScalar, type Document } from 'yaml';
import type { z } from 'zod';

/** One problem found in an input file, located by a field path such as `nodePools[0].limits.cpu`. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * Bad input. The message lists every issue as `<file>: <path>: <what is wrong>`, so a
 * user can fix them all in one go; the CLI prints it and exits non-zero.
 */
export class ConfigError extends Error {
  public readonly code = 'E_CONFIG';
  constructor(
    public readonly file: string,
    public readonly issues: readonly ConfigIssue[],
  ) {
    super(issues.map((i) => `${file}: ${i.path === '' ? '(top level)' : i.path}: ${i.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

/** `['nodePools', 0, 'limits']` -> `nodePools[0].limits` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    // Map keys such as label names contain dots and slashes: quote them so the path stays readable.
    else if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(String(seg))) out += `[${JSON.stringify(String(seg))}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/** Renders a value the way it appeared in the file, short enough for one line. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

function typeName(value: unknown, source?: ScalarSource): string {
  const tagged = taggedScalar(value, source);
  if (tagged) return tagged;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `${typeof value} ${shown(value, source)}`;
}

/** How a scalar was written in the file: its text, and its tag when it has one (`!!binary`, `!foo`). */
export interface ScalarSource {
  readonly text: string;
  readonly tag?: string;
}
export type ScalarLookup = (path: readonly PropertyKey[]) => ScalarSource | undefined;

/** Looks scalars up in a parsed YAML document, so messages can show values as written. */
export function scalarsOf(doc: Document): ScalarLookup {
  return (path) => {
    const node = doc.getIn(path as unknown[], true);
    if (!isScalar(node) || typeof node.source !== 'string') return undefined;
    return { text: node.source, ...(node.tag ? { tag: node.tag } : {}) };
  };
}

const CORE_TAGS = new Set(['str', 'int', 'float', 'bool', 'null'].map((t) => `tag:yaml.org,2002:${t}`));

/** `a !!binary scalar "aGVsbG8="`: YAML turned it into something that is not what it looks like. */
function taggedScalar(value: unknown, source?: ScalarSource): string | undefined {
  if (source?.tag && !CORE_TAGS.has(source.tag)) {
    return `a ${source.tag.replace(/^tag:yaml\.org,2002:/, '!!')} scalar ${JSON.stringify(source.text)}`;
  }
  if (value instanceof Uint8Array) return 'binary data';
  return undefined;
}

/** A value for "got ...": numbers as written (`1.30`, `0x1F`), tagged scalars named as such. */
function shown(value: unknown, source?: ScalarSource): string {
  const tagged = taggedScalar(value, source);
  if (tagged) return tagged;
  if (typeof value === 'number' && source) return source.text;
  return describeValue(value);
}

/**
 * Turns zod issues into "must be X, got Y" lines. Messages written on the schema
 * (`{ error: 'must be ...' }`) are kept and get the offending value appended.
 */
export function issuesFromZod(error: z.ZodError, input: unknown, scalars?: ScalarLookup): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const visit = (issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[]) => {
    for (const issue of issues) {
      const path = [...prefix, ...issue.path];
      const value = valueAt(input, path);
      const source = scalars?.(path);
      switch (issue.code) {
        case 'unrecognized_keys':
          for (const key of issue.keys) {
            out.push({ path: formatPath(path), message: `unknown field "${key}"${allowedKeysHint(issue.message)}` });
          }
          break;
        case 'invalid_type':
          out.push({
            path: formatPath(path),
            message: value === undefined ? `is required (${expectedName(issue.expected)})` : `must be ${expectedName(issue.expected)}, got ${typeName(value, source)}`,
          });
          break;
        case 'invalid_value':
          out.push({
            path: formatPath(path),
            message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${shown(value, source)}`,
          });
          break;
        case 'invalid_key':
          // A map key failed its own check: report the key itself as the bad value.
          for (const inner of issue.issues) {
            out.push({ path: formatPath(path), message: `key ${inner.message}, got ${describeValue(path[path.length - 1])}` });
          }
          break;
        case 'invalid_union': {
          // Prefer the branch that got furthest: it is the one the user meant.
          const best = [...issue.errors].sort((a, b) => depth(b) - depth(a))[0];
          if (best && best.length > 0) visit(best, path);
          else out.push({ path: formatPath(path), message: `${issue.message}, got ${shown(value, source)}` });
          break;
        }
        case 'too_small':
        case 'too_big': {
          // Keep messages written on the schema; replace zod's generic "Too small: ..." wording.
          const generic = /^Too (small|big)/.test(issue.message);
          const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
          const word = issue.code === 'too_small' ? 'at least' : 'at most';
          const what = issue.origin === 'array' ? `a list of ${word} ${bound} items` : issue.origin === 'string' ? `${word} ${bound} characters long` : `${word} ${bound}`;
          out.push({ path: formatPath(path), message: `${generic ? `must be ${what}` : issue.message}, got ${shown(value, source)}` });
          break;
        }
        default:
          out.push({ path: formatPath(path), message: `${issue.message}, got ${shown(value, source)}` });
      }
    }
  };
  visit(error.issues, []);
  return out;
}

function depth(issues: readonly z.core.$ZodIssue[]): number {
  return Math.max(0, ...issues.map((i) => i.path.length));
}

/** `strict()` in schema-kit.ts puts the allowed keys in the message of unrecognized_keys issues. */
function allowedKeysHint(message: string): string {
  return message.startsWith('allowed: ') ? `; ${message}` : '';
}

function expectedName(expected: string): string {
  switch (expected) {
    case 'object':
      return 'a map';
    case 'array':
      return 'a list';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'int':
      return 'an integer';
    case 'boolean':
      return 'true or false';
    default:
      return expected;
  }
}
