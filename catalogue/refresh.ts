import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { EC2Client, InstanceTypeInfo } from '@aws-sdk/client-ec2';
import type { PricingClient } from '@aws-sdk/client-pricing';
import { writeFileAtomic } from '../config/atomic.js';
import { catalogueSchema, cataloguePath, type Catalogue, type CatalogueInstanceType } from './catalogue.js';
import { deriveInstanceType } from './derive.js';

/**
 * `npm run catalogue -- --region <r> [--profile P] [--endpoint-url URL]`: refreshes
 * catalogue/<region>.json from a real account with the calls Karpenter itself makes
 * (github.com/aws/karpenter-provider-aws@v1.13.1 pkg/providers/instancetype/instancetype.go
 * and pkg/providers/pricing/pricing.go): DescribeInstanceTypes (hvm, x86_64/arm64),
 * DescribeInstanceTypeOfferings by availability zone, DescribeSpotPriceHistory (Linux/UNIX,
 * latest per type and zone) and the Pricing API's On-Demand prices. Split as the infra is:
 * observe (SDK calls, clients passed in), build (pure), write (atomic), CLI.
 */

export interface Observed {
  readonly instanceTypes: readonly InstanceTypeInfo[];
  /** [instance type, zone] pairs. */
  readonly offerings: ReadonlyArray<readonly [string, string]>;
  readonly spot: ReadonlyArray<{ readonly instanceType: string; readonly zone: string; readonly price: number; readonly timestamp: number }>;
  /** Instance type -> On-Demand USD/hour. */
  readonly onDemand: ReadonlyMap<string, number>;
}

export interface Clients {
  readonly ec2: EC2Client;
  readonly pricing: PricingClient;
}

/**
 * The AWS side: every page of every call. Pricing first, so a missing pricing:GetProducts
 * permission fails before the long EC2 listings; then the three EC2 listings together.
 */
export async function observe(clients: Clients, region: string, now: Date): Promise<Observed> {
  const onDemand = await step('Pricing API GetProducts (its endpoint is in us-east-1)', observeOnDemand(clients.pricing, region));
  const [instanceTypes, offerings, spot] = await Promise.all([
    step(`EC2 DescribeInstanceTypes in ${region}`, observeInstanceTypes(clients.ec2)),
    step(`EC2 DescribeInstanceTypeOfferings in ${region}`, observeOfferings(clients.ec2)),
    step(`EC2 DescribeSpotPriceHistory in ${region}`, observeSpot(clients.ec2, now)),
  ]);
  return { instanceTypes, offerings, spot, onDemand };
}

