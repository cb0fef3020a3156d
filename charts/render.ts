import type { Chart } from 'cdk8s';
import { Document, parse, visit } from 'yaml';

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
    files.set(name, toYaml(m));
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Integers as Go's strconv.ParseInt(s, 0, 64) reads them, which is how go-yaml v2 (kubectl,
 * Argo CD and the API server's YAML path, through sigs.k8s.io/yaml) resolves a plain scalar:
 * `0o17`, `0x1F`, `0b101` and `1_000` are numbers there although YAML 1.1 and 1.2 disagree.
 */
const GO_INT = /^[-+]?(0[xX][_0-9a-fA-F]+|0[oO][_0-7]+|0[bB][_01]+|[0-9][_0-9]*)$/;

/**
 * True when a string written as a plain scalar would be read back as something else by
 * some reader of our output: YAML 1.1 (`yes`, `on`, `~`, `1:20`, `.inf`, `017`), YAML 1.2
 * (`0o17`, `null`, `1e3`) or go-yaml v2 (the Go integer syntax above).
 */
export function plainScalarIsAmbiguous(text: string): boolean {
  // Most strings of a manifest are names and keys: a letter, then letters, digits and
  // `_./-`. No YAML 1.1 or 1.2 type (numbers, dates, .inf/.nan, ~, <<) starts with a
  // letter except the booleans and nulls, and the `yaml` package's YAML 1.1 float without
  // a mantissa (`e0`, `E+5`), so those strings are plain without parsing them twice (which
  // was most of synth's time; test/charts/render.test.ts checks the shortcut against the
  // parse on generated strings).
  if (PLAIN_NAME.test(text) && !EXPONENT_FIRST.test(text) && !WORDS.has(text.toLowerCase())) return false;
  let known = ambiguity.get(text);
  if (known === undefined) ambiguity.set(text, (known = parsedAmbiguous(text)));
  return known;
}

const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_./-]*$/;
const EXPONENT_FIRST = /^[eE][-+0-9_.]/;
/** Letter-first words some YAML schema reads as a boolean or null (compared lower-cased). */
const WORDS = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null']);
/** Other strings repeat too (values of keys, quantities): parsed once per run. */
const ambiguity = new Map<string, boolean>();

function parsedAmbiguous(text: string): boolean {
  // Multi-line text is written as a block scalar (`|`), which every reader takes as a string.
  if (text.includes('\n')) return false;
  if (GO_INT.test(text)) return true;
  for (const version of ['1.1', '1.2'] as const) {
    try {
      if (parse(text, { version }) !== text) return true;
    } catch {
      return true; // not a valid plain scalar at all: quoting is always safe
    }
  }
  return false;
}

/**
 * One object as YAML, the way cdk8s writes it (YAML 1.1 schema, no line folding), except
 * that every string key or value another reader could take for a number, boolean or null
 * is double-quoted: `team: "0o17"` must reach the API server as a string. The one place
 * dist/ and argocd/ are rendered, so both get it.
 */
export function toYaml(value: unknown): string {
  const doc = new Document(value, { version: '1.1', keepUndefined: true });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && plainScalarIsAmbiguous(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}
