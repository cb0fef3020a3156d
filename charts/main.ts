import { runSynth } from './cli.js';

/** `npm run synth` and the app of `cdk8s synth`: the command of charts/cli.ts on this process. */
process.exitCode = await runSynth(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
});
