// Loaded into every Node process of a measured command (NODE_OPTIONS=--import) by
// bench/measure.ts: appends this process's peak RSS and CPU time at exit.
import { appendFileSync } from 'node:fs';

const file = process.env.KARPENTER_GITOPS_BENCH_RUSAGE;
if (file) {
  process.on('exit', () => {
    const { maxRSS, userCPUTime, systemCPUTime } = process.resourceUsage();
    appendFileSync(file, `${JSON.stringify({ pid: process.pid, maxRSS, userCPUTime, systemCPUTime })}\n`);
  });
}
