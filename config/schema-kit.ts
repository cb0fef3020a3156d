import { z } from 'zod';

/**
 * Building blocks shared by the environment and outputs schemas. Every message is the
 * "must be ..." half of an error line; the formatter in errors.ts appends ", got <value>".
 */

/** An object that rejects unknown keys and says which keys it knows. */
export function strict<T extends z.core.$ZodLooseShape>(shape: T) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? `allowed: ${allowed}` : undefined),
  });
}

export const nonEmpty = (what: string) => z.string({ error: `must be ${what}` }).min(1, { error: `must be ${what}, not empty` });

/**
 * Go's time.ParseDuration (go/src/time/format.go, ParseDuration) refuses a total above
 * 2^63-1 nanoseconds ("invalid duration"). Karpenter decodes expireAfter and
 * consolidateAfter with it (sigs.k8s.io/karpenter@v1.13.0 pkg/apis/v1/duration.go,
 * NillableDuration.UnmarshalJSON) and terminationGracePeriod and budget durations as
 * metav1.Duration (same parser), while the CRD only has a pattern: the API server stores
 * 9999999999h and Karpenter then cannot read the NodePool.
 */
export const GO_MAX_DURATION = '2562047h47m16s';
const GO_MAX_DURATION_NS = 2n ** 63n - 1n;
const UNIT_NS: Record<string, bigint> = { h: 3_600_000_000_000n, m: 60_000_000_000n, s: 1_000_000_000n };

/** True when a duration of whole h/m/s units is beyond what Go can hold. */
export function exceedsGoDuration(text: string): boolean {
  let total = 0n;
  for (const [, n, unit] of text.matchAll(/([0-9]+)(h|m|s)/g)) total += BigInt(n!) * UNIT_NS[unit!]!;
  return total > GO_MAX_DURATION_NS;
}

const GO_RANGE = `must be at most ${GO_MAX_DURATION} (Go's time.ParseDuration limit of 2^63-1 ns: Karpenter cannot decode a longer duration)`;
const withinGo = <T extends z.ZodType<string>>(s: T) => s.refine((v) => v === 'Never' || !exceedsGoDuration(v), { error: GO_RANGE });

/** Karpenter's duration pattern for expireAfter/consolidateAfter (kubebuilder validation). */
export const durationOrNever = withinGo(
  z
    .string({ error: 'must be a duration string' })
    .regex(/^(([0-9]+(s|m|h))+|Never)$/, { error: 'must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never' }),
);

export const duration = withinGo(
  z
    .string({ error: 'must be a duration string' })
    .regex(/^([0-9]+(s|m|h))+$/, { error: 'must be a duration of whole s/m/h units such as 30s, 1m, 48h or 1h30m' }),
);

/** Budget windows: hours and/or minutes only (Karpenter's pattern). */
export const budgetDuration = withinGo(
  z
    .string({ error: 'must be a duration string' })
    .regex(/^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$/, { error: 'must be a duration in hours and/or minutes such as 8h, 30m or 1h30m' }),
);

const QUANTITY_PATTERN = /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;

/** A Kubernetes resource.Quantity (k8s.io/apimachinery pkg/api/resource/quantity.go, ParseQuantity). */
export const quantity = z
  .union([z.string(), z.number()], { error: 'must be a Kubernetes quantity such as "100", 500m or 1000Gi' })
  .transform((v) => String(v))
  .pipe(z.string().regex(QUANTITY_PATTERN, { error: 'must be a Kubernetes quantity such as "100", 500m or 1000Gi' }));

/**
 * A quantity of a resource: never negative. Kubernetes refuses negative requests and
 * limits (kubernetes@v1.36.5 pkg/apis/core/validation/validation.go,
 * ValidateResourceQuantityValue -> ValidateNonnegativeQuantity); Karpenter compares
 * NodePool limits with usage, so a negative limit blocks every launch.
 */
export const nonNegativeQuantity = quantity.refine((q) => !q.startsWith('-') || quantitySign(q) === 0, { error: 'must be a Kubernetes quantity of 0 or more such as "100", 500m or 1000Gi' });

const SUFFIX: Record<string, [bigint, bigint]> = {
  n: [1n, 10n ** 9n], u: [1n, 10n ** 6n], m: [1n, 1000n], '': [1n, 1n],
  k: [10n ** 3n, 1n], M: [10n ** 6n, 1n], G: [10n ** 9n, 1n], T: [10n ** 12n, 1n], P: [10n ** 15n, 1n], E: [10n ** 18n, 1n],
  Ki: [2n ** 10n, 1n], Mi: [2n ** 20n, 1n], Gi: [2n ** 30n, 1n], Ti: [2n ** 40n, 1n], Pi: [2n ** 50n, 1n], Ei: [2n ** 60n, 1n],
};

