import { Construct } from 'constructs';
import type { ApplicationSpec } from '../../imports/application-argoproj.io.js';
import { ApplicationSet, type ApplicationSetSpecTemplateSpec } from '../../imports/applicationset-argoproj.io.js';

export interface FleetApplicationSetProps {
  readonly name: string;
  /** Argo CD's namespace; generated Applications land there too. */
  readonly namespace: string;
  /** Cluster secrets (argocd.argoproj.io/secret-type: cluster) must carry all of these labels. */
  readonly clusterLabels: Readonly<Record<string, string>>;
  /** Name of each generated Application: a Go template over the cluster's parameters. */
  readonly applicationName: string;
  /** Spec of each generated Application; its strings may use Go templates over the cluster's parameters. */
  readonly template: ApplicationSpec;
  readonly labels?: Readonly<Record<string, string>>;
  /** On the ApplicationSet itself. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** On each generated Application. */
  readonly applicationAnnotations?: Readonly<Record<string, string>>;
}

/**
 * One ApplicationSet over a fleet: a cluster generator selects clusters by label and
 * renders one Application per cluster. `missingkey=error`: a cluster secret that lacks
 * an annotation the template reads fails to generate rather than installing Karpenter
 * with an empty cluster name. `preserveResourcesOnDeletion`: when a cluster leaves the
 * fleet or the ApplicationSet is deleted, the Applications go but what they deployed
 * (CRDs, NodePools, nodes) stays.
 */
export class FleetApplicationSet extends Construct {
  constructor(scope: Construct, id: string, props: FleetApplicationSetProps) {
    super(scope, id);
    new ApplicationSet(this, 'Resource', {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...props.labels }, annotations: { ...props.annotations } },
      spec: {
        goTemplate: true,
        goTemplateOptions: ['missingkey=error'],
        generators: [{ clusters: { selector: { matchLabels: { ...props.clusterLabels } } } }],
        syncPolicy: { preserveResourcesOnDeletion: true },
        template: {
          metadata: { name: props.applicationName, labels: { ...props.labels }, annotations: { ...props.applicationAnnotations } },
          // Same CRD schema as an Application's spec; the imported types differ only by name.
          spec: props.template as unknown as ApplicationSetSpecTemplateSpec,
        },
      },
    });
  }
}
