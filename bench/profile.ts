import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The part of a V8 .cpuprofile we read. */
interface CpuProfile {
  readonly nodes: ReadonlyArray<{ readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }>;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileLine {
  readonly ms: number;
  readonly share: number;
  readonly what: string;
}

/**
 * Source file of each line of a bundle: esbuild heads each module with a `// <path>`
 * comment, so a frame in the bundle is credited to the package or source it came from.
 */
const bundleIndexes = new Map<string, Array<{ line: number; source: string }>>();
function sourceOf(url: string, line: number): string | undefined {
  if (!url.includes('/.cache/karpenter-gitops/run/')) return undefined;
  let index = bundleIndexes.get(url);
  if (!index) {
    index = [];
    readFileSync(fileURLToPath(url), 'utf8')
      .split('\n')
      .forEach((text, i) => {
        const m = /^\/\/ (\S+\.[cm]?[jt]sx?)$/.exec(text);
        if (m) index!.push({ line: i, source: m[1]! });
      });
    bundleIndexes.set(url, index);
  }
  let found: string | undefined;
  for (const entry of index) {
    if (entry.line > line) break;
    found = entry.source;
  }
  return found;
}

/** Where a frame's code lives: a package name, one of our source files, or Node's internals. */
function ownerOf(url: string, functionName: string, source: string | undefined): string {
  const path = source ?? url;
  // The innermost package: cdk8s/node_modules/yaml is cdk8s's own copy of yaml.
  const packages = [...path.matchAll(/node_modules\/(?!\.cache)((?:@[^/]+\/)?[^/]+)/g)].map((m) => m[1]!);
  if (packages.length > 0) return packages.length === 1 ? packages[0]! : `${packages.at(-1)} (${packages.at(-2)}'s copy)`;
  if (source) return source;
  if (url.startsWith('node:')) return /^node:internal\/(modules|deps)\//.test(url) ? 'node: module loading' : url;
  if (url === '') return functionName.startsWith('(') ? functionName : 'native';
  return url.replace(/^.*\/(?=[^/]+$)/, '');
}

/**
 * Self time of a profile (the one .cpuprofile in `dir`), top `n` functions and top `n`
 * owners (packages, our source files, Node's module loader, the garbage collector).
 */
export function topOfProfile(dir: string, n: number): { total: number; functions: ProfileLine[]; owners: ProfileLine[] } {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`${dir}: no .cpuprofile written`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + profile.timeDeltas[i]!));
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    total += us;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    const source = sourceOf(url, lineNumber);
    const where = source ? ` ${source.replace(/^.*node_modules\//, '')}` : url === '' ? '' : ` ${url.replace(/^.*\/(?=[^/]+$)/, '')}:${lineNumber + 1}`;
    const key = `${functionName || '(anonymous)'}${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const owner = ownerOf(url, functionName, source);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + us);
  }
  const top = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([what, us]) => ({ ms: us / 1000, share: us / total, what }));
  return { total: total / 1000, functions: top(byFunction), owners: top(byOwner) };
}
