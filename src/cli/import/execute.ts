// Carries out an import plan through the store's import writes
// (src/store/import.ts): segments first, then hosts, each kind in ascending
// source-id order (so a preserved id never blocks the next one). One object
// failing does not stop the others; its error is its result. Hosts of a
// segment that failed fail with it.
import { KubeError } from '../../k8s/client.ts';
import type { FailoverSegment, HaHost } from '../../model/types.ts';
import type { StoreImporter } from '../../store/index.ts';
import { objectId } from '../../store/index.ts';
import { executionOrder } from './plan.ts';
import type { HostItem, ImportPlan, PlanItem, SegmentItem } from './plan.ts';
import { targetMissing } from './validate.ts';

export type Outcome = 'created' | 'updated' | 'unchanged' | 'failed' | 'left alone';

export interface ItemResult {
  item: PlanItem;
  outcome: Outcome;
  /** The id the object has in the namespace after the run. */
  id?: number;
  error?: string;
}

export interface ExecuteDeps {
  importer: StoreImporter;
  namespace: string;
  /** --verify-hosts: an error text when Nova has no nova-compute service of that name. */
  verifyHost?: (name: string) => Promise<string | undefined>;
  /** Called after each object, for progress output. */
  onResult?: (r: ItemResult) => void;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A create answered 404: the namespace (its first write is a name-claim ConfigMap) or a CRD is missing. Stop. */
function stopIfTargetMissing(item: PlanItem, e: unknown, namespace: string): void {
  if (item.action === 'create' && e instanceof KubeError && e.code === 404) throw targetMissing(namespace, e);
}

export async function executePlan(plan: ImportPlan, deps: ExecuteDeps): Promise<ItemResult[]> {
  const results = new Map<PlanItem, ItemResult>();
  const record = (r: ItemResult) => {
    results.set(r.item, r);
    deps.onResult?.(r);
  };
  /** Segment uuid → the FailoverSegment hosts go into (written or already there), when it is usable. */
  const segmentObjects = new Map<string, FailoverSegment>();

  for (const item of executionOrder(plan.items, 'segment') as SegmentItem[]) {
    const r = await runSegment(item, deps);
    if (r.object) segmentObjects.set(item.uuid, r.object);
    record(r.result);
  }
  for (const item of executionOrder(plan.items, 'host') as HostItem[]) {
    record(await runHost(item, segmentObjects, deps));
  }
  return plan.items.map((item) => results.get(item) as ItemResult);
}

async function runSegment(
  item: SegmentItem,
  deps: ExecuteDeps,
): Promise<{ result: ItemResult; object?: FailoverSegment }> {
  const known = (object: FailoverSegment, outcome: Outcome) => {
    const id = objectId(object);
    return { object, result: { item, outcome, ...(id !== undefined ? { id } : {}) } };
  };
  if (item.action === 'leave') return { result: { item, outcome: 'left alone', ...idOf(item) } };
  if (item.action === 'fail' || !item.source) return { result: failed(item, item.reason) };
  try {
    if (item.action === 'skip' && item.existing) return known(item.existing, 'unchanged');
    if (item.action === 'update' && item.existing) {
      return known(await deps.importer.updateSegment(item.existing, item.source), 'updated');
    }
    const created = await deps.importer.createSegment(item.source, item.keepsId === true);
    return { object: created.object, result: { item, outcome: 'created', id: created.id } };
  } catch (e) {
    stopIfTargetMissing(item, e, deps.namespace);
    return { result: failed(item, message(e)) };
  }
}

async function runHost(item: HostItem, segments: Map<string, FailoverSegment>, deps: ExecuteDeps): Promise<ItemResult> {
  const known = (object: HaHost, outcome: Outcome): ItemResult => {
    const id = objectId(object);
    return { item, outcome, ...(id !== undefined ? { id } : {}) };
  };
  if (item.action === 'leave') return { item, outcome: 'left alone', ...idOf(item) };
  if (item.action === 'fail' || !item.source) return failed(item, item.reason);
  if (item.action === 'skip' && item.existing) return known(item.existing, 'unchanged');
  try {
    if (deps.verifyHost) {
      const problem = await deps.verifyHost(item.source.name);
      if (problem) return failed(item, problem);
    }
    if (item.action === 'update' && item.existing) {
      return known(await deps.importer.updateHost(item.existing, item.source), 'updated');
    }
    // A new host needs its segment as it is now in the namespace (written above, or already there).
    const segment = segments.get(item.source.segment_uuid);
    if (!segment) return failed(item, 'its segment was not imported');
    const created = await deps.importer.createHost(segment, item.source, item.keepsId === true);
    return { item, outcome: 'created', id: created.id };
  } catch (e) {
    stopIfTargetMissing(item, e, deps.namespace);
    return failed(item, message(e));
  }
}

function failed(item: PlanItem, error: string | undefined): ItemResult {
  return { item, outcome: 'failed', ...idOf(item), error: error ?? 'not importable' };
}

function idOf(item: PlanItem): { id?: number } {
  return item.id !== undefined && item.action !== 'create' ? { id: item.id } : {};
}
