// The Masakari rules a kubectl-created object must pass, the same pure
// validators the REST facade applies to request bodies (src/domain), so both
// paths refuse the same input with the same words. Injectable; the admission
// webhook (src/webhook/rules.ts) uses the same seam.
import type { FailoverSegmentSpec, HaHostSpec, NotificationSpec } from '../model/types.ts';
import {
  validateFailoverSegmentSpec,
  validateHaHostSpec,
  validateNotificationResourceSpec,
} from '../domain/validators.ts';

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
