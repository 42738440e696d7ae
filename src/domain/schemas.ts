// Request-body schemas, translated key for key from Masakari
// (masakari/api/openstack/ha/schemas/*.py and validation/parameter_types.py).
// Key order is significant: the validator reports the first failing keyword
// in this order, as jsonschema does. The same objects feed the OpenAPI
// document (src/api/openapi.ts).
//
// Two engines read them: ajv (compiled once, strict) proves the schemas are
// well-formed and answers "valid?" fast; draft4.ts finds the error Masakari
// would report and words it the same way.

import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import { BODY_BOOLEAN_VALUES } from './booleans.ts';
import { pyTuple } from './python-repr.ts';
import { Draft4Validator, FormatCause, masakariDetail } from './validation/draft4.ts';
import type { JsonSchema } from './validation/draft4.ts';
import { invalidName } from './messages.ts';
import { PRINTABLE_RANGES, SPACE_SEPARATORS } from './printable.ts';
import { MASAKARI_DESCRIPTION_PATTERN } from './generated/description-pattern.ts';
import { parseIsoTime } from '../time/format.ts';

// ------------------------------------------------------------------ enums (masakari/objects/fields.py; tuples there)
export const RECOVERY_METHODS = ['auto', 'reserved_host', 'auto_priority', 'rh_priority'] as const;
export const NOTIFICATION_TYPES = pyTuple(['COMPUTE_HOST', 'VM', 'PROCESS'] as const);
export const EVENT_TYPES = pyTuple(['STARTED', 'STOPPED'] as const);
export const HOST_STATUS_TYPES = pyTuple(['NORMAL', 'UNKNOWN'] as const);
export const CLUSTER_STATUS_TYPES = pyTuple(['ONLINE', 'OFFLINE'] as const);
export const NOTIFICATION_STATUSES = ['new', 'running', 'error', 'failed', 'ignored', 'finished'] as const;

// ------------------------------------------------------------------ patterns
/** parameter_types.valid_description_regex: printable characters and newlines, Masakari's exact text. */
export const DESCRIPTION_PATTERN = MASAKARI_DESCRIPTION_PATTERN;
/** A character that may not start or end a name: not printable, or a space separator. */
const NOT_NAME_EDGE = `[^${PRINTABLE_RANGES}]|[${SPACE_SEPARATORS}]`;
/** parameter_types.valid_name_regex: printable, not starting or ending with whitespace or a control character. */
const NAME_PATTERN = `^(?!${NOT_NAME_EDGE})[${PRINTABLE_RANGES}]*(?<!${NOT_NAME_EDGE})$`;
export const HOST_TYPE_PATTERN = '^[a-zA-Z0-9]*$';
export const HOSTNAME_PATTERN = '^[a-zA-Z0-9-._]*$';
export const PAYLOAD_KEY_PATTERN = '^[a-zA-Z0-9-_:. ]{1,255}$';

/**
 * Compiles a schema pattern with Python's re.search semantics: '$' also
 * matches just before a final newline (so 'abc\n' passes '^[a-z]*$' as it
 * does in Masakari). Patterns using \p{…} need the unicode flag.
 */
export function compilePattern(pattern: string): RegExp {
  const converted = pattern.endsWith('$') && !pattern.endsWith('\\$') ? `${pattern.slice(0, -1)}(?=\\n?$)` : pattern;
  return new RegExp(converted, pattern.includes('\\p{') ? 'u' : '');
}

const nameRegex = compilePattern(NAME_PATTERN);
const UUID_RE = /^(?:urn:)?(?:uuid:)?\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$/i;

/** oslo_utils.uuidutils.is_uuid_like: hyphens, braces and 'urn:uuid:' prefixes are tolerated. */
export function isUuidLike(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const stripped = value.replace(/^urn:/i, '').replace(/^uuid:/i, '');
  return UUID_RE.test(value) && stripped.replace(/[{}-]/g, '').length === 32;
}

/** The format checkers Masakari registers (validators.py). */
export const FORMATS = {
  'date-time': (v: unknown) => typeof v === 'string' && parseIsoTime(v) !== undefined,
  uuid: (v: unknown) => isUuidLike(v),
  name: (v: unknown) => {
    if (typeof v === 'string' && nameRegex.test(v)) return true;
    throw new FormatCause(invalidName());
  },
};

// ------------------------------------------------------------------ parameter types
const name = () => ({ type: 'string', minLength: 1, maxLength: 255, format: 'name' });
const description = () => ({ type: ['string', 'null'], minLength: 0, pattern: DESCRIPTION_PATTERN });
const hostType = () => ({ type: ['string', 'null'], minLength: 0, maxLength: 255, pattern: HOST_TYPE_PATTERN });
const boolean = () => ({ type: ['boolean', 'string'], enum: [...BODY_BOOLEAN_VALUES] });
const hostname = () => ({ type: 'string', minLength: 1, maxLength: 255, pattern: HOSTNAME_PATTERN });
const payload = () => ({
  type: 'object',
  patternProperties: { [PAYLOAD_KEY_PATTERN]: { type: 'string', maxLength: 255 } },
  additionalProperties: false,
});

