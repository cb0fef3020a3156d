import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { buildCatalogue, onDemandPrice, renderCatalogue, type Observed } from '../../catalogue/refresh.js';
import { REPO } from '../support/repo.js';

const m5: InstanceTypeInfo = {
  InstanceType: 'm5.large',
  VCpuInfo: { DefaultVCpus: 2 },
  MemoryInfo: { SizeInMiB: 8192 },
  ProcessorInfo: { SupportedArchitectures: ['x86_64'], Manufacturer: 'Intel', SustainedClockSpeedInGhz: 3.1 },
  NetworkInfo: { DefaultNetworkCardIndex: 0, NetworkCards: [{ MaximumNetworkInterfaces: 3 }], Ipv4AddressesPerInterface: 10 },
};
const observed = (over: Partial<Observed> = {}): Observed => ({
  instanceTypes: [{ ...m5, InstanceType: 'm5.xlarge' }, m5],
  offerings: [['m5.large', 'us-east-1b'], ['m5.large', 'us-east-1a'], ['m5.xlarge', 'us-east-1a']],
  spot: [
    { instanceType: 'm5.large', zone: 'us-east-1a', price: 0.05, timestamp: 1 },
    { instanceType: 'm5.large', zone: 'us-east-1a', price: 0.04, timestamp: 2 },
    { instanceType: 'm5.large', zone: 'us-east-1b', price: 0.03, timestamp: 2 },
    { instanceType: 'm5.large', zone: 'us-east-1b', price: 0.02, timestamp: 2 },
  ],
  onDemand: new Map([['m5.large', 0.096]]),
  ...over,
});
const NOW = new Date('2026-11-30T23:59:59Z');

describe('catalogue/refresh: building the file', () => {
  it('GIVEN several Spot records per zone WHEN built THEN the latest wins and, at one time, the lower price', () => {
    const c = buildCatalogue(observed(), 'us-east-1', 'profile test', NOW);
    expect(c.instanceTypes['m5.large']).toMatchObject({ onDemandPrice: 0.096, zones: ['us-east-1a', 'us-east-1b'], spotPrices: { 'us-east-1a': 0.04, 'us-east-1b': 0.02 } });
    expect(c.instanceTypes['m5.xlarge']).toMatchObject({ onDemandPrice: null, zones: ['us-east-1a'] });
    expect(c.instanceTypes['m5.xlarge']!.spotPrices).toBeUndefined();
    expect([c.zones, c.pricesAsOf, Object.keys(c.instanceTypes)]).toEqual([['us-east-1a', 'us-east-1b'], '2026-11-30', ['m5.large', 'm5.xlarge']]);
  });

  it('GIVEN the same answers in another order WHEN rendered THEN the bytes are the same', () => {
    const a = renderCatalogue(buildCatalogue(observed(), 'us-east-1', 'x', NOW));
    const o = observed();
    const b = renderCatalogue(buildCatalogue({ ...o, instanceTypes: [...o.instanceTypes].reverse(), offerings: [...o.offerings].reverse(), spot: [...o.spot].reverse() }, 'us-east-1', 'x', NOW));
    expect(b).toBe(a);
  });

  it('GIVEN Pricing API documents WHEN read THEN the USD price is taken, and a zero or missing price is no price', () => {
    const doc = (usd: string | undefined) => JSON.stringify({ product: { attributes: { instanceType: 'm5.large' } }, terms: { OnDemand: { t: { priceDimensions: { d: { pricePerUnit: usd === undefined ? {} : { USD: usd } } } } } } });
    expect([onDemandPrice(doc('0.0960000000')), onDemandPrice(doc('0.0000000000')), onDemandPrice(doc(undefined))]).toEqual([{ instanceType: 'm5.large', price: 0.096 }, undefined, undefined]);
  });

  it('GIVEN no --region or a malformed one WHEN the CLI runs THEN it exits 1 with the usage, before any AWS call', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, [join(REPO, 'scripts/run.mjs'), join(REPO, 'catalogue', 'refresh.ts'), ...args], { encoding: 'utf8', env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' } });
    const none = run();
    const bad = run('--region', 'Mars');
    expect([none.status, none.stderr]).toEqual([1, 'error: --region: must be given, got nothing\nUsage: npm run catalogue -- --region <region> [--profile P] [--endpoint-url URL]\n']);
    expect([bad.status, bad.stderr.split('\n')[0]]).toEqual([1, 'error: --region: must be an AWS region such as us-east-1, got "Mars"']);
  });
});
