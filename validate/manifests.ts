import { resolve } from 'node:path';
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

const validators = new Map<string, ManifestValidator>();

/** One validator per repository root, so CRDs are parsed and rules compiled once per process. */
export function validatorFor(root: string): ManifestValidator {
  const key = resolve(root);
  let validator = validators.get(key);
  if (!validator) {
    validator = new ManifestValidator({ root: key });
    validators.set(key, validator);
  }
  return validator;
}

/**
 * Checks every custom resource (NodePool, EC2NodeClass, Argo CD kinds, ...) against its
 * vendored CRD and throws one ManifestError listing every violation. Core kinds
 * (Deployment, PodDisruptionBudget) have no CRD here; the API server suite covers them.
 */
export function validateManifests(root: string, groups: ReadonlyArray<{ readonly dir: string; readonly objects: readonly Manifest[] }>): void {
  const validator = validatorFor(root);
  const violations: ManifestViolation[] = [];
  for (const { dir, objects } of groups) {
    for (const obj of objects) {
      if (!validator.handles(obj)) continue;
      for (const issue of validator.validate(obj)) violations.push({ file: `${dir}/${fileNameFor(obj)}`, ...issue });
    }
  }
  if (violations.length > 0) throw new ManifestError(violations);
}
