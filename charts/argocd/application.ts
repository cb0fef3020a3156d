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
 * One Application. Never given a finalizer (see application-specs.ts); `finalizerErrors`,
 * run on what synth renders, keeps a future edit from adding
 * `resources-finalizer.argocd.argoproj.io` by accident.
 */
export class KarpenterApplication extends Construct {
  public readonly resource: Application;
  constructor(scope: Construct, id: string, props: KarpenterApplicationProps) {
    super(scope, id);
    this.resource = new Application(this, 'Resource', {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...props.labels }, annotations: { ...props.annotations } },
      spec: props.spec,
    });
  }
}

/**
 * One line per rendered Application that has finalizers: none may (a cascading delete
 * would remove what it deployed). Checked on the objects synth writes, so a finalizer
 * from props, a patch or a later edit of the chart is caught alike.
 */
export function finalizerErrors(objects: readonly { kind?: string; metadata?: { name?: string; finalizers?: readonly string[] } }[]): string[] {
  return objects
    .filter((o) => o.kind === 'Application' && (o.metadata?.finalizers ?? []).length > 0)
    .map((o) => `Application "${o.metadata!.name}" must have no finalizers (a cascading delete would remove what it deployed), got ${o.metadata!.finalizers!.join(', ')}`);
}
