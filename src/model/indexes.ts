// Names of the informers' secondary indexes, one set for every component
// (store, engine, reconcilers, remediation), so a lookup and the index it
// reads can never disagree on a name.
export const INDEX = {
  uuid: 'uuid',
  id: 'id',
  /** Masakari name (spec.name) of segments and hosts. */
  name: 'name',
  /** Hosts by the uuid of their segment. */
  segmentUuid: 'segmentUuid',
  /** Hosts by spec.segmentRef.name (the segment's metadata.name), for hosts not admitted yet. */
  segmentRef: 'segmentRef',
  /**
   * Notifications by duplicate fingerprint: a digest of source host uuid,
   * type and payload hash (src/store/admission/fingerprints.ts fingerprintKey), so
   * the duplicate check reads the few with the same payload, not every
   * notification of the host.
   */
  fingerprint: 'fingerprint',
  /** Notifications not admitted yet, by spec.hostname (admitted ones are not filed). */
  unadmittedHostname: 'unadmittedHostname',
  /** Kubernetes Nodes by the Nova compute host name they run. */
  computeHost: 'computeHost',
} as const;
