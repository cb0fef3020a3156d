import { Construct } from 'constructs';
import { Application, type ApplicationSpec } from '../../imports/application-argoproj.io.js';

export interface KarpenterApplicationProps {
  readonly name: string;
  /** Argo CD's namespace. */
  readonly namespace: string;
  readonly spec: ApplicationSpec;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * One Application. Never given a finalizer (see application-specs.ts); the check below
 * keeps a future edit from adding `resources-finalizer.argocd.argoproj.io` by accident.
 */
export class KarpenterApplication extends Construct {
  public readonly resource: Application;
  constructor(scope: Construct, id: string, props: KarpenterApplicationProps) {
    super(scope, id);
    this.resource = new Application(this, 'Resource', {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...props.labels }, annotations: { ...props.annotations } },
      spec: props.spec,
    });
    this.node.addValidation({
      validate: () => {
        const finalizers = (this.resource.toJson() as { metadata: { finalizers?: string[] } }).metadata.finalizers ?? [];
        return finalizers.length > 0 ? [`Application "${props.name}" must have no finalizers (a cascading delete would remove what it deployed), got ${finalizers.join(', ')}`] : [];
      },
    });
  }
}
