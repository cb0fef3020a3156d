import { z } from 'zod';
import { quantity, strict } from './schema-kit.js';

/**
 * `review:` in an environment file: the thresholds and assumptions of `npm run analyze`
 * and `reports/<env>.md`. Every field has a default, so most environments omit it.
 */

export const reviewSchema = strict({
  /**
   * A Spot pool admitting fewer instance types than this gets a warning. AWS's Spot best
   * practices ask for flexibility across at least 10 instance types per workload.
   */
  spotMinTypes: z.number().int().min(1).default(10),
  /** A Spot pool admitting fewer instance families than this gets a warning. */
  spotMinFamilies: z.number().int().min(1).default(3),
  /** Admitted types with less memory than this get a warning. */
  memoryFloor: quantity.default('2Gi'),
}).prefault({});

export type ReviewConfig = z.infer<typeof reviewSchema>;