// ------------------------------------------------------------------ segments
function segmentBase(withEnabled: boolean): JsonSchema {
  const properties: JsonSchema = {
    name: name(),
    description: description(),
    recovery_method: { type: 'string', enum: [...RECOVERY_METHODS] },
    service_type: name(),
  };
  if (withEnabled) properties.enabled = boolean();
  return { type: 'object', properties, additionalProperties: false };
}

function wrap(key: string, inner: JsonSchema): JsonSchema {
  return { type: 'object', properties: { [key]: inner }, required: [key], additionalProperties: false };
}

const segmentCreate = (v12: boolean) =>
  wrap('segment', { ...segmentBase(v12), required: ['name', 'recovery_method', 'service_type'] });
const segmentUpdate = (v12: boolean) =>
  wrap('segment', {
    ...segmentBase(v12),
    anyOf: [
      { required: ['name'] },
      { required: ['description'] },
      { required: ['recovery_method'] },
      { required: ['service_type'] },
      ...(v12 ? [{ required: ['enabled'] }] : []),
    ],
  });

// ------------------------------------------------------------------ hosts
function hostBase(): JsonSchema {
  return {
    type: 'object',
    properties: {
      name: name(),
      type: hostType(),
      control_attributes: description(),
      reserved: boolean(),
      on_maintenance: boolean(),
    },
    additionalProperties: false,
  };
}

// ------------------------------------------------------------------ notifications
const notificationCreate = () =>
  wrap('notification', {
    type: 'object',
    properties: {
      type: { type: 'string', enum: NOTIFICATION_TYPES },
      hostname: hostname(),
      generated_time: { type: 'string', format: 'date-time' },
      payload: payload(),
    },
    required: ['type', 'hostname', 'generated_time', 'payload'],
    additionalProperties: false,
  });

// payload.py: note 'enum' before 'type' in the compute-host payload, as there.
const computeHostPayload = () => ({
  type: 'object',
  properties: {
    host_status: { enum: HOST_STATUS_TYPES, type: 'string' },
    cluster_status: { enum: CLUSTER_STATUS_TYPES, type: 'string' },
    event: { enum: EVENT_TYPES, type: 'string' },
  },
  required: ['event'],
  additionalProperties: false,
});
const processPayload = () => ({
  type: 'object',
  properties: {
    process_name: { type: 'string', minLength: 1, maxLength: 4096 },
    event: { enum: EVENT_TYPES, type: 'string' },
  },
  required: ['process_name', 'event'],
  additionalProperties: false,
});
const vmPayload = () => ({
  type: 'object',
  properties: {
    instance_uuid: { type: 'string', format: 'uuid' },
    vir_domain_event: { type: 'string', minLength: 1, maxLength: 255 },
    event: { type: 'string', minLength: 1, maxLength: 255 },
  },
  required: ['instance_uuid', 'vir_domain_event', 'event'],
  additionalProperties: false,
});

export const SCHEMAS = {
  segmentCreate: segmentCreate(false),
  segmentCreateV12: segmentCreate(true),
  segmentUpdate: segmentUpdate(false),
  segmentUpdateV12: segmentUpdate(true),
  hostCreate: wrap('host', { ...hostBase(), required: ['name', 'type', 'control_attributes'] }),
  hostUpdate: wrap('host', {
    ...hostBase(),
    anyOf: [
      { required: ['name'] },
      { required: ['type'] },
      { required: ['control_attributes'] },
      { required: ['reserved'] },
      { required: ['on_maintenance'] },
    ],
  }),
  notificationCreate: notificationCreate(),
  payloadComputeHost: computeHostPayload(),
  payloadProcess: processPayload(),
  payloadVm: vmPayload(),
} satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof SCHEMAS;

// ------------------------------------------------------------------ compiled validators
const ajv = new Ajv({
  strict: true,
  strictTypes: false,
  // Masakari's update schemas say "at least one of" with anyOf: [{required: [x]}, …].
  strictRequired: false,
  allowUnionTypes: true,
  allErrors: false,
  code: { regExp: Object.assign((pattern: string) => compilePattern(pattern), { code: 'compilePattern' }) },
});
for (const [format, check] of Object.entries(FORMATS)) {
  ajv.addFormat(format, {
    type: 'string',
    validate: (v: string) => {
      try {
        return check(v);
      } catch (_e) {
        return false;
      }
    },
  });
}
const compiled = Object.fromEntries(Object.entries(SCHEMAS).map(([k, s]) => [k, ajv.compile(s)])) as Record<
  SchemaName,
  ValidateFunction
>;

const draft4 = new Draft4Validator({ formats: FORMATS, regex: compilePattern });

/**
 * Validates a request body as Masakari does. Returns undefined when valid,
 * otherwise the 400 detail text Masakari would send.
 */
export function validateBody(schema: SchemaName, body: unknown): string | undefined {
  if (compiled[schema](body)) return undefined;
  const first = draft4.firstError(SCHEMAS[schema], body);
  if (first) return masakariDetail(first);
  // Unreachable while both engines agree; ajv's own words beat a silent pass.
  const e = compiled[schema].errors?.[0];
  return e ? `${e.instancePath || '/'} ${e.message ?? 'is invalid'}` : 'Invalid input';
}
