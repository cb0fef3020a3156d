import { Construct } from 'constructs';
import { AppProject, type AppProjectSpecClusterResourceWhitelist, type AppProjectSpecDestinations } from '../../imports/appproject-argoproj.io.js';

export interface KarpenterAppProjectProps {
  /** @default none: the project name is required and explicit */
  readonly name: string;
  /** Argo CD's namespace. */
  readonly namespace: string;
  readonly description: string;
  /** Repositories the project's Applications may use. */
  readonly sourceRepos: readonly string[];
  readonly destinations: readonly AppProjectSpecDestinations[];
  /** Cluster-scoped kinds allowed; any other is refused by Argo CD. */
  readonly clusterResources: readonly AppProjectSpecClusterResourceWhitelist[];
  /** Namespaced kinds allowed. @default every kind (the project's namespaces are the fence) */
  readonly namespaceResources?: readonly AppProjectSpecClusterResourceWhitelist[];
  readonly annotations?: Readonly<Record<string, string>>;
}

/** An AppProject, with its lists sorted and de-duplicated so the output does not depend on input order. */
export class KarpenterAppProject extends Construct {
  constructor(scope: Construct, id: string, props: KarpenterAppProjectProps) {
    super(scope, id);
    const kinds = (list: readonly AppProjectSpecClusterResourceWhitelist[]) => uniqueSorted(list, (k) => `${k.group}/${k.kind}`);
    new AppProject(this, 'Resource', {
      metadata: { name: props.name, namespace: props.namespace, annotations: { ...props.annotations } },
      spec: {
        description: props.description,
        sourceRepos: [...new Set(props.sourceRepos)].sort(),
        destinations: uniqueSorted(props.destinations, (d) => `${d.server ?? ''}|${d.name ?? ''}|${d.namespace ?? ''}`),
        clusterResourceWhitelist: kinds(props.clusterResources),
        ...(props.namespaceResources ? { namespaceResourceWhitelist: kinds(props.namespaceResources) } : {}),
      },
    });
  }
}

function uniqueSorted<T>(items: readonly T[], key: (t: T) => string): T[] {
  const byKey = new Map(items.map((i) => [key(i), i]));
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}
