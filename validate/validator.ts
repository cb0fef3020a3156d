import type { ValidateFunction } from 'ajv';
import { cacheDirFor, cachedValidator } from './cache.js';
import { compileRule, isTransitionRule } from './cel.js';
import { loadCrd, locateCrds, CRD_DIRS, type CrdLocation, type CrdVersion, type StructuralSchema, type ValidationRule } from './crds.js';
import { objectMetaIssues } from './object-meta.js';
import { fieldIssuesFromAjv, joinPath, toAjvSchema, type FieldIssue } from './schema.js';
import { own } from '../config/own.js';

/** One violation: `object` is `Kind/name`, `path` a field path such as `spec.template.spec.requirements[0]`. */
export interface ManifestIssue {
  readonly object: string;
  readonly path: string;
  readonly message: string;
}

export interface ManifestValidatorOptions {
  /** Repository root holding the CRD directories. */
  readonly root: string;
  /** CRD directories relative to root. @default CRD_DIRS */
  readonly crdDirs?: readonly string[];
  /** Where parsed CRDs and compiled schemas are cached; `null` disables the cache. @default cacheDirFor(root) */
  readonly cacheDir?: string | null;
}

interface CompiledVersion {
  readonly crd: CrdVersion;
  readonly validateSchema: ValidateFunction;
}

type Segments = (string | number)[];

/**
 * Validates Kubernetes objects against the vendored CRDs the way the API server does on
 * create with `--validate=strict`: null pruning and defaulting, the openAPIV3Schema
 * (ajv), ObjectMeta, list-type uniqueness and the `x-kubernetes-validations` CEL rules.
 * CRD files are parsed only when an object of their kind comes along, and once.
 */
export class ManifestValidator {
  private locations: Map<string, CrdLocation> | undefined;
  private readonly loaded = new Map<string, Map<string, CrdVersion>>();
  private readonly compiled = new Map<string, CompiledVersion>();
  private readonly cacheDir: string | undefined;

  constructor(private readonly opts: ManifestValidatorOptions) {
    this.cacheDir = opts.cacheDir === null ? undefined : (opts.cacheDir ?? cacheDirFor(opts.root));
  }

  /** True when a vendored CRD defines this object's group and kind (core kinds are not ours to check). */
  handles(obj: { apiVersion?: unknown; kind?: unknown }): boolean {
    if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return false;
    return this.crdLocations().has(`${groupOf(obj.apiVersion)}/${obj.kind}`);
  }

  /** Every violation of one object; empty when the API server would accept it on create. */
  validate(obj: unknown): ManifestIssue[] {
    const record = (obj ?? {}) as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
    const label = `${String(record.kind)}/${typeof record.metadata?.name === 'string' ? record.metadata.name : '(unnamed)'}`;
    const withObject = (issues: readonly FieldIssue[]) => issues.map((i) => ({ object: label, ...i }));
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      return withObject([{ path: '', message: `must be a Kubernetes object (a map), got ${JSON.stringify(obj)}` }]);
    }
    if (typeof record.apiVersion !== 'string' || typeof record.kind !== 'string') {
      return withObject([{ path: typeof record.apiVersion !== 'string' ? 'apiVersion' : 'kind', message: 'Required value' }]);
    }
    const compiled = this.compiledFor(record.apiVersion, record.kind);
    if (!compiled) {
      return withObject([{ path: 'apiVersion', message: `no matches for kind "${record.kind}" in version "${record.apiVersion}"` }]);
    }

    const data = cloneTree(obj) as Record<string, unknown>;
    pruneNullsAndDefault(data, compiled.crd.schema);
    if (!compiled.validateSchema(data)) return withObject(fieldIssuesFromAjv(compiled.validateSchema.errors ?? [], data));
    const issues: FieldIssue[] = [...objectMetaIssues((data.metadata ?? {}) as Parameters<typeof objectMetaIssues>[0])];
    checkNode(data, compiled.crd.schema, [], issues);
    return withObject(issues);
  }

  /** Every CEL rule of every vendored CRD, compiled: proves they all parse and type-check. */
  compileAllRules(): Array<{ crd: string; path: string; rule: string }> {
    const out: Array<{ crd: string; path: string; rule: string }> = [];
    for (const location of [...this.crdLocations().values()]) {
      for (const version of this.versionsOf(location).values()) {
        forEachRule(version.schema, [], (rule, path) => {
          compileRule(rule.rule);
          out.push({ crd: `${version.kind}.${version.group}/${version.version}`, path: joinPath(path), rule: rule.rule });
        });
      }
    }
    return out;
  }

  private crdLocations(): Map<string, CrdLocation> {
    this.locations ??= locateCrds(this.opts.root, this.opts.crdDirs ?? CRD_DIRS);
    return this.locations;
  }

  private versionsOf(location: CrdLocation): Map<string, CrdVersion> {
    let versions = this.loaded.get(location.file);
    if (!versions) {
      versions = loadCrd(location, this.cacheDir);
      this.loaded.set(location.file, versions);
    }
    return versions;
  }

  private compiledFor(apiVersion: string, kind: string): CompiledVersion | undefined {
    const key = `${apiVersion}/${kind}`;
    const cached = this.compiled.get(key);
    if (cached) return cached;
    const location = this.crdLocations().get(`${groupOf(apiVersion)}/${kind}`);
    const crd = location && this.versionsOf(location).get(apiVersion.slice(apiVersion.lastIndexOf('/') + 1));
    if (!crd) return undefined;
    const compiledVersion = { crd, validateSchema: cachedValidator(this.cacheDir, toAjvSchema(crd.schema)) };
    this.compiled.set(key, compiledVersion);
    return compiledVersion;
  }
}

