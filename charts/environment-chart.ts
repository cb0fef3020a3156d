import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { LoadedEnvironment } from '../config/environment.js';
import type { InfraOutputs } from '../config/outputs.js';
import { KarpenterNodeClass } from './ec2-node-class.js';
import { Inflate } from './inflate.js';
import { commonLabels } from './metadata.js';
import { KarpenterNodePool } from './node-pool.js';

export interface EnvironmentChartProps {
  readonly environment: LoadedEnvironment;
  readonly outputs: InfraOutputs;
}

/** Everything `dist/<env>/` holds for one environment. The chart id is the environment name. */
export class EnvironmentChart extends Chart {
  constructor(scope: Construct, props: EnvironmentChartProps) {
    const { environment, outputs } = props;
    super(scope, environment.name, { labels: commonLabels(environment.name) });
    const { config } = environment;
    for (const nodeClass of config.nodeClasses) {
      new KarpenterNodeClass(this, `NodeClass-${nodeClass.name}`, {
        config: nodeClass,
        clusterName: config.cluster.name,
        nodeRoleName: outputs.nodeRoleName,
      });
    }
    for (const pool of config.nodePools) {
      new KarpenterNodePool(this, `NodePool-${pool.name}`, { config: pool });
    }
    new Inflate(this, 'Inflate');
  }
}
