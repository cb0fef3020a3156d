import type { Spec } from 'vega';
import type { AdmittedType, EnvironmentAnalysis } from './analyze.js';
import { memo } from './memo.js';

/**
 * The report's chart: every admitted type of every pool, vCPU against On-Demand $/hour on
 * log scales, coloured by architecture, shaped by pool, and the type `inflate` lands on
 * (1 replica) marked. Drawn by Vega (a Vega spec, rendered headless to SVG in Node: no
 * browser, no canvas). The spec is plain data, so it is built here cheaply and Vega is
 * loaded only when an SVG must be drawn.
 */

/** A mark's position: vCPU and On-Demand price of its datum. */
const AT_POINT = { x: { scale: 'x', field: 'vcpu' }, y: { scale: 'y', field: 'price' } } as const;

/** One shape per pool while there are shapes enough; beyond that a shape says nothing. */
const SHAPES = ['circle', 'square', 'triangle-up', 'diamond', 'cross', 'triangle-down'];

/** An id per admitted list: the key of a set of lists. */
const listIds = new WeakMap<readonly AdmittedType[], number>();
let nextListId = 0;
const pointsByLists = new WeakMap<object, Map<string, readonly unknown[]>>();

/** `derive(lists)` once per set of lists (in this order), kept with the first (analyze/memo.ts). */
function sharedPoints<T>(lists: readonly (readonly AdmittedType[])[], derive: (lists: readonly (readonly AdmittedType[])[]) => T[]): readonly T[] {
  if (lists.length === 0) return derive(lists);
  const key = lists.map((l) => listIds.get(l) ?? listIds.set(l, nextListId++).get(l)!).join(',');
  return memo(pointsByLists, lists[0]!, key, () => derive(lists)) as readonly T[];
}

export function chartSpec(a: EnvironmentAnalysis): Spec {
  // With more pools than shapes, each type is drawn once (not once per pool that admits
  // it): the chart stays readable, and its data bounded by the catalogue, at any size.
  const byPool = a.pools.length <= SHAPES.length;
  const point = (t: AdmittedType) => ({ type: t.name, vcpu: t.vcpu, price: t.onDemandPrice!, arch: t.arch });
  const priced = (list: readonly AdmittedType[]) => list.filter((t) => t.onDemandPrice !== null);
  const points = byPool
    ? a.pools.flatMap((p) => priced(p.admitted).map((t) => ({ pool: p.name, ...point(t) })))
    : // Pools that select alike share one admitted list (analyze.ts): each list is read once,
      // and environments with the same lists share one points array (and its text, below).
      sharedPoints([...new Set(a.pools.map((p) => p.admitted))], (lists) =>
        [...new Map(lists.flatMap((list) => priced(list).map((t): [string, ReturnType<typeof point>] => [t.name, point(t)]))).values()].sort((x, y) => (x.type < y.type ? -1 : 1)),
      );
  const inflate = a.workloads.find((w) => w.workload.startsWith('inflate') && w.replicas === 1)?.fit;
  const marked = inflate ? points.filter((p) => (!('pool' in p) || p.pool === inflate.pool) && p.type === inflate.type).map((p) => ({ ...p, label: `inflate: ${p.type}` })) : [];
  return {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    description: `Admitted instance types of ${a.environment}: vCPU against On-Demand USD per hour (${a.catalogue.region}, ${a.catalogue.pricesAsOf})`,
    width: 640,
    height: 360,
    padding: 8,
    background: 'white',
    title: {
      text: `${a.environment}: admitted instance types`,
      subtitle: `On-Demand ${a.catalogue.region}, prices of ${a.catalogue.pricesAsOf}; ${marked.length > 0 ? 'ringed: the cheapest type that fits inflate (1 CPU)' : 'inflate fits no admitted type'}${byPool ? '' : `; ${a.pools.length} NodePools, each type drawn once`}`,
    },
    data: [
      { name: 'types', values: points },
      { name: 'marked', values: marked },
    ],
    scales: [
      { name: 'x', type: 'log', base: 2, domain: { data: 'types', field: 'vcpu' }, range: 'width', nice: true, zero: false },
      { name: 'y', type: 'log', domain: { data: 'types', field: 'price' }, range: 'height', nice: true, zero: false },
      { name: 'color', type: 'ordinal', domain: ['amd64', 'arm64'], range: ['#4c78a8', '#e45756'] },
      ...(byPool ? [{ name: 'shape', type: 'ordinal' as const, domain: a.pools.map((p) => p.name), range: SHAPES }] : []),
    ],
    axes: [
      { orient: 'bottom', scale: 'x', title: 'vCPU', grid: true, gridOpacity: 0.15 },
      { orient: 'left', scale: 'y', title: 'On-Demand USD per hour', grid: true, gridOpacity: 0.15, format: '$.3~g' },
    ],
    legends: [
      { fill: 'color', title: 'architecture', orient: 'right', symbolType: 'circle' },
      ...(byPool && a.pools.length > 1 ? [{ shape: 'shape', title: 'NodePool', orient: 'right' as const, symbolStrokeColor: '#555', symbolFillColor: 'transparent' }] : []),
    ],
    marks: [
      {
        type: 'symbol',
        from: { data: 'types' },
        encode: {
          enter: {
            ...AT_POINT,
            fill: { scale: 'color', field: 'arch' },
            shape: byPool ? { scale: 'shape', field: 'pool' } : { value: 'circle' },
            size: { value: 36 },
            opacity: { value: 0.55 },
          },
        },
      },
      {
        type: 'symbol',
        from: { data: 'marked' },
        encode: {
          enter: {
            ...AT_POINT,
            shape: { value: 'circle' },
            size: { value: 400 },
            fill: { value: 'transparent' },
            stroke: { value: '#000' },
            strokeWidth: { value: 2 },
          },
        },
      },
      {
        type: 'text',
        from: { data: 'marked' },
        encode: {
          enter: {
            x: { scale: 'x', field: 'vcpu', offset: 14 },
            y: { scale: 'y', field: 'price', offset: -12 },
            text: { field: 'label' },
            fontSize: { value: 12 },
            fontWeight: { value: 'bold' },
            fill: { value: '#000' },
          },
        },
      },
    ],
  };
}

