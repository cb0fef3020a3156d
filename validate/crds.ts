import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { cachedJson } from './cache.js';

/** A JSON-Schema node of a CRD's `openAPIV3Schema` (structural schema, Kubernetes flavour). */
export interface StructuralSchema {
  type?: string;
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  required?: string[];
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  [keyword: string]: unknown;
}

/** One `x-kubernetes-validations` entry. */
export interface ValidationRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly fieldPath?: string;
  readonly reason?: string;
}

/** Where one served version of one CRD lives, known before its (slow) YAML is parsed. */
export interface CrdLocation {
  readonly file: string;
  readonly group: string;
  readonly kind: string;
}

export interface CrdVersion {
  readonly group: string;
  readonly kind: string;
  readonly version: string;
  readonly namespaced: boolean;
  readonly schema: StructuralSchema;
}

/** The vendored CRD directories, relative to the repository root. */
export const CRD_DIRS = ['crds/karpenter', 'crds/argocd'] as const;

/**
 * Finds which file defines which group/kind by reading only `spec.group` and
 * `spec.names.kind` with a regex: parsing the YAML of the ApplicationSet CRD alone
 * takes seconds, so a CRD is parsed only when an object of its kind is validated.
 */
export function locateCrds(root: string, dirs: readonly string[] = CRD_DIRS): Map<string, CrdLocation> {
  const found = new Map<string, CrdLocation>();
  for (const dir of dirs) {
    for (const name of readdirSync(join(root, dir)).filter((f) => f.endsWith('.yaml')).sort()) {
      const file = join(root, dir, name);
      const text = readFileSync(file, 'utf8');
      if (!/^kind:\s*CustomResourceDefinition\s*$/m.test(text)) continue;
      const group = /^spec:\s*\n(?:[ \t].*\n)*?[ \t]+group:\s*(\S+)\s*$/m.exec(text)?.[1];
      const kind = /^[ \t]+names:\s*\n(?:[ \t].*\n)*?[ \t]+kind:\s*(\S+)\s*$/m.exec(text)?.[1];
      if (!group || !kind) throw new Error(`${file}: must declare spec.group and spec.names.kind, got group ${group} and kind ${kind}`);
      found.set(`${group}/${kind}`, { file, group, kind });
    }
  }
  return found;
}

/** The served versions of a CRD file by name; the parsed YAML is cached (see cache.ts). */
export function loadCrd(location: CrdLocation, cacheDir?: string): Map<string, CrdVersion> {
  const versions = cachedJson(cacheDir, readFileSync(location.file, 'utf8'), (text) => servedVersions(location.file, text), SERVED_VERSIONS_DERIVER);
  return new Map(versions.map((v) => [v.version, v]));
}

/** Bump the suffix when servedVersions changes what it returns; the yaml version covers the parser. */
const SERVED_VERSIONS_DERIVER = `servedVersions/1 yaml@${(createRequire(import.meta.url)('yaml/package.json') as { version: string }).version}`;

function servedVersions(file: string, text: string): CrdVersion[] {
  const crd = parse(text) as {
    spec: { group: string; scope: string; names: { kind: string }; versions: Array<{ name: string; served: boolean; schema?: { openAPIV3Schema?: StructuralSchema } }> };
  };
  return crd.spec.versions
    .filter((v) => v.served)
    .map((v) => {
      const schema = v.schema?.openAPIV3Schema;
      if (!schema) throw new Error(`${file}: version ${v.name} must have schema.openAPIV3Schema, got none`);
      return { group: crd.spec.group, kind: crd.spec.names.kind, version: v.name, namespaced: crd.spec.scope === 'Namespaced', schema };
    });
}
