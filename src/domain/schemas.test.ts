// Request validation texts. Every expectation below was produced by
// Masakari 22.0.0's own validator (masakari.api.validation) on the same input.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { validateBody } from './schemas.ts';
import type { SchemaName } from './schemas.ts';
import {
  validateFailoverSegmentSpec,
  validateHaHostSpec,
  validateNotificationResourceSpec,
  validateNotificationSpec,
} from './validators.ts';

const BOOLEANS =
  "[True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes', False, 'False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']";

const CASES: [SchemaName, unknown, string | undefined][] = [
  [
    'segmentCreate',
    { segment: { name: '', recovery_method: 'auto', service_type: 'x' } },
    "Invalid input for field/attribute name. Value: . '' should be non-empty",
  ],
  [
    'segmentCreate',
    { segment: { name: ' a', recovery_method: 'auto', service_type: 'x' } },
    "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace.",
  ],
  [
    'segmentCreate',
    { segment: { name: 'a', recovery_method: 'bogus', service_type: 'x' } },
    "Invalid input for field/attribute recovery_method. Value: bogus. 'bogus' is not one of ['auto', 'reserved_host', 'auto_priority', 'rh_priority']",
  ],
  [
    'segmentCreate',
    { segment: { name: 'a', recovery_method: 'auto', service_type: 'x', enabled: true } },
    "Invalid input for field/attribute segment. Value: {'name': 'a', 'recovery_method': 'auto', 'service_type': 'x', 'enabled': True}. Additional properties are not allowed ('enabled' was unexpected)",
  ],
  [
    'segmentCreate',
    { segment: { name: 'a' } },
    "Invalid input for field/attribute segment. Value: {'name': 'a'}. 'recovery_method' is a required property",
  ],
  ['segmentCreate', null, "None is not of type 'object'"],
  ['segmentCreate', { foo: 1 }, "'segment' is a required property"],
  [
    'segmentCreate',
    { segment: 'x' },
    "Invalid input for field/attribute segment. Value: x. 'x' is not of type 'object'",
  ],
  [
    'segmentCreate',
    { segment: { name: 'a'.repeat(256), recovery_method: 'auto', service_type: 'x' } },
    `Invalid input for field/attribute name. Value: ${'a'.repeat(256)}. '${'a'.repeat(256)}' is too long`,
  ],
  [
    'segmentCreate',
    { segment: { name: 'é ü', recovery_method: 'auto', service_type: 1.5 } },
    "Invalid input for field/attribute service_type. Value: 1.5. 1.5 is not of type 'string'",
  ],
  ['segmentCreate', { segment: { name: 'abc\n', recovery_method: 'auto', service_type: 'x' } }, undefined],
  [
    'segmentUpdate',
    { segment: {} },
    'Invalid input for field/attribute segment. Value: {}. {} is not valid under any of the given schemas',
  ],
  [
    'segmentUpdateV12',
    { segment: { enabled: 'maybe' } },
    `Invalid input for field/attribute enabled. Value: maybe. 'maybe' is not one of ${BOOLEANS}`,
  ],
  ['segmentUpdateV12', { segment: { enabled: 'no' } }, undefined],
  [
    'hostCreate',
    { host: { name: 'h', type: 'a-b', control_attributes: 'x' } },
    "Invalid input for field/attribute type. Value: a-b. 'a-b' does not match '^[a-zA-Z0-9]*$'",
  ],
  [
    'hostCreate',
    { host: { name: 5, type: 'ab', control_attributes: 'x' } },
    "Invalid input for field/attribute name. Value: 5. 5 is not of type 'string'",
  ],
  [
    'hostCreate',
    { host: { name: 'x', type: 'ab', control_attributes: 'x', foo: 1, bar: 2 } },
    "Invalid input for field/attribute host. Value: {'name': 'x', 'type': 'ab', 'control_attributes': 'x', 'foo': 1, 'bar': 2}. Additional properties are not allowed ('bar', 'foo' were unexpected)",
  ],
  ['hostUpdate', { host: { type: null } }, undefined],
  [
    'notificationCreate',
    { notification: { type: 'X', hostname: 'h', generated_time: '2020', payload: {} } },
    "Invalid input for field/attribute type. Value: X. 'X' is not one of ('COMPUTE_HOST', 'VM', 'PROCESS')",
  ],
  [
    'notificationCreate',
    { notification: { type: 'VM', hostname: 'h', generated_time: 'garbage', payload: {} } },
    "Invalid input for field/attribute generated_time. Value: garbage. 'garbage' is not a 'date-time'",
  ],
  [
    'notificationCreate',
    { notification: { type: 'VM', hostname: 'h', generated_time: '2020-13-01', payload: {} } },
    "Invalid input for field/attribute generated_time. Value: 2020-13-01. '2020-13-01' is not a 'date-time'",
  ],
  [
    'notificationCreate',
    { notification: { type: 'VM', hostname: 'h', generated_time: '2020-01-01', payload: { 'a/b': 'x' } } },
    "Invalid input for field/attribute payload. Value: {'a/b': 'x'}. 'a/b' does not match any of the regexes: '^[a-zA-Z0-9-_:. ]{1,255}$'",
  ],
  [
    'notificationCreate',
    { notification: { type: 'VM', hostname: 'h', generated_time: '2020-01-01', payload: { a: 5 } } },
    "Invalid input for field/attribute a. Value: 5. 5 is not of type 'string'",
  ],
  [
    'notificationCreate',
    { notification: { type: 'VM', hostname: 'h\n', generated_time: '2020-01-01T10:00:00.5+01:00', payload: {} } },
    undefined,
  ],
  [
    'payloadComputeHost',
    { event: 'FOO' },
    "Invalid input for field/attribute event. Value: FOO. 'FOO' is not one of ('STARTED', 'STOPPED')",
  ],
  ['payloadComputeHost', {}, "'event' is a required property"],
  [
    'payloadComputeHost',
    { event: 'STARTED', host_status: 7 },
    "Invalid input for field/attribute host_status. Value: 7. 7 is not one of ('NORMAL', 'UNKNOWN')",
  ],
  [
    'payloadProcess',
    { process_name: '', event: 'STARTED' },
    "Invalid input for field/attribute process_name. Value: . '' should be non-empty",
  ],
  [
    'payloadVm',
    { instance_uuid: 'x', vir_domain_event: 'a', event: 'b' },
    "Invalid input for field/attribute instance_uuid. Value: x. 'x' is not a 'uuid'",
  ],
  [
    'payloadVm',
    { instance_uuid: '{12345678-1234-5678-1234-567812345678}', vir_domain_event: 'a', event: 'b' },
    undefined,
  ],
];

