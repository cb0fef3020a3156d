/**
 * IAM is eventually consistent: a role made a second ago can be unknown to EKS, which then
 * answers InvalidParameterException ("Role with arn ... could not be assumed", "principalArn
 * is invalid"). The SDK does not retry that (it is a 400), so the calls that pass a fresh
 * role to EKS go through here: bounded, exponential backoff with full jitter, each wait
 * printed.
 */

export interface RetryOptions {
  readonly log: (line: string) => void;
  /** Total time to keep trying; IAM propagation normally settles within seconds, rarely a minute. */
  readonly budgetMs?: number;
  readonly baseMs?: number;
  readonly capMs?: number;
  /** Injected in tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

/** An EKS complaint that a role or principal is unknown or not assumable: the signature of IAM propagation delay. */
export function isIamPropagation(err: unknown): boolean {
  const e = err as { name?: string; message?: string };
  return e.name === 'InvalidParameterException' && /role|principal|assume/i.test(e.message ?? '');
}

export async function retryIamPropagation<T>(what: string, call: () => Promise<T>, opts: RetryOptions): Promise<T> {
  const budget = opts.budgetMs ?? 120_000;
  const base = opts.baseMs ?? 2_000;
  const cap = opts.capMs ?? 20_000;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = opts.random ?? Math.random;
  let waited = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!isIamPropagation(err) || waited >= budget) throw err;
      const delay = Math.min(budget - waited, Math.round(Math.min(cap, base * 2 ** (attempt - 1)) * (0.5 + random() / 2)));
      opts.log(`  ${what}: IAM has not propagated the role yet (${(err as Error).message}); retry ${attempt} in ${(delay / 1000).toFixed(1)} s`);
      await sleep(delay);
      waited += delay;
    }
  }
}
