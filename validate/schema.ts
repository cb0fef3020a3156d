import type { ErrorObject } from 'ajv';
import type { StructuralSchema } from './crds.js';
import { objectMetaSchema } from './object-meta.js';

type JsonSchema = Record<string, unknown>;

/**
 * Turns a CRD's structural schema into plain JSON Schema for ajv, with the meaning the
 * API server gives Kubernetes' extensions:
 * - unknown fields are errors (`--validate=strict`) unless x-kubernetes-preserve-unknown-fields;
 * - x-kubernetes-int-or-string accepts an integer or a string;
 * - x-kubernetes-embedded-resource implies apiVersion, kind and metadata;
 * - the root `metadata` is ObjectMeta (the CRD may only constrain name and generateName).
 * CEL rules and list types are left to the walker in validator.ts.
 */
export function toAjvSchema(root: StructuralSchema): JsonSchema {
  const converted = convert(root, false);
  const props = (converted.properties ?? {}) as Record<string, JsonSchema>;
  const crdMeta = (root.properties?.metadata?.properties ?? {}) as Record<string, StructuralSchema>;
  const metaProps: Record<string, unknown> = { ...objectMetaSchema.properties };
  for (const field of ['name', 'generateName'] as const) {
    if (crdMeta[field]) metaProps[field] = { ...convert(crdMeta[field], false), type: 'string' };
  }
  converted.properties = { ...props, metadata: { ...objectMetaSchema, properties: metaProps } };
  return converted;
}

function convert(s: StructuralSchema, inBranch: boolean): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(s)) {
    if (key.startsWith('x-kubernetes-')) continue;
    switch (key) {
      case 'properties':
        out.properties = Object.fromEntries(Object.entries(value as Record<string, StructuralSchema>).map(([k, v]) => [k, convert(v, false)]));
        break;
      case 'items':
        out.items = convert(value as StructuralSchema, inBranch);
        break;
      case 'additionalProperties':
        out.additionalProperties = typeof value === 'object' ? convert(value as StructuralSchema, false) : value;
        break;
      case 'anyOf':
      case 'allOf':
      case 'oneOf':
        out[key] = (value as StructuralSchema[]).map((v) => convert(v, true));
        break;
      case 'not':
        out.not = convert(value as StructuralSchema, true);
        break;
      case 'pattern':
        out.pattern = re2Compatible(value as string);
        break;
      default:
        out[key] = value;
    }
  }
  if (s['x-kubernetes-int-or-string']) out.type = ['integer', 'string'];
  if (s['x-kubernetes-embedded-resource']) {
    out.properties = { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, ...(out.properties as object) };
    out.required = [...new Set([...((out.required as string[]) ?? []), 'apiVersion', 'kind'])];
  }
  // In anyOf/allOf/oneOf/not branches, properties only constrain values; the fields
  // themselves are declared by the enclosing schema.
  if (!inBranch && s.type === 'object' && s.additionalProperties === undefined && !s['x-kubernetes-preserve-unknown-fields']) {
    out.additionalProperties = false;
  }
  return out;
}

/** Rewritten pattern -> the CRD's own text, so messages quote the pattern as the API server does. */
const ORIGINAL_PATTERN = new Map<string, string>();

const ASCII_CLASSES: Record<string, [inside: string, outside: string]> = {
  s: ['\\t\\n\\f\\r ', '[\\t\\n\\f\\r ]'],
  d: ['0-9', '[0-9]'],
  w: ['0-9A-Za-z_', '[0-9A-Za-z_]'],
  S: ['', '[^\\t\\n\\f\\r ]'],
  D: ['', '[^0-9]'],
  W: ['', '[^0-9A-Za-z_]'],
};

/**
 * The API server matches patterns with Go's RE2, where \s, \d and \w are ASCII only; ajv
 * uses JavaScript regexes with the u flag, where \s also matches e.g. a non-breaking space.
 * Rewrite those classes to their ASCII sets so both accept the same strings.
 */
export function re2Compatible(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      const next = pattern[i + 1]!;
      const ascii = ASCII_CLASSES[next];
      // A negated class inside [...] has no plain expansion: keep it (no vendored CRD uses one).
      out += ascii && !(inClass && ascii[0] === '') ? ascii[inClass ? 0 : 1] : c + next;
      i++;
      continue;
    }
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false;
    out += c;
  }
  if (out !== pattern) ORIGINAL_PATTERN.set(out, pattern);
  return out;
}

