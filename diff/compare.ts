import type { Manifest } from '../charts/render.js';
import { differences, nodeClassChanges, nodePoolChanges, strongest, CORE, AWS, type Effect, type FieldChange } from './drift.js';
import { describePacing, type Budget } from './budgets.js';
import type { LabelUniverse } from './universe.js';
import { newlyUnfit, type EnvironmentAnalysis, type PoolAnalysis } from './analysis.js';

/**
 * The review of one environment: every object added, deleted, renamed or changed between
 * the base's dist/<env>/ and the synthesized change, with what Karpenter does about it.
 * Pure: the CLI reads git and synthesizes, this decides.
 */
export interface ObjectReview {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly status: 'added' | 'deleted' | 'changed' | 'renamed';
  /** Renamed node classes: the old name. */
  readonly from?: string;
  readonly effect: Effect;
  readonly changes: readonly FieldChange[];
  /** Further sentences: pacing, lifetime, who uses a node class, what a deletion does. */
  readonly notes: readonly string[];
  readonly analysis?: { readonly before?: PoolAnalysis; readonly after?: PoolAnalysis };
}

export interface EnvironmentReview {
  readonly environment: string;
  readonly status: 'added' | 'deleted' | 'changed' | 'unchanged';
  readonly objects: readonly ObjectReview[];
  readonly unfit: ReadonlyArray<{ workload: string; why: string }>;
  /** False when no analyzer ran, so the report can say so rather than stay silent. */
  readonly analysed: boolean;
}

export interface ReviewInput {
  readonly environment: string;
  /** undefined: the environment does not exist on that side. */
  readonly before: readonly Manifest[] | undefined;
  readonly after: readonly Manifest[] | undefined;
  readonly analysisBefore?: EnvironmentAnalysis;
  readonly analysisAfter?: EnvironmentAnalysis;
  /** The nodes that can exist (from the catalogue), to name exactly those a requirement change excludes. */
  readonly universe?: LabelUniverse;
}

const idOf = (m: Manifest) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
const KIND_ORDER = ['EC2NodeClass', 'NodePool'];
const kindRank = (k: string) => (KIND_ORDER.includes(k) ? KIND_ORDER.indexOf(k) : KIND_ORDER.length);

type Spec = Record<string, any>;
const spec = (m: Manifest | undefined): Spec => ((m as Spec | undefined)?.spec ?? {}) as Spec;
const classOf = (pool: Manifest | undefined): string | undefined => spec(pool).template?.spec?.nodeClassRef?.name;

