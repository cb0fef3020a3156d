import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeAvailabilityZonesCommand, DescribeInstanceTypesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { PricingClient } from '@aws-sdk/client-pricing';
import { readCatalogue } from '../../catalogue/catalogue.js';
import { deriveInstanceType } from '../../catalogue/derive.js';
import { refreshCatalogue } from '../../catalogue/refresh.js';
import { REPO } from '../support/repo.js';
import { startMoto, useDummyCredentials, type Moto } from '../infra/support/moto.js';

/**
 * `npm run catalogue` against moto 5.2.5, which serves DescribeInstanceTypes,
 * DescribeInstanceTypeOfferings and DescribeSpotPriceHistory from its bundled EC2 data.
 * moto has no Pricing API at all, so only the Pricing client gets a stand-in, at the HTTP
 * handler: the real PricingClient still serializes our GetProducts requests (checked below
 * against Karpenter's filters) and parses the answers, which are Pricing API documents
 * in the service's own shape.
 */
let moto: Moto;
let root: string;
const vendored = JSON.parse(readFileSync(join(REPO, 'catalogue', 'us-east-1.json'), 'utf8')).instanceTypes as Record<string, { labels: Record<string, string>; resources: Record<string, string>; onDemandPrice: number | null }>;

const NOW = new Date('2026-11-30T12:00:00Z');
let firstBytes: string;
let pricingRequests: any[];

