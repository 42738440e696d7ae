// --dry-run asks the API server about every create and update of the plan
// (server-side dry run: validated by the CRD schema, then discarded), so an
// object Masakari accepted but the CRDs refuse shows up as an error in the
// plan instead of failing the real run.
import { KubeError } from '../../k8s/client.ts';
import type { StoreImporter } from '../../store/index.ts';
import { restObjectName } from '../../store/index.ts';
import type { ImportPlan } from './plan.ts';

/** The namespace (or a CRD) is missing: every write would fail the same way, so the whole run stops. */
export class TargetMissingError extends Error {}

export function targetMissing(namespace: string, e: KubeError): TargetMissingError {
  return new TargetMissingError(
    `kubernetes: namespace ${namespace} or the masakari.openkeel.io CRDs do not exist (${e.message}); ` +
      'create the namespace and install the CRDs first (docs/install.md)',
  );
}

/**
 * Marks plan items the API server would refuse as 'fail', with its message;
 * hosts of a refused segment too, and (with --verify-hosts) hosts Nova does not know.
 */
export async function validatePlan(
  plan: ImportPlan,
  importer: StoreImporter,
  namespace: string,
  verifyHost?: (name: string) => Promise<string | undefined>,
): Promise<void> {
  const refusedSegments = new Set<string>();
  const segmentNames = new Map<string, string>();
  for (const item of plan.items) {
    if (item.kind !== 'segment' || !item.source) continue;
    segmentNames.set(
      item.uuid,
      item.existing?.metadata.name ?? restObjectName(item.source.name, item.source.uuid, 'segment'),
    );
    if (item.action !== 'create' && item.action !== 'update') continue;
    const refusal = await ask(namespace, () => importer.dryRunSegment(item.source!, item.existing));
    if (refusal) {
      Object.assign(item, { action: 'fail', reason: refusal });
      refusedSegments.add(item.uuid);
    }
  }
  for (const item of plan.items) {
    if (item.kind !== 'host' || !item.source || (item.action !== 'create' && item.action !== 'update')) continue;
    if (refusedSegments.has(item.source.segment_uuid)) {
      Object.assign(item, { action: 'fail', reason: 'its segment cannot be imported' });
      continue;
    }
    const unknown = verifyHost ? await verifyHost(item.source.name) : undefined;
    if (unknown) {
      Object.assign(item, { action: 'fail', reason: unknown });
      continue;
    }
    const segmentName = segmentNames.get(item.source.segment_uuid) ?? '';
    const refusal = await ask(namespace, () => importer.dryRunHost(item.source!, segmentName, item.existing));
    if (refusal) Object.assign(item, { action: 'fail', reason: refusal });
  }
}

async function ask(namespace: string, dryRun: () => Promise<void>): Promise<string | undefined> {
  try {
    await dryRun();
    return undefined;
  } catch (e) {
    if (!(e instanceof KubeError)) throw e;
    if (e.code === 404) throw targetMissing(namespace, e);
    // A dry-run create that meets an object of that name still passed validation.
    if (e.code === 409 && e.reason === 'AlreadyExists') return undefined;
    // 409 Conflict on an update: the object changed since it was listed; the real run re-reads it.
    if (e.code === 409) return undefined;
    if (e.code === 0) throw e;
    return `the API server refuses it: ${e.message}`;
  }
}