test('request bodies are refused with the texts masakari-api 22.0.0 sends', () => {
  for (const [schema, body, expected] of CASES) {
    assert.is(validateBody(schema, body), expected, `${schema} ${JSON.stringify(body)}`);
  }
});

test("a control character in a description is refused quoting Masakari's own pattern", () => {
  const detail = validateBody('segmentCreate', {
    segment: { name: "it's", description: 'a\u0001', recovery_method: 'auto', service_type: 'x' },
  });
  assert.ok(
    detail?.startsWith(
      "Invalid input for field/attribute description. Value: a\u0001. 'a\\x01' does not match '^[\\n\\\\ -\\\\~\\xa0-",
    ),
  );
});

test('the custom-resource validators apply the same schemas to CR specs', () => {
  assert.is(
    validateFailoverSegmentSpec({ name: 'seg', recoveryMethod: 'auto', serviceType: 'COMPUTE', enabled: false }),
    undefined,
  );
  assert.match(
    validateFailoverSegmentSpec({ name: ' seg', recoveryMethod: 'auto', serviceType: 'COMPUTE' }) ?? '',
    "An invalid 'name' value was provided.",
  );
  assert.is(
    validateHaHostSpec({ name: 'compute-1', segmentRef: { name: 's' }, type: 'COMPUTE', controlAttributes: 'SSH' }),
    undefined,
  );
  assert.match(
    validateHaHostSpec({ name: 'compute-1', segmentRef: { name: 's' }, type: 'a b', controlAttributes: '' }) ?? '',
    "does not match '^[a-zA-Z0-9]*$'",
  );
  assert.is(
    validateNotificationResourceSpec({
      type: 'PROCESS',
      hostname: 'compute-1',
      generatedTime: '2026-01-01T00:00:00Z',
      payload: { event: 'STOPPED', process_name: 'nova-compute' },
    }),
    undefined,
  );
  assert.is(
    validateNotificationSpec({
      type: 'PROCESS',
      hostname: 'compute-1',
      generated_time: '2026-01-01T00:00:00Z',
      payload: { event: 'STOPPED' },
    }),
    "'process_name' is a required property",
  );
});

test.run();
