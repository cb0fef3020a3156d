import type { EKSClient } from '@aws-sdk/client-eks';

/**
 * Client-level stand-in for the EKS APIs moto does not implement (access entries, pod
 * identity associations, add-ons: moto answers 404 with an HTML page). It is a middleware
 * on the real EKS client that answers only those commands from memory; every other EKS
 * call (clusters, node groups) still goes to moto.
 */
export interface EksStandInState {
  accessEntries: Map<string, string>;
  addons: Set<string>;
  associations: Map<string, { namespace: string; serviceAccount: string; roleArn: string }>;
}

const notFound = (what: string) => Object.assign(new Error(`${what} not found`), { name: 'ResourceNotFoundException', $metadata: { httpStatusCode: 404 } });
const inUse = (what: string) => Object.assign(new Error(`${what} already exists`), { name: 'ResourceInUseException', $metadata: { httpStatusCode: 409 } });

export function installEksStandIn(eks: EKSClient, state: EksStandInState): void {
  let nextId = 1;
  const handlers: Record<string, (input: Record<string, any>) => unknown> = {
    CreateAccessEntryCommand: (i) => {
      if (state.accessEntries.has(i.principalArn)) throw inUse(`access entry ${i.principalArn}`);
      state.accessEntries.set(i.principalArn, i.type);
      return { accessEntry: { principalArn: i.principalArn, type: i.type } };
    },
    DescribeAccessEntryCommand: (i) => {
      const type = state.accessEntries.get(i.principalArn);
      if (!type) throw notFound(`access entry ${i.principalArn}`);
      return { accessEntry: { principalArn: i.principalArn, type } };
    },
    DeleteAccessEntryCommand: (i) => {
      if (!state.accessEntries.delete(i.principalArn)) throw notFound(`access entry ${i.principalArn}`);
      return {};
    },
    CreateAddonCommand: (i) => {
      if (state.addons.has(i.addonName)) throw inUse(`add-on ${i.addonName}`);
      state.addons.add(i.addonName);
      return { addon: { addonName: i.addonName, status: 'ACTIVE' } };
    },
    DescribeAddonCommand: (i) => {
      if (!state.addons.has(i.addonName)) throw notFound(`add-on ${i.addonName}`);
      return { addon: { addonName: i.addonName, status: 'ACTIVE' } };
    },
    DeleteAddonCommand: (i) => {
      if (!state.addons.delete(i.addonName)) throw notFound(`add-on ${i.addonName}`);
      return {};
    },
    ListPodIdentityAssociationsCommand: (i) => ({
      associations: [...state.associations]
        .filter(([, a]) => a.namespace === i.namespace && a.serviceAccount === i.serviceAccount)
        .map(([associationId, a]) => ({ associationId, namespace: a.namespace, serviceAccount: a.serviceAccount })),
    }),
    DescribePodIdentityAssociationCommand: (i) => {
      const a = state.associations.get(i.associationId);
      if (!a) throw notFound(`association ${i.associationId}`);
      return { association: { associationId: i.associationId, ...a } };
    },
    CreatePodIdentityAssociationCommand: (i) => {
      const id = `a-${nextId++}`;
      state.associations.set(id, { namespace: i.namespace, serviceAccount: i.serviceAccount, roleArn: i.roleArn });
      return { association: { associationId: id } };
    },
    UpdatePodIdentityAssociationCommand: (i) => {
      const a = state.associations.get(i.associationId);
      if (!a) throw notFound(`association ${i.associationId}`);
      a.roleArn = i.roleArn;
      return { association: { associationId: i.associationId, ...a } };
    },
    DeletePodIdentityAssociationCommand: (i) => {
      if (!state.associations.delete(i.associationId)) throw notFound(`association ${i.associationId}`);
      return {};
    },
  };
  eks.middlewareStack.add(
    (next, context) => async (args) => {
      const handler = handlers[String(context.commandName)];
      if (!handler) return next(args);
      const output = handler(args.input as Record<string, any>);
      return { output: { $metadata: {}, ...(output as object) }, response: {} };
    },
    // After the call log (normal priority), so stand-in calls are counted like real ones.
    { step: 'initialize', priority: 'low', name: 'eksStandIn' },
  );
}

export const emptyStandIn = (): EksStandInState => ({ accessEntries: new Map(), addons: new Set(), associations: new Map() });
