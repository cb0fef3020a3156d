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

/** Karpenter's duration pattern for expireAfter/consolidateAfter (kubebuilder validation). */
export const durationOrNever = z
  .string({ error: 'must be a duration string' })
  .regex(/^(([0-9]+(s|m|h))+|Never)$/, { error: 'must be a duration of whole s/m/h units such as 30s, 1m, 720h or 1h30m, or Never' });

export const duration = z
  .string({ error: 'must be a duration string' })
  .regex(/^([0-9]+(s|m|h))+$/, { error: 'must be a duration of whole s/m/h units such as 30s, 1m, 48h or 1h30m' });

/** Budget windows: hours and/or minutes only (Karpenter's pattern). */
export const budgetDuration = z
  .string({ error: 'must be a duration string' })
  .regex(/^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$/, { error: 'must be a duration in hours and/or minutes such as 8h, 30m or 1h30m' });

/** A Kubernetes resource.Quantity. */
export const quantity = z
  .union([z.string(), z.number()], { error: 'must be a Kubernetes quantity such as "100", 500m or 1000Gi' })
  .transform((v) => String(v))
  .pipe(
    z.string().regex(/^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/, {
      error: 'must be a Kubernetes quantity such as "100", 500m or 1000Gi',
    }),
  );

/** A zod enum of a TypeScript string enum's values, typed as the plain string literals. */
export function enumOf<T extends Record<string, string>>(e: T) {
  const values = Object.values(e) as [`${T[keyof T]}`, ...`${T[keyof T]}`[]];
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

/** Label and annotation keys: optional DNS-subdomain prefix, then a name. */
export const labelKey = z
  .string()
  .max(316)
  .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/, {
    error: 'must be a label key: an optional DNS prefix and "/", then letters, digits, "-", "_" or "."',
  });

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