/**
 * The spec as committed beside the SVG: stable key order, one line per point (a pull
 * request's diff then shows the types that came or went, and 300 environments of
 * a thousand points are not 5,000 lines each).
 */
export function chartSpecText(spec: Spec): string {
  const rows = new Map<string, readonly unknown[]>();
  const shell = {
    ...spec,
    data: spec.data?.map((d, i) => {
      if (!('values' in d) || !Array.isArray(d.values)) return d;
      const mark = `@values ${i}@`;
      rows.set(JSON.stringify(mark), d.values);
      return { ...d, values: mark };
    }),
  };
  let text = JSON.stringify(shell, null, 1);
  for (const [mark, values] of rows) {
    const at = text.indexOf(mark);
    const indent = ' '.repeat(at - text.lastIndexOf('\n', at) - 1 - '"values": '.length);
    const list = valuesText(values, indent);
    text = text.slice(0, at) + list + text.slice(at + mark.length);
  }
  return `${text}\n`;
}

/** Environments that share a points array (chartSpec) share its text too. */
const textOfValues = new WeakMap<object, Map<string, string>>();

function valuesText(values: readonly unknown[], indent: string): string {
  return memo(textOfValues, values, indent, () => (values.length === 0 ? '[]' : `[\n${values.map((v) => `${indent} ${JSON.stringify(v)}`).join(',\n')}\n${indent}]`));
}

/** Renders a spec to SVG with Vega in Node, no DOM or canvas ('none' renderer). */
export async function renderChartSvg(spec: Spec): Promise<string> {
  const vega = await import('vega');
  // Vega tags each datum with its tuple id in place; the points arrays are shared between
  // environments (chartSpec), so it draws from a copy.
  const view = new vega.View(vega.parse(structuredClone(spec)), { renderer: 'none' });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}
