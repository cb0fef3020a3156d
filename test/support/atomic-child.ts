import { join } from 'node:path';
import { CommitError, commit, faultHookFromEnv, recoverCommit } from '../../config/atomic.js';

/**
 * A process that commits (or only recovers) so that a test can kill it at a given step
 * (KARPENTER_GITOPS_FAULT): `commit <root> <plan.json>` or `recover <root>`. The plan is
 * `{trees: {dir: {rel: text}}, files: {path: text}}`, paths relative to the root.
 */
const [mode, root, planJson] = process.argv.slice(2) as [string, string, string | undefined];
const opts = { root, faultHook: faultHookFromEnv(process.env.KARPENTER_GITOPS_FAULT), onRepair: (n: string) => process.stderr.write(`note: ${n}\n`) };
try {
  if (mode === 'commit') {
    const plan = JSON.parse(planJson!) as { trees: Record<string, Record<string, string>>; files: Record<string, string> };
    commit(
      {
        trees: new Map(Object.entries(plan.trees).map(([dir, files]) => [join(root, dir), new Map(Object.entries(files))])),
        files: new Map(Object.entries(plan.files).map(([file, text]) => [join(root, file), text])),
      },
      opts,
    );
  } else {
    recoverCommit(root, opts);
  }
} catch (err) {
  process.stderr.write(`${err instanceof CommitError ? 'commit error' : 'other error'}: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