// One refresh for the whole file: moto takes about 30 s to list its 1,377 hvm instance types.
beforeAll(async () => {
  useDummyCredentials();
  moto = await startMoto();
  root = mkdtempSync(join(tmpdir(), 'catalogue-'));
  const standIn = pricingStandIn();
  const { file } = await refreshCatalogue({ root, region: 'us-east-1', clients: { ec2: ec2(), pricing: standIn.client }, now: NOW });
  firstBytes = readFileSync(join(root, file), 'utf8');
  pricingRequests = standIn.requests;
});
afterAll(async () => {
  await moto?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A Pricing API product document, as GetProducts returns it (PriceList holds these as JSON strings). */
const product = (instanceType: string, usd: string) =>
  JSON.stringify({
    product: { productFamily: 'Compute Instance', attributes: { instanceType, operatingSystem: 'Linux', tenancy: 'Shared', regionCode: 'us-east-1' } },
    terms: { OnDemand: { 'SKU.JRTCKXETXF': { priceDimensions: { 'SKU.JRTCKXETXF.6YS6EN2CT7': { unit: 'Hrs', pricePerUnit: { USD: usd } } } } } },
  });

/** An HTTP response as the SDK's deserializers take it (they check its shape, not its class). */
const response = (r: { statusCode: number; headers: Record<string, string>; body: Readable }) => r;

/** The Pricing stand-in: answers GetProducts page by page from the vendored On-Demand prices, records each request body. */
function pricingStandIn(opts: { fail?: boolean } = {}) {
  const requests: any[] = [];
  const priced = Object.entries(vendored).filter(([, t]) => t.onDemandPrice !== null);
  const handler = {
    async handle(request: { body?: unknown }) {
      const body = JSON.parse(typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body as Uint8Array));
      requests.push(body);
      if (opts.fail) {
        return { response: response({ statusCode: 400, headers: { 'content-type': 'application/x-amz-json-1.1' }, body: Readable.from([JSON.stringify({ __type: 'AccessDeniedException', message: 'User is not authorized to perform: pricing:GetProducts' })]) }) };
      }
      const tenancy = body.Filters.find((f: any) => f.Field === 'tenancy').Value;
      const all = tenancy === 'Shared' ? priced.filter(([n]) => !n.endsWith('.metal')) : priced.filter(([n]) => n.endsWith('.metal'));
      const start = Number(body.NextToken ?? 0);
      const page = all.slice(start, start + body.MaxResults).map(([n, t]) => product(n, t.onDemandPrice!.toFixed(10)));
      const next = start + body.MaxResults < all.length ? { NextToken: String(start + body.MaxResults) } : {};
      return { response: response({ statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.1' }, body: Readable.from([JSON.stringify({ FormatVersion: 'aws_v1', PriceList: page, ...next })]) }) };
    },
  };
  return { client: new PricingClient({ region: 'us-east-1', requestHandler: handler as never }), requests };
}

const ec2 = () => new EC2Client({ region: 'us-east-1', endpoint: moto.endpoint });

describe('npm run catalogue against moto', () => {
  it('GIVEN moto and the Pricing stand-in WHEN refreshed a second time THEN catalogue/us-east-1.json is valid, sorted and byte-identical', { timeout: 300_000 }, async () => {
    await refreshCatalogue({ root, region: 'us-east-1', clients: { ec2: ec2(), pricing: pricingStandIn().client }, now: NOW });
    expect(readFileSync(join(root, 'catalogue', 'us-east-1.json'), 'utf8')).toBe(firstBytes);
    expect(readdirSync(join(root, 'catalogue'))).toEqual(['us-east-1.json']);

    const c = readCatalogue(root, 'us-east-1');
    expect(c.pricesAsOf).toBe('2026-11-30');
    const zones = (await ec2().send(new DescribeAvailabilityZonesCommand({}))).AvailabilityZones!.map((z) => z.ZoneName!).sort();
    expect(c.zones).toEqual(zones);
    const names = Object.keys(c.instanceTypes);
    expect(names).toEqual([...names].sort());
    // The filters Karpenter uses: only hvm types on x86_64 or arm64.
    expect(names.every((n) => ['amd64', 'arm64'].includes(c.instanceTypes[n]!.labels['kubernetes.io/arch']!))).toBe(true);
    const m5 = c.instanceTypes['m5.large']!;
    expect(m5.onDemandPrice).toBe(0.096);
    expect(m5.zones!.length).toBeGreaterThan(0);
    expect(Object.keys(m5.spotPrices!)).toEqual(m5.zones);
  });

  it('GIVEN the GetProducts requests WHEN inspected THEN they carry Karpenter v1.13.1 pricing.go filters, shared and bare metal', () => {
    const filterSets = [...new Set(pricingRequests.map((r) => JSON.stringify(Object.fromEntries(r.Filters.map((f: any) => [f.Field, `${f.Type}:${f.Value}`])))))].map((s) => JSON.parse(s));
    const common = { regionCode: 'TERM_MATCH:us-east-1', serviceCode: 'TERM_MATCH:AmazonEC2', preInstalledSw: 'TERM_MATCH:NA', operatingSystem: 'TERM_MATCH:Linux', capacitystatus: 'TERM_MATCH:Used', marketoption: 'TERM_MATCH:OnDemand' };
    expect(filterSets).toEqual([
      { ...common, tenancy: 'TERM_MATCH:Shared', productFamily: 'TERM_MATCH:Compute Instance' },
      { ...common, tenancy: 'TERM_MATCH:Dedicated', productFamily: 'TERM_MATCH:Compute Instance (bare metal)' },
    ]);
  });

  it("GIVEN moto's DescribeInstanceTypes data WHEN derived THEN it reproduces the vendored labels and resources, except where the inputs differ", { timeout: 300_000 }, async () => {
    const refreshed: Record<string, { labels: Record<string, string>; resources: Record<string, string> }> = { ...readCatalogue(root, 'us-east-1').instanceTypes };
    const absent = Object.keys(vendored).filter((n) => !refreshed[n]);
    // moto's processor-info.supported-architecture filter drops types that list i386 before x86_64, which EC2
    // keeps (it matches any listed architecture): ask for those by name and derive them the same way.
    const motoLacks = ['dl1.24xlarge', 'f1.16xlarge', 'f1.2xlarge', 'f1.4xlarge', 'g4ad.16xlarge', 'g4ad.2xlarge', 'g4ad.4xlarge', 'g4ad.8xlarge', 'g4ad.xlarge', 'p3.16xlarge', 'p3.2xlarge', 'p3.8xlarge'];
    const filteredOut = absent.filter((n) => !motoLacks.includes(n));
    const named = (await ec2().send(new DescribeInstanceTypesCommand({ InstanceTypes: filteredOut as never }))).InstanceTypes ?? [];
    expect(named.map((i) => i.InstanceType).sort()).toEqual(filteredOut);
    expect(named.every((i) => i.ProcessorInfo!.SupportedArchitectures!.includes('i386') && i.ProcessorInfo!.SupportedArchitectures!.includes('x86_64'))).toBe(true);
    for (const info of named) refreshed[info.InstanceType!] = deriveInstanceType(info);
    const both = Object.keys(vendored).filter((n) => refreshed[n]);
    // moto 5.2.5's data lacks 12 vendored types (dl1, f1, g4ad, p3 families).
    expect(Object.keys(vendored).filter((n) => !refreshed[n])).toEqual(motoLacks);
    const byField = new Map<string, string[]>();
    for (const n of both) {
      const v = vendored[n]!;
      const r = refreshed[n]!;
      for (const [kind, a, b] of [['label', v.labels, r.labels], ['resource', v.resources, r.resources]] as const) {
        for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (a[k] !== b[k]) byField.set(`${kind} ${k}`, [...(byField.get(`${kind} ${k}`) ?? []), n]);
      }
    }
    const exact = both.filter((n) => ![...byField.values()].some((l) => l.includes(n)));
    // Every difference has a cause outside the derivation:
    // - network bandwidth and pod ENIs: Karpenter v1.13.1's generated tables (catalogue/karpenter-tables.json)
    //   know types that its reference page, the vendored file, was generated without (vendored has no value);
    // - clock speed, and pods (with the memory that depends on pods): moto's EC2 data is another snapshot than
    //   Karpenter's (SustainedClockSpeedInGhz, ENIs per type); the unit test derives all 1,204 vendored
    //   memory values from the vendored pod counts, so the formula itself is not in question.
    expect([...byField.keys()].sort()).toEqual([
      'label karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
      'label karpenter.k8s.aws/instance-network-bandwidth',
      'resource memory',
      'resource pods',
      'resource vpc.amazonaws.com/pod-eni',
    ]);
    for (const n of [...byField.get('label karpenter.k8s.aws/instance-network-bandwidth')!, ...byField.get('resource vpc.amazonaws.com/pod-eni')!]) {
      const v = vendored[n]!;
      expect(v.labels['karpenter.k8s.aws/instance-network-bandwidth'] === undefined || v.resources['vpc.amazonaws.com/pod-eni'] === undefined).toBe(true);
    }
    expect(byField.get('resource memory')!.every((n) => byField.get('resource pods')!.includes(n))).toBe(true);
    expect({ both: both.length, exact: exact.length }).toEqual({ both: 1192, exact: 1142 });
  });

  it('GIVEN the Pricing API refuses WHEN refreshed THEN the error surfaces and the committed file is left as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalogue-'));
    const file = join(dir, 'catalogue', 'us-east-1.json');
    mkdirSync(join(dir, 'catalogue'));
    writeFileSync(file, '{"before": true}\n');
    await expect(refreshCatalogue({ root: dir, region: 'us-east-1', clients: { ec2: ec2(), pricing: pricingStandIn({ fail: true }).client } })).rejects.toThrow('Pricing API GetProducts (its endpoint is in us-east-1) failed: User is not authorized to perform: pricing:GetProducts');
    expect(readFileSync(file, 'utf8')).toBe('{"before": true}\n');
    expect(readdirSync(join(dir, 'catalogue'))).toEqual(['us-east-1.json']);
    rmSync(dir, { recursive: true, force: true });
    expect(existsSync(dir)).toBe(false);
  });
});
