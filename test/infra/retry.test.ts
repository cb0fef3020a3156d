import { describe, expect, it } from 'vitest';
import { isIamPropagation, retryIamPropagation } from '../../infra/retry.js';

// A fake sender: the retry helper is pure given its call, sleep and random, so no AWS is needed.
const invalidRole = () =>
  Object.assign(new Error('Role with arn: arn:aws:iam::111122223333:role/EKSClusterRole-demo could not be assumed because it does not exist or the trusted entity is not correct'), {
    name: 'InvalidParameterException',
  });

function fakeSender(failures: readonly Error[]) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    send: async () => {
      const err = failures[calls++];
      if (err) throw err;
      return 'created';
    },
  };
}

describe('retryIamPropagation', () => {
  it('GIVEN EKS does not see a fresh role twice WHEN the call is retried THEN the third attempt succeeds after growing, jittered waits, each printed', async () => {
    const sender = fakeSender([invalidRole(), invalidRole()]);
    const slept: number[] = [];
    const log: string[] = [];
    const res = await retryIamPropagation('CreateCluster demo', sender.send, { log: (l) => log.push(l), sleep: async (ms) => void slept.push(ms), random: () => 1 });
    expect(res).toBe('created');
    expect(sender.calls).toBe(3);
    expect(slept).toEqual([2000, 4000]);
    expect(log[0]).toBe(
      '  CreateCluster demo: IAM has not propagated the role yet (Role with arn: arn:aws:iam::111122223333:role/EKSClusterRole-demo could not be assumed because it does not exist or the trusted entity is not correct); retry 1 in 2.0 s',
    );
  });

  it('GIVEN the role never appears WHEN retried THEN it gives up once the budget is spent and rethrows the last error', async () => {
    const sender = fakeSender(Array.from({ length: 100 }, invalidRole));
    const slept: number[] = [];
    await expect(retryIamPropagation('x', sender.send, { log: () => {}, sleep: async (ms) => void slept.push(ms), random: () => 1, budgetMs: 120_000 })).rejects.toThrow(/could not be assumed/);
    expect(slept.reduce((a, b) => a + b, 0)).toBe(120_000);
    expect(Math.max(...slept)).toBe(20_000);
  });

  it('GIVEN any other error WHEN called THEN it is thrown at once without a retry', async () => {
    const other = Object.assign(new Error('subnet-1 is not in a supported AZ'), { name: 'InvalidParameterException' });
    const sender = fakeSender([other]);
    await expect(retryIamPropagation('x', sender.send, { log: () => {}, sleep: async () => {} })).rejects.toBe(other);
    expect(sender.calls).toBe(1);
  });

  it('GIVEN the messages EKS gives for access entries and pod identity WHEN classified THEN they count as propagation delay', () => {
    expect(isIamPropagation(Object.assign(new Error('The specified principalArn is invalid: invalid principal'), { name: 'InvalidParameterException' }))).toBe(true);
    expect(isIamPropagation(Object.assign(new Error('Role could not be assumed'), { name: 'AccessDeniedException' }))).toBe(false);
  });
});