/**
 * A deep copy of a parsed manifest (maps, lists, scalars): what defaulting then edits.
 * structuredClone does the same for these values at several times the cost.
 */
function cloneTree(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneTree);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, cloneTree((value as Record<string, unknown>)[key]));
  return out;
}

/** `obj[key] = value`, except that a key named __proto__ stays a key (assigning it would set the prototype). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

function childSchema(schema: StructuralSchema, key: string): StructuralSchema | undefined {
  return own(schema.properties, key) ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
}

/**
 * What the API server does to a new object before validating it: drop nulls of
 * non-nullable fields (a null with a default becomes the default), then fill in
 * defaults, recursively, including inside values that were just defaulted.
 */
function pruneNullsAndDefault(value: unknown, schema: StructuralSchema): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const v of value) pruneNullsAndDefault(v, schema.items);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const obj = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(obj)) {
    const child = childSchema(schema, key);
    if (v === null && child && !child.nullable) delete obj[key];
  }
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (obj[key] === undefined && child.default !== undefined) obj[key] = cloneTree(child.default);
  }
  for (const [key, v] of Object.entries(obj)) {
    const child = childSchema(schema, key);
    if (child) pruneNullsAndDefault(v, child);
  }
}

/**
 * Checks list types and CEL rules bottom-up and returns the node as a CEL value
 * (integers as BigInt, the way CEL's int type is represented in cel-js).
 */
function checkNode(value: unknown, schema: StructuralSchema, path: Segments, issues: FieldIssue[]): unknown {
  let celValue: unknown;
  if (Array.isArray(value)) {
    const items = schema.items;
    celValue = value.map((v, i) => (items ? checkNode(v, items, [...path, i], issues) : toCelValue(v)));
    listTypeIssues(value, schema, path, issues);
  } else if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const child = childSchema(schema, key);
      setOwn(out, key, child ? checkNode(v, child, [...path, key], issues) : toCelValue(v));
    }
    celValue = out;
  } else if (typeof value === 'number' && schema.type !== 'number' && Number.isInteger(value)) {
    celValue = BigInt(value);
  } else {
    celValue = value;
  }
  for (const rule of schema['x-kubernetes-validations'] ?? []) {
    if (isTransitionRule(rule.rule)) continue;
    const failure = evaluateRule(rule, celValue);
    if (failure !== undefined) {
      const where = rule.fieldPath ? [...path, ...rule.fieldPath.replace(/^\./, '').split('.')] : path;
      issues.push({ path: joinPath(where), message: failure });
    }
  }
  return celValue;
}

/** Undefined when the rule holds, else the message the API server would print. */
function evaluateRule(rule: ValidationRule, self: unknown): string | undefined {
  try {
    if (compileRule(rule.rule)({ self }) === true) return undefined;
    return rule.message ?? `failed rule: ${rule.rule}`;
  } catch (err) {
    // Evaluation errors (e.g. a missing key) reject the object on the server too.
    return `${(err as Error).message.split('\n')[0]} evaluating rule: ${rule.rule}`;
  }
}

/** Values under x-kubernetes-preserve-unknown-fields: integers are int64 to the API server as well. */
function toCelValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toCelValue);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCelValue(v)]));
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return value;
}

function listTypeIssues(list: readonly unknown[], schema: StructuralSchema, path: Segments, issues: FieldIssue[]): void {
  const listType = schema['x-kubernetes-list-type'];
  if (listType !== 'set' && listType !== 'map') return;
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  const seen = new Set<string>();
  list.forEach((item, i) => {
    const identity = listType === 'set' ? item : Object.fromEntries(keys.map((k) => [k, (item as Record<string, unknown>)?.[k]]));
    const text = JSON.stringify(identity);
    if (seen.has(text)) issues.push({ path: joinPath([...path, i]), message: `Duplicate value: ${text}` });
    seen.add(text);
  });
}

function forEachRule(schema: StructuralSchema, path: Segments, visit: (rule: ValidationRule, path: Segments) => void): void {
  for (const rule of schema['x-kubernetes-validations'] ?? []) visit(rule, path);
  for (const [key, child] of Object.entries(schema.properties ?? {})) forEachRule(child, [...path, key], visit);
  if (typeof schema.additionalProperties === 'object') forEachRule(schema.additionalProperties, [...path, '*'], visit);
  if (schema.items) forEachRule(schema.items, [...path, 0], visit);
}
