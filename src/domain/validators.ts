// Pure validators: Masakari's request schemas applied to one object, returning
// Masakari's message (or undefined). The REST facade calls them on request
// bodies; the kubectl path (admission of FailoverSegment/HaHost/Notification)
// calls the *Spec variants on custom-resource specs, so both paths refuse the
// same input with the same words.

import type { FailoverSegmentSpec, HaHostSpec, NotificationSpec } from '../model/types.ts';
import { validateBody } from './schemas.ts';
import type { SchemaName } from './schemas.ts';
import type { ApiVersion } from './api-version.ts';
import { atLeast } from './api-version.ts';
import { recoveryLimitsProblem } from './recovery-limits.ts';

/** segments.py create: schema by microversion (1.0–1.1 without enabled, 1.2+ with). */
export function validateSegmentCreate(body: unknown, version: ApiVersion): string | undefined {
  return validateBody(atLeast(version, 1, 2) ? 'segmentCreateV12' : 'segmentCreate', body);
}

export function validateSegmentUpdate(body: unknown, version: ApiVersion): string | undefined {
  return validateBody(atLeast(version, 1, 2) ? 'segmentUpdateV12' : 'segmentUpdate', body);
}

export function validateHostCreate(body: unknown): string | undefined {
  return validateBody('hostCreate', body);
}

export function validateHostUpdate(body: unknown): string | undefined {
  return validateBody('hostUpdate', body);
}

/** notifications.py create, outer schema only (the payload is checked after the policy, as there). */
export function validateNotificationCreate(body: unknown): string | undefined {
  return validateBody('notificationCreate', body);
}

const PAYLOAD_SCHEMAS: Record<string, SchemaName> = {
  PROCESS: 'payloadProcess',
  VM: 'payloadVm',
  COMPUTE_HOST: 'payloadComputeHost',
};

/** notifications.py _validate_*_payload: the payload schema of the notification type. */
export function validateNotificationPayload(type: string, payload: unknown): string | undefined {
  const schema = PAYLOAD_SCHEMAS[type];
  return schema ? validateBody(schema, payload) : undefined;
}

// ------------------------------------------------------------------ specs (Masakari field names)

/** A segment as Masakari's create body carries it ({name, recovery_method, service_type, description?, enabled?}). */
export function validateSegmentSpec(segment: Record<string, unknown>): string | undefined {
  return validateBody('segmentCreateV12', { segment });
}

/** A host as Masakari's create body carries it ({name, type, control_attributes, reserved?, on_maintenance?}). */
export function validateHostSpec(host: Record<string, unknown>): string | undefined {
  return validateBody('hostCreate', { host });
}

/** A notification as Masakari's create body carries it, payload included. */
export function validateNotificationSpec(notification: Record<string, unknown>): string | undefined {
  return (
    validateBody('notificationCreate', { notification }) ??
    validateNotificationPayload(String(notification.type), notification.payload)
  );
}

// ------------------------------------------------------------------ custom-resource specs

function defined(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

export function validateFailoverSegmentSpec(spec: FailoverSegmentSpec): string | undefined {
  return (
    validateSegmentSpec(
      defined({
        name: spec.name,
        recovery_method: spec.recoveryMethod,
        service_type: spec.serviceType,
        description: spec.description,
        enabled: spec.enabled,
      }),
    ) ?? recoveryLimitsProblem(spec.recoveryLimits)
  );
}

export function validateHaHostSpec(spec: HaHostSpec): string | undefined {
  return validateHostSpec(
    defined({
      name: spec.name,
      type: spec.type,
      control_attributes: spec.controlAttributes,
      reserved: spec.reserved,
      on_maintenance: spec.onMaintenance,
    }),
  );
}

export function validateNotificationResourceSpec(spec: NotificationSpec): string | undefined {
  return validateNotificationSpec(
    defined({ type: spec.type, hostname: spec.hostname, generated_time: spec.generatedTime, payload: spec.payload }),
  );
}
