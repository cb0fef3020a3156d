import { fileURLToPath } from 'node:url';
import { fileNameFor, type Manifest } from '../charts/render.js';
import { ConfigError } from '../config/errors.js';
import { ManifestValidator } from './validator.js';

/** One violation, located by the file it would have been written to. */
export interface ManifestViolation {
  /** `dist/<env>/<file>` */
  readonly file: string;
  /** `Kind/name` */
  readonly object: string;
  readonly path: string;
  readonly message: string;
}

/**
 * Rendered objects a CRD rejects. A ConfigError, so the CLI prints it and exits 1
 * without writing anything; each line reads `dist/<env>/<file>: <path>: <message>`.
 */
export class ManifestError extends ConfigError {
  constructor(public readonly violations: readonly ManifestViolation[]) {
    super(violations[0]?.file ?? 'dist', violations.map((v) => ({ path: v.path, message: v.message })));
    this.name = 'ManifestError';
    this.message = violations.map((v) => `${v.file}: ${v.path === '' ? '(top level)' : v.path}: ${v.message}`).join('\n');
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

/**
 * Checks every custom resource (NodePool, EC2NodeClass, Argo CD kinds, ...) against its
 * vendored CRD and throws one ManifestError listing every violation. Core kinds
 * (Deployment, PodDisruptionBudget) have no CRD here; the API server suite covers them.
 */
export function validateManifests(groups: ReadonlyArray<{ readonly dir: string; readonly objects: readonly Manifest[] }>): void {
  const validator = sharedValidator();
  const violations: ManifestViolation[] = [];
  for (const { dir, objects } of groups) {
    for (const obj of objects) {
      if (!validator.handles(obj)) continue;
      for (const issue of validator.validate(obj)) violations.push({ file: `${dir}/${fileNameFor(obj)}`, ...issue });
    }
  }
  if (violations.length > 0) throw new ManifestError(violations);
}
