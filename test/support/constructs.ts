import type { Chart } from 'cdk8s';

/**
 * Runs every construct's validations (cdk8s `node.addValidation`) and throws them all
 * together with their construct paths: what `chart.toJson()` runs before rendering, for
 * tests that build a chart and want its validation errors without rendering it.
 */
export function validateConstructs(chart: Chart): void {
  const errors = chart.node.findAll().flatMap((c) => c.node.validate().map((e) => `[${c.node.path}] ${e}`));
  if (errors.length > 0) throw new Error(`Validation failed:\n  ${errors.join('\n  ')}`);
}
