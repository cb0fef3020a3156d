import { Yaml, type Chart } from 'cdk8s';

/** A Kubernetes object as JSON, as cdk8s renders it. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [k: string]: unknown };
  readonly [k: string]: unknown;
}

/**
 * Runs every construct's validations (cdk8s `node.addValidation`) and throws them all
 * together with their construct paths.
 */
export function validateConstructs(chart: Chart): void {
  const errors = chart.node.findAll().flatMap((c) => c.node.validate().map((e) => `[${c.node.path}] ${e}`));
  if (errors.length > 0) throw new Error(`Validation failed:\n  ${errors.join('\n  ')}`);
}

/** The same file name cdk8s gives in FOLDER_PER_CHART_FILE_PER_RESOURCE mode. */
export function fileNameFor(m: Manifest): string {
  return `${`${m.kind}.${m.metadata.name}`.replace(/[^0-9a-zA-Z-_.]/g, '')}.k8s.yaml`;
}

/** One file per object; two objects that would share a file are an error, never an overwrite. */
export function renderFiles(objects: readonly Manifest[], where: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const m of objects) {
    const name = fileNameFor(m);
    if (files.has(name)) throw new Error(`${where}: two objects would be written to ${name}: ${m.kind} "${m.metadata.name}" is defined twice`);
    files.set(name, Yaml.stringify(m));
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
