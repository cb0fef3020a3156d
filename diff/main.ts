import { USAGE, UsageError, parseDiffArgs, refusal } from './args.js';

/**
 * `npm run diff`: the command line is judged here, before the review's modules (synth,
 * git, the simulation) load, so --help and a refusal cost only Node's start-up.
 */
const argv = process.argv.slice(2);
let early: number | undefined;
try {
  if (parseDiffArgs(argv).help) {
    process.stdout.write(`${USAGE}\n`);
    early = 0;
  }
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(refusal(err.message));
  early = 2;
}
process.exitCode = early ?? (await (await import('./cli.js')).command(argv));
