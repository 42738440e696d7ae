// What the store's host cache holds of an HaHost: the object as stored, with
// the strings and condition lists hosts repeat shared (string-pool.ts). A
// host repeats its segment's name, uuid and uid, the api version, kind,
// finalizer, managed-by label and its Ready condition's texts, which add up
// in the api's heap for many hosts (docs/benchmarks.md, "Scale"). Nothing is
// dropped: the reconcilers write hosts from this cache. Its objects are
// literal-shaped (compact-object.ts).
import { LABELS } from '../model/constants.ts';
import type { HaHost, OwnerReference } from '../model/types.ts';
import { compact } from './compact-object.ts';
import { shared, sharedConditions, sharedValues } from './string-pool.ts';

/** Labels whose value is the host's own. */
const OWN_LABELS: ReadonlySet<string> = new Set([LABELS.uuid, LABELS.id]);

const sharedOwnerReference = (r: OwnerReference): OwnerReference =>
  compact({
    ...r,
    apiVersion: shared(r.apiVersion),
    kind: shared(r.kind),
    name: shared(r.name),
    uid: shared(r.uid),
  });

/** The host cache's copy of an HaHost (see the header); deep-equal to the input, which is not changed. */
export function slimHost(h: HaHost): HaHost {
  const m = h.metadata;
  const metadata = compact({
    ...m,
    ...(m.namespace !== undefined ? { namespace: shared(m.namespace) } : {}),
    ...(m.labels ? { labels: sharedValues(m.labels, OWN_LABELS) } : {}),
    ...(m.finalizers ? { finalizers: m.finalizers.map((f) => shared(f)) } : {}),
    ...(m.ownerReferences ? { ownerReferences: m.ownerReferences.map(sharedOwnerReference) } : {}),
  });
  const slim: HaHost = { ...h, apiVersion: shared(h.apiVersion), kind: shared(h.kind), metadata };
  if (h.spec) {
    slim.spec = compact({
      ...h.spec,
      type: shared(h.spec.type),
      controlAttributes: shared(h.spec.controlAttributes),
      ...(h.spec.segmentRef ? { segmentRef: { ...h.spec.segmentRef, name: shared(h.spec.segmentRef.name) } } : {}),
    });
  }
  if (h.status) {
    const st = h.status;
    slim.status = compact({
      ...st,
      ...(st.segmentUuid !== undefined ? { segmentUuid: shared(st.segmentUuid) } : {}),
      ...(st.conditions ? { conditions: sharedConditions(st.conditions) } : {}),
    });
  }
  return compact(slim);
}