/** A valid quantity as an exact fraction num/den (den > 0), for comparisons. */
export function quantityFraction(text: string): { num: bigint; den: bigint } {
  const m = /^([+-])?([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(text)!;
  const frac = m[3] ?? '';
  let num = BigInt(`${m[2] || '0'}${frac}` || '0');
  let den = 10n ** BigInt(frac.length);
  const suffix = m[4]!;
  if (/^[eE]/.test(suffix)) {
    // Exponents in quantities are integers in practice; a fractional one is rounded away.
    const exp = Math.trunc(Number(suffix.slice(1)));
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  } else {
    const [mul, div] = SUFFIX[suffix]!;
    num *= mul;
    den *= div;
  }
  return { num: m[1] === '-' ? -num : num, den };
}

function quantitySign(text: string): number {
  const { num } = quantityFraction(text);
  return num === 0n ? 0 : num < 0n ? -1 : 1;
}

/** -1, 0 or 1 as a < b, a = b, a > b (resource.Quantity.Cmp). */
export function compareQuantities(a: string, b: string): number {
  const x = quantityFraction(a);
  const y = quantityFraction(b);
  const d = x.num * y.den - y.num * x.den;
  return d === 0n ? 0 : d < 0n ? -1 : 1;
}

/** A zod enum of a TypeScript string enum's values, typed as the plain string literals. */
export function enumOf<T extends Record<string, string>>(e: T) {
  const values = Object.values(e) as [`${T[keyof T]}`, ...`${T[keyof T]}`[]];
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

/**
 * Label, annotation, taint and requirement keys: a qualified name, as
 * k8s.io/apimachinery@v0.35.3 pkg/util/validation/validation.go IsQualifiedName checks
 * it: an optional DNS-1123 subdomain prefix of at most 253 characters and "/", then a
 * name of at most 63. The CRDs check only the pattern (and 316 characters in all);
 * Karpenter's RuntimeValidate checks the lengths too (sigs.k8s.io/karpenter@v1.13.0
 * pkg/apis/v1/nodepool_validation.go validateLabels, nodeclaim_validation.go
 * validateTaintsField and ValidateRequirement) and marks the NodePool not ready.
 */
export const qualifiedName = (what: string) =>
  z
    .string()
    // 253 + "/" + 63: the longest qualified name; also keeps the regex below off huge input.
    .max(317, { error: `must be ${what} of at most 317 characters (a 253-character prefix, "/", a 63-character name)` })
    .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/, {
      error: `must be ${what}: an optional DNS prefix and "/", then letters, digits, "-", "_" or "."`,
    })
    .superRefine((key, ctx) => {
      const slash = key.indexOf('/');
      const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : ['', key];
      if (name.length > 63) {
        ctx.addIssue({ code: 'custom', message: `must have a name part (after the "/") of at most 63 characters (Kubernetes' IsQualifiedName); this one has ${name.length}`, input: key });
      }
      if (prefix.length > 253) {
        ctx.addIssue({ code: 'custom', message: `must have a prefix (before the "/") of at most 253 characters (Kubernetes' IsQualifiedName); this one has ${prefix.length}`, input: key });
      }
    });
export const labelKey = qualifiedName('a label key');

export const labelValue = z
  .string({ error: 'must be a string' })
  .max(63, { error: 'must be at most 63 characters' })
  .regex(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/, { error: 'must be a label value: letters, digits, "-", "_" or ".", starting and ending alphanumeric' });

/** Kubernetes object names (RFC 1123 subdomain). */
export const objectName = z
  .string({ error: 'must be a name' })
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    error: 'must be a lowercase RFC 1123 name (a-z, 0-9, "-" and ".", starting and ending alphanumeric)',
  });

/** Adds one issue per duplicate `name` in a list. */
export function uniqueNames<T extends { name: string }>(items: readonly T[], ctx: z.core.$RefinementCtx<T[]>, what: string): void {
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const first = seen.get(item.name);
    if (first !== undefined) {
      ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `must be unique among ${what}; "${item.name}" is already used at index ${first}`, input: item.name });
    } else seen.set(item.name, i);
  });
}

/**
 * Fields of free text where `${...}` is legitimate (shell in user data, commands and env
 * values; annotation values): the placeholder check skips them.
 */
const FREE_TEXT_FIELDS: ReadonlySet<string> = new Set(['userData', 'command', 'args', 'env', 'annotations', 'podAnnotations']);

/**
 * A leftover `${...}` placeholder: nothing expands environment files (they are not
 * templates), so it would reach Kubernetes or AWS as written, e.g. a selector tag value
 * `${CLUSTER_NAME}` that matches no subnet. A project rule: the file is the only source
 * of the value. Adds one issue per string that has one, keys included.
 */
export function placeholderIssues(value: unknown, ctx: z.core.$RefinementCtx<unknown>, path: PropertyKey[] = []): void {
  const found = (text: string) => /\$\{[^}]*\}/.exec(text)?.[0];
  if (typeof value === 'string') {
    const p = found(value);
    if (p) ctx.addIssue({ code: 'custom', path, message: `must not contain the placeholder "${p}": environment files are not templated, so it would reach the cluster as written; write the value itself`, input: value });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => placeholderIssues(v, ctx, [...path, i]));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = found(k);
      if (p) ctx.addIssue({ code: 'custom', path: [...path, k], message: `key must not contain the placeholder "${p}": environment files are not templated; write the value itself`, input: k });
      if (!FREE_TEXT_FIELDS.has(k)) placeholderIssues(v, ctx, [...path, k]);
    }
  }
}
