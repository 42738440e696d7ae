// The Masakari rules a kubectl-created object must pass, the same pure
// validators the REST facade applies to request bodies (validators.ts), so
// every path refuses the same input with the same words: the store's
// reconcilers (src/reconcilers/admission.ts) and the admission webhook
// (src/webhook/rules.ts) take them through this injectable seam.
import type { FailoverSegmentSpec, HaHostSpec, NotificationSpec } from '../model/types.ts';
import { validateFailoverSegmentSpec, validateHaHostSpec, validateNotificationResourceSpec } from './validators.ts';

export interface SpecValidators {
  /** Masakari's message for an invalid spec, or undefined when valid. */
  segment(spec: FailoverSegmentSpec): string | undefined;
  host(spec: HaHostSpec): string | undefined;
  notification(spec: NotificationSpec): string | undefined;
}

export const MASAKARI_VALIDATORS: SpecValidators = {
  segment: validateFailoverSegmentSpec,
  host: validateHaHostSpec,
  notification: validateNotificationResourceSpec,
};