/** Names the call that failed: SDK errors (a deserialization error from an endpoint without the API, say) do not. */
async function step<T>(what: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new Error(`${what} failed: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
}

async function observeInstanceTypes(client: EC2Client): Promise<InstanceTypeInfo[]> {
  const ec2 = await import('@aws-sdk/client-ec2');
  const out: InstanceTypeInfo[] = [];
  const filters = [
    { Name: 'supported-virtualization-type', Values: ['hvm'] },
    { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
  ];
  for await (const page of ec2.paginateDescribeInstanceTypes({ client }, { Filters: filters, MaxResults: 100 })) out.push(...(page.InstanceTypes ?? []));
  return out;
}

async function observeOfferings(client: EC2Client): Promise<Array<[string, string]>> {
  const ec2 = await import('@aws-sdk/client-ec2');
  const out: Array<[string, string]> = [];
  for await (const page of ec2.paginateDescribeInstanceTypeOfferings({ client }, { LocationType: 'availability-zone', MaxResults: 1000 })) {
    for (const o of page.InstanceTypeOfferings ?? []) if (o.InstanceType && o.Location) out.push([o.InstanceType, o.Location]);
  }
  return out;
}

async function observeSpot(client: EC2Client, now: Date): Promise<Array<{ instanceType: string; zone: string; price: number; timestamp: number }>> {
  const ec2 = await import('@aws-sdk/client-ec2');
  const out: Array<{ instanceType: string; zone: string; price: number; timestamp: number }> = [];
  // StartTime now: EC2 then answers the price in effect now per type and zone, as Karpenter asks.
  for await (const page of ec2.paginateDescribeSpotPriceHistory({ client }, { ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'], StartTime: now, MaxResults: 1000 })) {
    for (const s of page.SpotPriceHistory ?? []) {
      const price = Number(s.SpotPrice);
      if (!s.InstanceType || !s.AvailabilityZone || !s.Timestamp || !Number.isFinite(price)) continue; // as Karpenter: skip unreadable records
      out.push({ instanceType: s.InstanceType, zone: s.AvailabilityZone, price, timestamp: s.Timestamp.getTime() });
    }
  }
  return out;
}

async function observeOnDemand(client: PricingClient, region: string): Promise<Map<string, number>> {
  const pricing = await import('@aws-sdk/client-pricing');
  const out = new Map<string, number>();
  // Karpenter's two queries: shared tenancy, and bare metal (priced as dedicated).
  for (const [tenancy, family] of [['Shared', 'Compute Instance'], ['Dedicated', 'Compute Instance (bare metal)']] as const) {
    const filters = [
      ['regionCode', region],
      ['serviceCode', 'AmazonEC2'],
      ['preInstalledSw', 'NA'],
      ['operatingSystem', 'Linux'],
      ['capacitystatus', 'Used'],
      ['marketoption', 'OnDemand'],
      ['tenancy', tenancy],
      ['productFamily', family],
    ].map(([Field, Value]) => ({ Type: 'TERM_MATCH' as const, Field, Value }));
    for await (const page of pricing.paginateGetProducts({ client }, { ServiceCode: 'AmazonEC2', Filters: filters, FormatVersion: 'aws_v1', MaxResults: 100 })) {
      for (const item of page.PriceList ?? []) {
        const parsed = onDemandPrice(String(item));
        if (parsed && !out.has(parsed.instanceType)) out.set(parsed.instanceType, parsed.price);
      }
    }
  }
  return out;
}

/** One Pricing API product: its instance type and USD/hour, or undefined when it has none (as Karpenter skips it). */
export function onDemandPrice(json: string): { instanceType: string; price: number } | undefined {
  const item = JSON.parse(json) as {
    product?: { attributes?: { instanceType?: string } };
    terms?: { OnDemand?: Record<string, { priceDimensions?: Record<string, { pricePerUnit?: { USD?: string } }> }> };
  };
  const instanceType = item.product?.attributes?.instanceType;
  if (!instanceType) return undefined;
  for (const term of Object.values(item.terms?.OnDemand ?? {})) {
    for (const dim of Object.values(term.priceDimensions ?? {})) {
      const price = Number(dim.pricePerUnit?.USD);
      if (dim.pricePerUnit?.USD !== undefined && Number.isFinite(price) && price > 0) return { instanceType, price };
    }
  }
  return undefined;
}

/** The catalogue, a pure function of what was observed: sorted keys, so the same answers give the same bytes. */
export function buildCatalogue(observed: Observed, region: string, source: string, now: Date): Catalogue {
  const zonesOf = new Map<string, Set<string>>();
  for (const [t, z] of observed.offerings) (zonesOf.get(t) ?? zonesOf.set(t, new Set()).get(t)!).add(z);
  const latest = new Map<string, Map<string, { price: number; timestamp: number }>>();
  for (const s of observed.spot) {
    const byZone = latest.get(s.instanceType) ?? latest.set(s.instanceType, new Map()).get(s.instanceType)!;
    const seen = byZone.get(s.zone);
    // Latest wins; on a tie the lower price, so the order of the pages does not matter.
    if (!seen || s.timestamp > seen.timestamp || (s.timestamp === seen.timestamp && s.price < seen.price)) byZone.set(s.zone, { price: s.price, timestamp: s.timestamp });
  }
  const types: Record<string, CatalogueInstanceType> = {};
  for (const info of [...observed.instanceTypes].sort((a, b) => cmp(a.InstanceType ?? '', b.InstanceType ?? ''))) {
    const name = info.InstanceType!;
    const { labels, resources } = deriveInstanceType(info);
    const spot = latest.get(name);
    types[name] = {
      labels,
      resources,
      onDemandPrice: observed.onDemand.get(name) ?? null,
      zones: [...(zonesOf.get(name) ?? [])].sort(cmp),
      ...(spot && spot.size > 0 ? { spotPrices: Object.fromEntries([...spot].sort(([a], [b]) => cmp(a, b)).map(([z, p]) => [z, p.price])) } : {}),
    };
  }
  const date = now.toISOString().slice(0, 10);
  const catalogue: Catalogue = {
    origin: `npm run catalogue -- --region ${region} (${source}) on ${date}: DescribeInstanceTypes, DescribeInstanceTypeOfferings (availability zones), DescribeSpotPriceHistory (Linux/UNIX, latest per type and zone) and the Pricing API's On-Demand prices; labels and allocatable resources derived as Karpenter v1.13.1 does (catalogue/derive.ts) for AL2023 defaults.`,
    region,
    pricesAsOf: date,
    zones: [...new Set(observed.offerings.map(([, z]) => z))].sort(cmp),
    instanceTypes: types,
  };
  return catalogueSchema.parse(catalogue);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function renderCatalogue(c: Catalogue): string {
  return `${JSON.stringify(c, null, 1)}\n`;
}

export interface RefreshOptions {
  readonly root: string;
  readonly region: string;
  readonly profile?: string;
  readonly endpointUrl?: string;
  /** Tests pass clients in; the CLI makes them from the standard credential chain. */
  readonly clients?: Clients;
  readonly now?: Date;
}

/** Observes, builds and writes catalogue/<region>.json atomically; returns what it wrote. */
export async function refreshCatalogue(opts: RefreshOptions): Promise<{ file: string; catalogue: Catalogue }> {
  const now = opts.now ?? new Date();
  const clients = opts.clients ?? (await makeClients(opts));
  const observed = await observe(clients, opts.region, now);
  if (observed.instanceTypes.length === 0) throw new Error(`DescribeInstanceTypes in ${opts.region} returned no instance type: nothing was written`);
  const source = opts.endpointUrl ? `endpoint ${opts.endpointUrl}` : opts.profile ? `profile ${opts.profile}` : 'default credentials';
  const catalogue = buildCatalogue(observed, opts.region, source, now);
  const file = cataloguePath(opts.region);
  writeFileAtomic(join(opts.root, file), renderCatalogue(catalogue));
  return { file, catalogue };
}

async function makeClients(opts: RefreshOptions): Promise<Clients> {
  const [{ EC2Client }, { PricingClient }] = await Promise.all([import('@aws-sdk/client-ec2'), import('@aws-sdk/client-pricing')]);
  const common = { ...(opts.profile ? { profile: opts.profile } : {}), ...(opts.endpointUrl ? { endpoint: opts.endpointUrl } : {}), maxAttempts: 5 };
  // The Pricing API answers only in us-east-1 (and two other regions); its prices cover every region.
  return { ec2: new EC2Client({ ...common, region: opts.region }), pricing: new PricingClient({ ...common, region: 'us-east-1' }) };
}

const USAGE = 'Usage: npm run catalogue -- --region <region> [--profile P] [--endpoint-url URL]';

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: { region: { type: 'string' }, profile: { type: 'string' }, 'endpoint-url': { type: 'string' }, root: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values.region) throw new UsageError('--region: must be given, got nothing');
  if (!catalogueSchema.shape.region.safeParse(values.region).success) throw new UsageError(`--region: must be an AWS region such as us-east-1, got "${values.region}"`);
  const started = Date.now();
  const { file, catalogue } = await refreshCatalogue({
    root: resolve(values.root ?? process.cwd()),
    region: values.region,
    ...(values.profile ? { profile: values.profile } : {}),
    ...(values['endpoint-url'] ? { endpointUrl: values['endpoint-url'] } : {}),
  });
  process.stdout.write(`${summary(file, catalogue)} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  return 0;
}

export function summary(file: string, catalogue: Catalogue): string {
  const types = Object.values(catalogue.instanceTypes);
  return `wrote ${file}: ${types.length} instance types in ${catalogue.zones?.length ?? 0} zones, ${types.filter((t) => t.onDemandPrice !== null).length} with an On-Demand price, ${types.filter((t) => t.spotPrices).length} with Spot prices`;
}

class UsageError extends Error {}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`error: ${(err as Error).message}${usage ? `\n${USAGE}` : ''}\n`);
    process.exitCode = 1;
  }
}
