import { parseArgs } from 'node:util';

/**
 * `npm run diff`'s command line, judged before the review's modules load (diff/main.ts):
 * --help and a bad argument answer without loading the synth, git or the simulation.
 */

export const USAGE = 'Usage: npm run diff [-- --base <git ref>] [--env <name>] [--fail-on drift|pending]... [--no-simulate]';

export const FAIL_ON = ['drift', 'pending'] as const;

/** A bad command line: its message, then the usage, exit 2. */
export class UsageError extends Error {}

/** What stderr gets for a refused command line (or git refusing the base). */
export const refusal = (message: string): string => `error: ${message}\n${USAGE}\n`;

export interface DiffArgs {
  readonly help: boolean;
  readonly base?: string;
  readonly env?: string;
  readonly failOn: readonly (typeof FAIL_ON)[number][];
  readonly noSimulate: boolean;
  readonly root?: string;
}

/** The parsed command line; throws UsageError for anything it does not take. */
export function parseDiffArgs(argv: readonly string[]): DiffArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        base: { type: 'string' },
        env: { type: 'string' },
        'fail-on': { type: 'string', multiple: true },
        'no-simulate': { type: 'boolean' },
        root: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const failOn = values['fail-on'] ?? [];
  const bad = failOn.find((f) => !(FAIL_ON as readonly string[]).includes(f));
  if (!values.help && bad !== undefined) throw new UsageError(`--fail-on: must be one of ${FAIL_ON.map((f) => `"${f}"`).join(', ')}, got "${bad}"`);
  if (!values.help && failOn.includes('pending') && values['no-simulate']) throw new UsageError('--fail-on pending needs the simulation: it cannot be combined with --no-simulate');
  return {
    help: values.help ?? false,
    ...(values.base !== undefined ? { base: values.base } : {}),
    ...(values.env !== undefined ? { env: values.env } : {}),
    failOn: failOn as DiffArgs['failOn'],
    noSimulate: values['no-simulate'] ?? false,
    ...(values.root !== undefined ? { root: values.root } : {}),
  };
}
