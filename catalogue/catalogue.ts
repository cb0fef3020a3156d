import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError, issuesFromZod } from '../config/errors.js';

/**
 * The instance catalogue: one committed file per region, `catalogue/<region>.json`, read
 * by the analyzer (TypeScript) and the simulation (Go). This schema is the contract; the
 * Go side decodes the same fields. A file is either vendored (Karpenter's generated
 * reference data, no zone offerings, no Spot prices) or refreshed from a real account by
 * `npm run catalogue`.
 */
const price = z.number().nonnegative();

export const instanceTypeSchema = z.strictObject({
  /** Karpenter's labels for the type (`karpenter.k8s.aws/*`, `kubernetes.io/arch`, ...), values as strings. */
  labels: z.record(z.string(), z.string()),
  /** Allocatable resources as Karpenter computes them (capacity minus kube-reserved and eviction threshold). */
  resources: z.record(z.string(), z.string()),
  /** On-Demand USD/hour in the catalogue's region; null where the price table has none. */
  onDemandPrice: price.nullable(),
  /** Zones that offer the type; absent when unknown (the vendored file): then every zone is assumed. */
  zones: z.array(z.string()).optional(),
  /** Current Spot USD/hour per zone; absent when unknown. */
  spotPrices: z.record(z.string(), price).optional(),
});

export const catalogueSchema = z.strictObject({
  /** Where the data came from, in words. */
  origin: z.string().min(1),
  region: z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/),
  /** Date of the prices (YYYY-MM-DD). */
  pricesAsOf: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  /** Zones the catalogue knows offerings for; null when it has none (vendored data). */
  zones: z.array(z.string()).nullable(),
  instanceTypes: z.record(z.string(), instanceTypeSchema),
});

export type Catalogue = z.infer<typeof catalogueSchema>;
export type CatalogueInstanceType = z.infer<typeof instanceTypeSchema>;

export const cataloguePath = (region: string) => `catalogue/${region}.json`;

/** Reads and checks `catalogue/<region>.json` under root; errors name the file and field. */
export function readCatalogue(root: string, region: string): Catalogue {
  const file = cataloguePath(region);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(root, file), 'utf8'));
  } catch (err) {
    throw new ConfigError(file, [{ path: '', message: `cannot be read as JSON: ${(err as Error).message} (run \`npm run catalogue -- --region ${region}\`)` }]);
  }
  const parsed = catalogueSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(file, issuesFromZod(parsed.error, raw));
  return parsed.data;
}
