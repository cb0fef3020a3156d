import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { AnySchema, ValidateFunction } from 'ajv';
import { writeFileAtomic } from '../config/atomic.js';

/**
 * A content-addressed cache for the two slow steps of validation: parsing CRD YAML
 * (~130 ms for the EC2NodeClass CRD, seconds for ApplicationSet) and compiling its
 * schema with ajv (~100-200 ms). Entries are named by the SHA-256 of what they are
 * derived from, so a changed CRD or converter never reads a stale entry, and a cache
 * that cannot be written (read-only checkout) only costs time.
 */

const require = createRequire(import.meta.url);
const AJV_VERSION = (require('ajv/package.json') as { version: string }).version;

/** KARPENTER_GITOPS_CACHE_DIR, else node_modules/.cache/karpenter-gitops/validate under the root. */
export function cacheDirFor(root: string): string {
  return process.env.KARPENTER_GITOPS_CACHE_DIR ?? join(root, 'node_modules', '.cache', 'karpenter-gitops', 'validate');
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function read(dir: string | undefined, name: string): string | undefined {
  if (!dir) return undefined;
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch {
    return undefined;
  }
}

function write(dir: string | undefined, name: string, text: string): void {
  if (!dir) return;
  try {
    writeFileAtomic(join(dir, name), text);
  } catch {
    // A cache we cannot write is a slower run, not a failure.
  }
}

/** `derive(text)` as JSON, cached under the hash of `text`. */
export function cachedJson<T>(dir: string | undefined, text: string, derive: (text: string) => T, deriver: string): T {
  // `deriver` names the code that turns text into the value (and its version): change it and old entries are never read.
  const name = `${sha256(`${deriver}\n${text}`)}.json`;
  const hit = read(dir, name);
  if (hit !== undefined) return JSON.parse(hit) as T;
  const value = derive(text);
  write(dir, name, JSON.stringify(value));
  return value;
}

const AJV_OPTIONS = {
  allErrors: true,
  strict: true,
  strictTypes: false,
  strictRequired: false,
  validateSchema: false,
} as const;
/** Standalone source for the cache; optimize off: on these schemas it costs compile time and saves little code. */
const CODE_OPTIONS = { source: true, optimize: false } as const;

/**
 * An ajv validator for `schema`, from ajv's standalone code when cached. Loading that
 * code needs neither ajv's compiler nor the schema walk, which is what makes a warm
 * `npm run synth` cheap.
 */
export function cachedValidator(dir: string | undefined, schema: AnySchema): ValidateFunction {
  // Everything the generated code depends on is in the name: ajv's version, its options, the schema.
  const name = `${sha256(`${AJV_VERSION}\n${JSON.stringify(AJV_OPTIONS)}\n${JSON.stringify(CODE_OPTIONS)}\n${JSON.stringify(schema)}`)}.cjs`;
  const hit = read(dir, name);
  if (hit !== undefined) {
    const module = { exports: {} as ValidateFunction };
    // The standalone code is CommonJS that requires ajv's runtime and ajv-formats: resolve them from here.
    new Function('require', 'module', 'exports', hit)(require, module, module.exports);
    return module.exports;
  }
  const { Ajv, _ } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as { default: (ajv: InstanceType<typeof Ajv>) => InstanceType<typeof Ajv> };
  const standaloneCode = (require('ajv/dist/standalone') as { default: (ajv: InstanceType<typeof Ajv>, v: ValidateFunction) => string }).default;
  const ajv = addFormats.default(
    new Ajv({ ...AJV_OPTIONS, code: { ...CODE_OPTIONS, formats: _`require("ajv-formats/dist/formats").fullFormats` } }),
  );
  const validate = ajv.compile(schema);
  write(dir, name, standaloneCode(ajv, validate));
  return validate;
}