export interface FieldIssue {
  readonly path: string;
  readonly message: string;
}

/** `['spec', 'requirements', 0, 'key']` -> `spec.requirements[0].key` (map keys that are not identifiers in brackets). */
export function joinPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${seg}]`;
  }
  return out;
}

/** The path of an ajv instancePath (JSON pointer), and the value found there. */
function locate(pointer: string, data: unknown): { segments: (string | number)[]; value: unknown } {
  const out: (string | number)[] = [];
  let cur: unknown = data;
  if (pointer === '') return { segments: out, value: cur };
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const seg = Array.isArray(cur) ? Number(key) : key;
    out.push(seg);
    cur = cur !== null && typeof cur === 'object' ? (cur as Record<string | number, unknown>)[seg] : undefined;
  }
  return { segments: out, value: cur };
}

const quote = (v: unknown) => JSON.stringify(v);

/**
 * ajv errors as field errors, worded like the API server's (kube-openapi) messages so
 * the same text shows up in `npm run synth` and in `kubectl apply` output.
 */
export function fieldIssuesFromAjv(errors: readonly ErrorObject[], data: unknown): FieldIssue[] {
  const out: FieldIssue[] = [];
  // Errors inside anyOf/oneOf branches explain why each alternative failed; the
  // API server reports the alternative as a whole, and so do we.
  for (const e of errors.filter((err) => !/\/(anyOf|oneOf)\/\d+\//.test(err.schemaPath))) {
    const { segments, value } = locate(e.instancePath, data);
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required':
        out.push({ path: joinPath([...segments, p.missingProperty as string]), message: 'Required value' });
        break;
      case 'additionalProperties': {
        const path = joinPath([...segments, p.additionalProperty as string]);
        out.push({ path, message: `unknown field "${path}"` });
        break;
      }
      case 'enum':
        out.push({
          path: joinPath(segments),
          message: `Unsupported value: ${quote(value)}: supported values: ${(p.allowedValues as unknown[]).map(quote).join(', ')}`,
        });
        break;
      case 'type':
        out.push({ path: joinPath(segments), message: `must be of type ${[p.type].flat().join(' or ')}, got ${quote(value)}` });
        break;
      case 'maximum':
      case 'minimum':
      case 'exclusiveMaximum':
      case 'exclusiveMinimum': {
        const relation = { maximum: 'less than or equal to', minimum: 'greater than or equal to', exclusiveMaximum: 'less than', exclusiveMinimum: 'greater than' }[e.keyword];
        out.push({ path: joinPath(segments), message: `Invalid value: ${quote(value)}: should be ${relation} ${String(p.limit)}` });
        break;
      }
      case 'pattern':
        out.push({ path: joinPath(segments), message: `Invalid value: ${quote(value)}: should match '${ORIGINAL_PATTERN.get(String(p.pattern)) ?? String(p.pattern)}'` });
        break;
      case 'maxLength':
        out.push({ path: joinPath(segments), message: `Too long: may not be more than ${String(p.limit)} bytes, got ${(value as string).length}` });
        break;
      case 'minLength':
        out.push({ path: joinPath(segments), message: `Invalid value: ${quote(value)}: should be at least ${String(p.limit)} chars long` });
        break;
      case 'maxItems':
        out.push({ path: joinPath(segments), message: `Too many: ${(value as unknown[]).length}: must have at most ${String(p.limit)} items` });
        break;
      case 'minItems':
        out.push({ path: joinPath(segments), message: `Invalid value: ${(value as unknown[]).length}: should have at least ${String(p.limit)} items` });
        break;
      case 'maxProperties':
        out.push({ path: joinPath(segments), message: `Too many: ${Object.keys(value as object).length}: must have at most ${String(p.limit)} items` });
        break;
      case 'minProperties':
        out.push({ path: joinPath(segments), message: `should have at least ${String(p.limit)} properties` });
        break;
      case 'anyOf':
      case 'oneOf':
        out.push({ path: joinPath(segments), message: `Invalid value: ${quote(value)}: must match ${e.keyword === 'anyOf' ? 'at least one' : 'exactly one'} of its allowed forms` });
        break;
      default:
        out.push({ path: joinPath(segments), message: `Invalid value: ${quote(value)}: ${e.message ?? e.keyword}` });
    }
  }
  return out;
}
