/** What one `npm run synth` wrote, for the line it prints. */
export interface SynthSummary {
  /** Each environment written to dist/, in order, with its object count. */
  readonly environments: ReadonlyArray<{ readonly name: string; readonly objects: number }>;
  /** The dist directory as shown to the user (relative to the root), e.g. `dist`. */
  readonly distDir: string;
  /** The argocd directory as shown, e.g. `argocd`. */
  readonly argocdDir: string;
  /** What went into argocd/; absent when `--env` left it as it was. */
  readonly argocd?: { readonly objects: number; readonly crds: number };
  readonly ms: number;
}

/** Environments are named while their list fits in this many characters; beyond, only counts, so 300 environments still make one short line. */
export const NAMED_LIST_MAX = 80;

/**
 * The one line synth prints on success, e.g. `synthesized dev (4 objects), prod (8
 * objects) into dist/ and 12 Argo CD objects and 4 CRDs into argocd/ in 247 ms`, or
 * `synthesized 300 environments (3900 objects) into dist/ ...` when the names would not fit.
 */
export function summaryLine(s: SynthSummary): string {
  const named = s.environments.map((e) => `${e.name} (${e.objects} objects)`).join(', ');
  const total = s.environments.reduce((n, e) => n + e.objects, 0);
  const what = named.length <= NAMED_LIST_MAX ? named : `${count(s.environments.length, 'environment')} (${count(total, 'object')})`;
  const argocd = s.argocd
    ? ` and ${s.argocd.objects} Argo CD objects and ${s.argocd.crds} CRDs into ${s.argocdDir}/`
    : ` (${s.argocdDir}/ left as is: --env given)`;
  return `synthesized ${what} into ${s.distDir}/${argocd} in ${s.ms} ms`;
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
