import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

/**
 * A structural check of an object against a CRD's openAPIV3Schema, close to what
 * `kubectl apply --validate=strict` refuses: unknown fields, wrong types, enum values,
 * missing required fields. No CEL, no formats. The real API server dry-run is the
 * shared suite's; this runs everywhere in milliseconds.
 */
type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
};

export function loadCrdSchemas(...files: string[]): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const crd = doc.toJS() as { spec: { group: string; names: { kind: string }; versions: Array<{ name: string; schema: { openAPIV3Schema: Schema } }> } } | null;
      if (!crd) continue;
      for (const v of crd.spec.versions) out.set(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`, v.schema.openAPIV3Schema);
    }
  }
  return out;
}

export function schemaProblems(obj: { apiVersion: string; kind: string; [k: string]: unknown }, schemas: Map<string, Schema>): string[] {
  const schema = schemas.get(`${obj.apiVersion}/${obj.kind}`);
  if (!schema) return [`no CRD schema for ${obj.apiVersion} ${obj.kind}`];
  const problems: string[] = [];
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = obj;
  walk(rest, { ...schema, required: (schema.required ?? []).filter((r) => r !== 'metadata'), properties: Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => !['metadata', 'apiVersion', 'kind'].includes(k))) }, '', problems);
  return problems;
}

function walk(value: unknown, schema: Schema, path: string, problems: string[]): void {
  if (schema['x-kubernetes-int-or-string']) {
    if (typeof value !== 'string' && !Number.isInteger(value)) problems.push(`${path}: must be an integer or a string`);
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${path}: must be one of ${JSON.stringify(schema.enum)}, got ${JSON.stringify(value)}`);
  switch (schema.type) {
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return void problems.push(`${path}: must be an object`);
      const record = value as Record<string, unknown>;
      for (const req of schema.required ?? []) if (!(req in record)) problems.push(`${path}: missing required field "${req}"`);
      for (const [key, v] of Object.entries(record)) {
        const sub = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
        if (sub) walk(v, sub, `${path}.${key}`, problems);
        else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.additionalProperties !== true) problems.push(`${path}: unknown field "${key}"`);
      }
      return;
    }
    case 'array':
      if (!Array.isArray(value)) return void problems.push(`${path}: must be an array`);
      value.forEach((v, i) => schema.items && walk(v, schema.items, `${path}[${i}]`, problems));
      return;
    case 'string':
      if (typeof value !== 'string') problems.push(`${path}: must be a string, got ${JSON.stringify(value)}`);
      return;
    case 'integer':
      if (!Number.isInteger(value)) problems.push(`${path}: must be an integer`);
      return;
    case 'number':
      if (typeof value !== 'number') problems.push(`${path}: must be a number`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') problems.push(`${path}: must be true or false`);
      return;
    default:
  }
}