export function reviewEnvironment(input: ReviewInput): EnvironmentReview {
  const before = new Map((input.before ?? []).map((m) => [idOf(m), m]));
  const after = new Map((input.after ?? []).map((m) => [idOf(m), m]));
  const poolsAfter = (input.after ?? []).filter((m) => m.kind === 'NodePool');
  const poolsBefore = (input.before ?? []).filter((m) => m.kind === 'NodePool');
  const analysisOf = (a: EnvironmentAnalysis | undefined, name: string) => a?.pools.find((p) => p.name === name);

  // A node class is renamed when a deleted class's pools now point at an added class.
  const renames = new Map<string, string>(); // new name -> old name
  for (const pool of poolsAfter) {
    const old = poolsBefore.find((p) => p.metadata.name === pool.metadata.name);
    const from = classOf(old);
    const to = classOf(pool);
    if (from === undefined || to === undefined || from === to) continue;
    const deleted = !after.has(`EC2NodeClass//${from}`) && before.has(`EC2NodeClass//${from}`);
    const added = after.has(`EC2NodeClass//${to}`) && !before.has(`EC2NodeClass//${to}`);
    if (deleted && added) renames.set(to, from);
  }
  const renamedFrom = new Set(renames.values());

  const reviews: ObjectReview[] = [];
  for (const id of [...new Set([...before.keys(), ...after.keys()])]) {
    const b = before.get(id);
    const a = after.get(id);
    const m = (a ?? b)!;
    const base = { kind: m.kind, name: m.metadata.name, ...(m.metadata.namespace ? { namespace: m.metadata.namespace } : {}) };
    if (m.kind === 'EC2NodeClass' && !a && renamedFrom.has(m.metadata.name)) continue; // reported with its new name
    if (b && a) {
      const changes = m.kind === 'NodePool' ? nodePoolChanges(b, a, input.universe) : m.kind === 'EC2NodeClass' ? nodeClassChanges(b, a) : otherChanges(b, a);
      if (changes.length === 0) continue;
      const effect = strongest(changes);
      reviews.push({
        ...base,
        status: 'changed',
        effect,
        changes,
        notes: notesFor(m.kind, a, effect, poolsAfter),
        ...(m.kind === 'NodePool' ? { analysis: { before: analysisOf(input.analysisBefore, m.metadata.name), after: analysisOf(input.analysisAfter, m.metadata.name) } } : {}),
      });
    } else if (a) {
      const from = m.kind === 'EC2NodeClass' ? renames.get(m.metadata.name) : undefined;
      if (from !== undefined) {
        const changes = nodeClassChanges({ ...before.get(`EC2NodeClass//${from}`)!, metadata: {} }, { ...a, metadata: {} });
        const users = poolsAfter.filter((p) => classOf(p) === m.metadata.name).map((p) => `\`${p.metadata.name}\``);
        reviews.push({
          ...base,
          status: 'renamed',
          from,
          effect: 'replaces',
          changes,
          notes: [
            `renamed from \`${from}\`: the pools that used it (${users.join(', ')}) change \`spec.template.spec.nodeClassRef.name\`, which is hashed, so all their nodes drift and are replaced (NodePoolDrifted; ${CORE} pkg/apis/v1/nodepool.go \`NodePool.Hash()\`)`,
            `the old EC2NodeClass \`${from}\` is deleted but stays, held by its finalizer, until no NodeClaim uses it (${AWS} pkg/controllers/nodeclass/controller.go \`finalize\`)`,
          ],
        });
      } else {
        reviews.push({
          ...base,
          status: 'added',
          effect: 'none',
          changes: [],
          notes: m.kind === 'NodePool' ? [`new NodePool: no existing node is replaced; it launches nodes for pods it can take. ${describeLifetime(a)}`, `drift pacing: ${describePacing(spec(a).disruption?.budgets as Budget[] | undefined)}`] : [],
          ...(m.kind === 'NodePool' ? { analysis: { after: analysisOf(input.analysisAfter, m.metadata.name) } } : {}),
        });
      }
    } else {
      reviews.push({
        ...base,
        status: 'deleted',
        effect: m.kind === 'NodePool' ? 'replaces' : 'none',
        changes: [],
        notes: deletionNotes(m),
        ...(m.kind === 'NodePool' ? { analysis: { before: analysisOf(input.analysisBefore, m.metadata.name) } } : {}),
      });
    }
  }
  reviews.sort((x, y) => kindRank(x.kind) - kindRank(y.kind) || (x.kind < y.kind ? -1 : x.kind > y.kind ? 1 : 0) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  const status = input.before === undefined ? 'added' : input.after === undefined ? 'deleted' : reviews.length > 0 ? 'changed' : 'unchanged';
  return {
    environment: input.environment,
    status,
    objects: reviews,
    unfit: newlyUnfit(input.analysisBefore, input.analysisAfter),
    analysed: input.analysisAfter !== undefined || input.analysisBefore !== undefined,
  };
}

function deletionNotes(m: Manifest): string[] {
  if (m.kind === 'NodePool') {
    return [
      `NodePool deleted: its NodeClaims carry an ownerReference to it, so Kubernetes deletes them and **every node of the pool drains and terminates**; budgets do not pace this (${CORE} pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go). Pods move only to other pools that admit them.`,
    ];
  }
  if (m.kind === 'EC2NodeClass') {
    return [`EC2NodeClass deleted: it stays, held by its finalizer, until no NodeClaim uses it (${AWS} pkg/controllers/nodeclass/controller.go \`finalize\`); pools still pointing at it cannot launch.`];
  }
  return [];
}

/** Deployments, PDBs, namespaces: Karpenter does not hash them; say what changed, nothing more. */
function otherChanges(before: Manifest, after: Manifest): FieldChange[] {
  return differences(before, after).map((d) => ({ ...d, effect: 'none' as const, why: 'not a Karpenter object: no node is replaced', cite: '' }));
}

function notesFor(kind: string, after: Manifest, effect: Effect, poolsAfter: readonly Manifest[]): string[] {
  if (kind === 'NodePool') {
    const notes = [describeLifetime(after)];
    if (effect === 'replaces' || effect === 'replaces-some') notes.unshift(`drift pacing: ${describePacing(spec(after).disruption?.budgets as Budget[] | undefined)}`);
    return notes;
  }
  if (kind === 'EC2NodeClass') {
    const users = poolsAfter.filter((p) => classOf(p) === after.metadata.name);
    if (users.length === 0) return ['no NodePool uses this node class: no node is affected'];
    if (effect !== 'replaces' && effect !== 'replaces-some') return [];
    return users.map((p) => `pool \`${p.metadata.name}\`: drift pacing: ${describePacing(spec(p).disruption?.budgets as Budget[] | undefined)}. ${describeLifetime(p)}`);
  }
  return [];
}

/** expireAfter and terminationGracePeriod, as they bound a node's life and a drift's drain. */
export function describeLifetime(pool: Manifest): string {
  const t = spec(pool).template?.spec ?? {};
  const expire = t.expireAfter === undefined ? '720h' : String(t.expireAfter);
  const expireText = expire === 'Never' ? 'expireAfter Never: nodes are replaced only by drift or consolidation' : `expireAfter ${expire}: every node is replaced by then anyway (forceful, budgets do not apply)`;
  const tgp = t.terminationGracePeriod;
  const tgpText =
    tgp === undefined
      ? 'no terminationGracePeriod: a drifted node whose pods are blocked by a PodDisruptionBudget or `karpenter.sh/do-not-disrupt` waits for them indefinitely'
      : `terminationGracePeriod ${String(tgp)}: a draining node is terminated after that even if PodDisruptionBudgets or \`karpenter.sh/do-not-disrupt\` still block`;
  return `${expireText}; ${tgpText}.`;
}
