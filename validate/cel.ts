import { Environment } from '@marcbachmann/cel-js';

/**
 * CEL as the API server runs `x-kubernetes-validations`: `self` (and `oldSelf`) are
 * untyped here, and the Kubernetes library functions cel-js lacks are registered.
 * JavaScript regexes stand in for RE2: the rules in our CRDs use only the common
 * subset, and the differential test against the real API server watches the rest.
 */
function kubernetesEnvironment(): Environment {
  return (
    new Environment({ homogeneousAggregateLiterals: false })
      .registerVariable('self', 'dyn')
      .registerVariable('oldSelf', 'dyn')
      // Kubernetes regex library: first match, or '' when there is none.
      .registerFunction('string.find(string): string', (s: string, re: string) => new RegExp(re).exec(s)?.[0] ?? '')
      .registerFunction('string.findAll(string): list<string>', (s: string, re: string) => [...s.matchAll(new RegExp(re, 'g'))].map((m) => m[0]))
      // Kubernetes strings library (cel-go ext) members cel-js does not ship.
      .registerFunction('string.charAt(int): string', (s: string, i: bigint) => s.charAt(Number(i)))
      .registerFunction('string.replace(string, string): string', (s: string, from: string, to: string) => s.split(from).join(to))
      // cel-go's int(string) takes decimal digits only; cel-js's is BigInt(), which also takes
      // "" (as 0), "0o17" and "0x1f". Its built-in cannot be overridden, so rules are rewritten
      // to call this one (see compileRule).
      .registerFunction('k8sInt(string): int', (s: string) => {
        if (!/^[+-]?[0-9]+$/.test(s)) throw new Error(`type conversion error from 'string' to 'int'`);
        return BigInt(s);
      })
      .registerFunction('k8sInt(int): int', (i: bigint) => i)
      .registerFunction('k8sInt(double): int', (d: number) => BigInt(Math.trunc(d)))
  );
}

/** `int(` -> `k8sInt(` outside string literals. */
function withGoIntConversion(rule: string): string {
  return rule.replace(/("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|\bint\(/g, (_match, literal: string | undefined) => literal ?? 'k8sInt(');
}

export type CelProgram = (context: { self: unknown }) => unknown;

let environment: Environment | undefined;
const programs = new Map<string, CelProgram>();

/** Parses a rule once per process; later calls return the cached program. */
export function compileRule(rule: string): CelProgram {
  let program = programs.get(rule);
  if (!program) {
    environment ??= kubernetesEnvironment();
    const parsed = environment.parse(withGoIntConversion(rule));
    const checked = parsed.check();
    if (!checked.valid) throw checked.error;
    program = parsed as unknown as CelProgram;
    programs.set(rule, program);
  }
  return program;
}

/** Drops every parsed program: for measuring cold validation only. */
export function clearRuleCache(): void {
  programs.clear();
  environment = undefined;
}

/** Transition rules compare with the stored object; on create there is none, so the API server skips them. */
export function isTransitionRule(rule: string): boolean {
  return /\boldSelf\b/.test(rule);
}
