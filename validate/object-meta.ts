/**
 * `metadata` as the API server checks it: the CRD schema says little about it (at most
 * name constraints), the server validates it as ObjectMeta. Messages reuse the
 * apimachinery wording so they read the same as `kubectl apply` output.
 */

export interface MetaIssue {
  readonly path: string;
  readonly message: string;
}

/** JSON Schema of ObjectMeta's fields, for the structural check (types, unknown fields). */
export const objectMetaSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    labels: { type: 'object', additionalProperties: { type: 'string' }, nullable: true },
    annotations: { type: 'object', additionalProperties: { type: 'string' }, nullable: true },
    finalizers: { type: 'array', items: { type: 'string' }, nullable: true },
    ownerReferences: { type: 'array', items: { type: 'object' }, nullable: true },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    selfLink: { type: 'string' },
    generation: { type: 'integer' },
    creationTimestamp: { type: 'string', nullable: true },
    deletionTimestamp: { type: 'string', nullable: true },
    deletionGracePeriodSeconds: { type: 'integer', nullable: true },
    managedFields: { type: 'array', items: { type: 'object' }, nullable: true },
  },
} as const;

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')";
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const TOTAL_ANNOTATION_BYTES = 256 * 1024;

function subdomainProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > 253) out.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(value)) out.push(DNS1123_SUBDOMAIN_MSG);
  return out;
}

function qualifiedNameProblems(key: string): string[] {
  const slash = key.indexOf('/');
  const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : [undefined, key];
  const out: string[] = [];
  if (prefix !== undefined) {
    if (prefix === '') out.push('prefix part must be non-empty');
    else out.push(...subdomainProblems(prefix).map((p) => `prefix part ${p}`));
  }
  if (name === '') out.push('name part must be non-empty');
  else {
    if (name.length > 63) out.push('name part must be no more than 63 characters');
    if (!QUALIFIED_NAME.test(name)) {
      out.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')");
    }
  }
  return out;
}

function labelValueProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > 63) out.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(value)) {
    out.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')");
  }
  return out;
}

/** Semantic checks after the structural one passed (so the field types are right). */
export function objectMetaIssues(meta: {
  name?: string;
  generateName?: string;
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
}): MetaIssue[] {
  const issues: MetaIssue[] = [];
  const add = (path: string, value: string, problems: string[]) =>
    problems.forEach((p) => issues.push({ path, message: `Invalid value: ${JSON.stringify(value)}: ${p}` }));
  if (meta.name === undefined && meta.generateName === undefined) {
    issues.push({ path: 'metadata.name', message: 'Required value: name or generateName is required' });
  }
  if (meta.name !== undefined) add('metadata.name', meta.name, subdomainProblems(meta.name));
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    add('metadata.labels', key, qualifiedNameProblems(key));
    add(`metadata.labels[${key}]`, value, labelValueProblems(value));
  }
  let bytes = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    add('metadata.annotations', key, qualifiedNameProblems(key.toLowerCase()));
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (bytes > TOTAL_ANNOTATION_BYTES) {
    issues.push({ path: 'metadata.annotations', message: `Too long: must have at most ${TOTAL_ANNOTATION_BYTES} bytes` });
  }
  return issues;
}
