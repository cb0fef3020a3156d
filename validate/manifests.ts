import { fileURLToPath } from 'node:url';
import { fileNameFor, type Manifest } from '../charts/render.js';
import { ConfigError, describeValue } from '../config/errors.js';
import { ManifestValidator } from './validator.js';

/** One violation, located by the file it would have been written to, or the input that produced it. */
export interface ManifestViolation {
  /** `environments/<env>.yaml` when the field maps back to what the user wrote, else `dist/<env>/<file>` */
  readonly file: string;
  /** `Kind/name` */
  readonly object: string;
  readonly path: string;
  readonly message: string;
}

/**
 * Rendered objects a CRD rejects. A ConfigError, so the CLI prints it and exits 1
 * without writing anything; each line reads `<file>: <path>: <message>`.
 */
export class ManifestError extends ConfigError {
  constructor(public readonly violations: readonly ManifestViolation[]) {
    super(violations[0]?.file ?? 'dist', violations.map((v) => ({ path: v.path, message: v.message })));
    this.name = 'ManifestError';
    this.message = violations.map((v) => `${v.file}: ${v.path === '' ? '(top level)' : v.path}: ${v.message}`).join('\n');
  }

  /** One ConfigError per file, so they sort with the other stages' errors. */
  byFile(): ConfigError[] {
    const files = [...new Set(this.violations.map((v) => v.file))];
    return files.map((f) => new ConfigError(f, this.violations.filter((v) => v.file === f).map((v) => ({ path: v.path, message: v.message }))));
  }
}

/** The toolchain's own checkout: the vendored CRDs belong to the code, not to the environments being synthesized. */
const TOOLCHAIN_ROOT = fileURLToPath(new URL('..', import.meta.url));

let shared: ManifestValidator | undefined;

/** One validator per process, so CRDs are parsed and rules compiled once. */
export function sharedValidator(): ManifestValidator {
  shared ??= new ManifestValidator({ root: TOOLCHAIN_ROOT });
  return shared;
}

export type Segments = readonly (string | number)[];

/** Where a field of a rendered object came from: the input file and the path in it. */
export interface Origin {
  readonly file: string;
  readonly path: Segments;
}

export interface ManifestGroup {
  /** `dist/<env>`: where the objects would be written. */
  readonly dir: string;
  readonly objects: readonly Manifest[];
  /** Maps a field of an object back to the input that produced it; undefined = report it in dist/. */
  readonly origin?: (obj: Manifest, path: Segments) => Origin | undefined;
}

/**
 * Checks every custom resource (NodePool, EC2NodeClass, Argo CD kinds, ...) against its
 * vendored CRD and throws one ManifestError listing every violation. Core kinds
 * (Deployment, PodDisruptionBudget) have no CRD here; the API server suite covers them.
 * A violation whose field maps back to the environment file is reported there, with the
 * rendered value; the CRD's own message is kept, and a pattern gets its meaning in words.
 */
export function validateManifests(groups: ReadonlyArray<ManifestGroup>): void {
  const validator = sharedValidator();
  const violations: ManifestViolation[] = [];
  for (const { dir, objects, origin } of groups) {
    for (const obj of objects) {
      if (!validator.handles(obj)) continue;
      for (const issue of validator.validate(obj)) {
        const segments = parsePath(issue.path);
        const from = origin?.(obj, segments);
        const message = explainPattern(issue.message);
        if (from) {
          const value = valueAt(obj, segments);
          // Pattern and enum messages quote the value already.
          const got = value === undefined || message.includes('Invalid value:') || message.includes('Unsupported value:') ? '' : `, got ${describeValue(value)}`;
          violations.push({ file: from.file, object: issue.object, path: formatSegments(from.path), message: `${message} (${issue.object} ${issue.path})${got}` });
        } else {
          violations.push({ file: `${dir}/${fileNameFor(obj)}`, object: issue.object, path: issue.path, message });
        }
      }
    }
  }
  if (violations.length > 0) throw new ManifestError(violations);
}

/** `spec.a[0][karpenter.sh/x]` (validate/schema.ts joinPath) -> segments. */
export function parsePath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /\[([^\]]*)\]|\.?([^.[\]]+)/g;
  for (let m = re.exec(path); m; m = re.exec(path)) {
    if (m[1] !== undefined) out.push(/^\d+$/.test(m[1]) ? Number(m[1]) : m[1]);
    else out.push(m[2]!);
  }
  return out;
}

/** Segments as the environment file's messages write paths (config/errors.ts formatPath). */
function formatSegments(path: Segments): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += `[${JSON.stringify(seg)}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

function valueAt(root: unknown, path: Segments): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/**
 * The vendored CRDs' patterns, in words. The regex stays in the message (it is what the API
 * server prints); the words say what a user may write.
 */
const PATTERN_WORDS: Readonly<Record<string, string>> = {
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$':
    'a label key: an optional lowercase DNS prefix and "/", then letters, digits, "-", "_" or ".", starting and ending alphanumeric',
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$':
    'a label key: an optional lowercase DNS prefix and "/", then letters, digits, "-", "_" or ".", starting and ending alphanumeric',
  '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$': 'a label value: empty, or letters, digits, "-", "_" or ".", starting and ending alphanumeric',
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$':
    'a Kubernetes quantity: a number with an optional suffix, such as 100, 500m, 1.5 or 1000Gi',
  '^(([0-9]+(s|m|h))+|Never)$': 'a duration of whole s/m/h units such as 30s, 720h or 1h30m, or Never',
  '^([0-9]+(s|m|h))+$': 'a duration of whole s/m/h units such as 30s, 48h or 1h30m',
  '^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$': 'a duration in hours and/or minutes such as 8h, 30m or 1h30m',
  '^((100|[0-9]{1,2})%|[0-9]+)$': 'a whole number of nodes, or a percentage from 0% to 100%',
  '^[0-9]{12}$': 'a 12-digit AWS account id',
  '^cr-[0-9a-z]+$': 'a capacity reservation id such as cr-0123456789abcdef0',
  '^pg-[0-9a-z]+$': 'a placement group id such as pg-0123456789abcdef0',
  'subnet-[0-9a-z]+': 'a subnet id such as subnet-0123456789abcdef0',
  'sg-[0-9a-z]+': 'a security group id such as sg-0123456789abcdef0',
  'ami-[0-9a-z]+': 'an AMI id such as ami-0123456789abcdef0',
  '^[^/]*$': 'a name without "/"',
  '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$': 'letters, digits, "_", "," and ":", starting with a letter',
  '^([A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?|)$': 'empty, or letters, digits, "_", "," and ":", starting with a letter',
  '^\\d+(\\.\\d+)?$': 'a number such as 2 or 1.5',
};

function explainPattern(message: string): string {
  const m = /should match '(.*)'$/.exec(message);
  const words = m ? PATTERN_WORDS[m[1]!] : undefined;
  return words ? `${message}: must be ${words}` : message;
}
