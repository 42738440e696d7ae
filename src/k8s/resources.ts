// Resource references for every kind the operator touches.
import { GROUP, VERSION, KINDS } from '../model/constants.ts';
import { REMEDIATION_KINDS } from '../model/remediation-constants.ts';
import type { ResourceRef } from './client.ts';

export const RESOURCES = {
  segments: { group: GROUP, version: VERSION, plural: KINDS.segment.plural, namespaced: true },
  hosts: { group: GROUP, version: VERSION, plural: KINDS.host.plural, namespaced: true },
  notifications: { group: GROUP, version: VERSION, plural: KINDS.notification.plural, namespaced: true },
  configMaps: { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
  /** Only the admission key (src/store/admission/seal.ts). */
  secrets: { group: '', version: 'v1', plural: 'secrets', namespaced: true },
  events: { group: 'events.k8s.io', version: 'v1', plural: 'events', namespaced: true },
  namespaces: { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  nodes: { group: '', version: 'v1', plural: 'nodes', namespaced: false },
  crds: { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false },
  /** Only the binding that guards the safety overrides (src/fencing/approval-guard.ts). */
  validatingAdmissionPolicyBindings: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicybindings',
    namespaced: false,
  },
} as const satisfies Record<string, ResourceRef>;

/** The Medik8s remediator's kinds and the other Medik8s operators' CRs it reads as proof of fencing. */
export const REMEDIATION_RESOURCES = {
  templates: { group: GROUP, version: VERSION, plural: REMEDIATION_KINDS.template.plural, namespaced: true },
  remediations: { group: GROUP, version: VERSION, plural: REMEDIATION_KINDS.remediation.plural, namespaced: true },
  /** medik8s/fence-agents-remediation; not ours, may be absent (404 = no proof). */
  fenceAgentsRemediations: {
    group: 'fence-agents-remediation.medik8s.io',
    version: 'v1alpha1',
    plural: 'fenceagentsremediations',
    namespaced: true,
  },
  /** medik8s/self-node-remediation; not ours, may be absent (404 = no proof). */
  selfNodeRemediations: {
    group: 'self-node-remediation.medik8s.io',
    version: 'v1alpha1',
    plural: 'selfnoderemediations',
    namespaced: true,
  },
} as const satisfies Record<string, ResourceRef>;
