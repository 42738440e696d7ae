// The API server itself refuses objects that break Masakari's field rules,
// with the schema's message (enums, patterns, lengths, per-type payload rules
// written in CEL with Masakari's jsonschema wording).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { host, notification, segment, yaml } from './manifests.ts';

const test = suite<{ ns: TestNamespace }>('CRD schema validation', { ns: undefined as unknown as TestNamespace });
test.before(async (ctx) => {
  ctx.ns = await useNamespace('crd-schema');
});
test.after(async ({ ns }) => ns.cleanup());

let n = 0;
async function rejected(ns: TestNamespace, obj: { metadata: { name: string } }, message: string): Promise<void> {
  obj.metadata.name = `${obj.metadata.name}-${++n}`;
  const r = await ns.kubectl(['create', '-f', '-'], yaml(obj));
  assert.is.not(r.code, 0, `expected a rejection, got: ${r.stdout}`);
  assert.ok(r.stderr.includes(message), `expected "${message}" in:\n${r.stderr}`);
}
async function accepted(ns: TestNamespace, obj: { metadata: { name: string } }): Promise<void> {
  obj.metadata.name = `${obj.metadata.name}-${++n}`;
  const r = await ns.kubectl(['create', '-f', '-'], yaml(obj));
  assert.is(r.code, 0, r.stderr);
}

test('a segment with an unknown recoveryMethod is rejected with the enum message', async ({ ns }) => {
  await rejected(
    ns,
    segment('s', { recoveryMethod: 'bogus' }),
    'spec.recoveryMethod: Unsupported value: "bogus": supported values: "auto", "reserved_host", "auto_priority", "rh_priority"',
  );
});

test('segment name and service_type: 1..255 printable, no leading or trailing whitespace', async ({ ns }) => {
  await rejected(ns, segment('s', { name: ' padded' }), 'spec.name in body should match');
  await rejected(ns, segment('s', { name: 'x'.repeat(256) }), 'spec.name: Too long: may not be more than 255');
  await rejected(ns, segment('s', { serviceType: '' }), 'spec.serviceType in body should be at least 1 chars long');
  await rejected(ns, segment('s', { name: 'tab\there' }), 'spec.name in body should match');
  await accepted(ns, segment('s', { name: 'Rack 1 — Zürich', description: null }));
  await accepted(ns, segment('s', { description: 'line one\nline two' }));
});

test('segment recoveryLimits: a count >= 0 or a percentage 0%..100%, anything else refused naming the field', async ({ ns }) => {
  const limits = (recoveryLimits: Record<string, unknown>) => segment('s', { recoveryLimits });
  const message = 'must be a count >= 0 or a percentage from 0% to 100%';
  await rejected(ns, limits({ maxUnhealthyHosts: -1 }), `spec.recoveryLimits.maxUnhealthyHosts: Invalid value`);
  await rejected(ns, limits({ maxUnhealthyHosts: '150%' }), message);
  await rejected(ns, limits({ maxRecoveringHosts: '2' }), `spec.recoveryLimits.maxRecoveringHosts: Invalid value`);
  await accepted(ns, limits({ maxUnhealthyHosts: 1, maxRecoveringHosts: '40%' }));
  await accepted(ns, limits({ maxUnhealthyHosts: '0%' }));
});

test('segment detection and returnToService: bounded grace period, a known policy, enabled and policy required', async ({ ns }) => {
  await rejected(ns, segment('s', { detection: { gracePeriodSeconds: 30 } }), 'spec.detection.enabled: Required value');
  await rejected(ns, segment('s', { detection: { enabled: true, gracePeriodSeconds: -1 } }), 'spec.detection.gracePeriodSeconds');
  await rejected(ns, segment('s', { detection: { enabled: true, gracePeriodSeconds: 86401 } }), 'spec.detection.gracePeriodSeconds');
  await rejected(ns, segment('s', { returnToService: { policy: 'Always' } }), 'spec.returnToService.policy: Unsupported value: "Always"');
  await rejected(ns, segment('s', { returnToService: {} }), 'spec.returnToService.policy: Required value');
  await accepted(ns, segment('s', { detection: { enabled: true }, returnToService: { policy: 'Restore' } }));
  await accepted(ns, segment('s', { detection: { enabled: false, gracePeriodSeconds: 0 }, returnToService: { policy: 'LeaveDisabled' } }));
});

test('host name, type and segmentRef follow their patterns', async ({ ns }) => {
  await rejected(ns, host('h', 'seg', { type: 'COMPUTE-1' }), "spec.type in body should match '^[a-zA-Z0-9]*$'");
  await rejected(ns, host('h', 'seg', { name: 'trailing ' }), 'spec.name in body should match');
  await rejected(ns, host('h', 'Not_A_Name'), 'spec.segmentRef.name in body should match');
  await accepted(ns, host('h', 'seg', { type: '' }));
});

test('host spec.fencing: driver enum, redfish needs systemId and an http(s) URL, tls for redfish only, bounded timeouts', async ({
  ns,
}) => {
  const fenced = (fencing: Record<string, unknown>) => host('h', 'seg', { fencing });
  const cred = { credentialsSecretRef: { name: 'bmc' } };
  const redfish = { driver: 'redfish', address: 'https://10.0.0.5:8000', systemId: '1', ...cred };
  await rejected(ns, fenced({ ...redfish, driver: 'wol' }), 'spec.fencing.driver: Unsupported value: "wol"');
  await rejected(ns, fenced({ driver: 'redfish', address: 'https://10.0.0.5', ...cred }), 'the redfish driver needs systemId');
  await rejected(ns, fenced({ ...redfish, address: '10.0.0.5' }), 'the redfish address is the BMC');
  await rejected(ns, fenced({ driver: 'ipmi', address: '10.0.0.5', ...cred, tls: { insecure: true } }), 'tls applies to the redfish driver only');
  await rejected(ns, fenced({ ...redfish, tls: { insecure: true, caSecretRef: { name: 'ca' } } }), 'not both');
  await rejected(ns, fenced({ ...redfish, timeoutSeconds: 0 }), 'spec.fencing.timeoutSeconds: Invalid value');
  await rejected(ns, fenced({ ...redfish, powerOffTimeoutSeconds: 3600 }), 'spec.fencing.powerOffTimeoutSeconds: Invalid value');
  await rejected(ns, fenced({ driver: 'ipmi', address: '10.0.0.5' }), 'spec.fencing.credentialsSecretRef: Required value');
  await accepted(ns, fenced({ ...redfish, tls: { caSecretRef: { name: 'ca', key: 'bundle.pem' } } }));
  await accepted(ns, fenced({ driver: 'ipmi', address: '10.0.0.5:623', ...cred, timeoutSeconds: 5 }));
});

test('notification type, hostname and generatedTime are checked', async ({ ns }) => {
  await rejected(ns, notification('n', { type: 'DISK' }), 'spec.type: Unsupported value: "DISK"');
  await rejected(ns, notification('n', { hostname: 'compute 1' }), "spec.hostname in body should match '^[a-zA-Z0-9-._]*$'");
  await rejected(ns, notification('n', { generatedTime: 'yesterday' }), 'spec.generatedTime in body should match');
  // zone-less times, as openstacksdk sends them, are valid for Masakari (taken as UTC)
  await accepted(ns, notification('n', { generatedTime: '2026-11-29T10:00:00.123456' }));
  await accepted(ns, notification('n', { generatedTime: '2026-11-29 10:00:00+02:00' }));
});

test('COMPUTE_HOST payload: event required, enums checked, no other keys', async ({ ns }) => {
  await rejected(ns, notification('n', { payload: {} }), "'event' is a required property of a COMPUTE_HOST payload");
  await rejected(
    ns,
    notification('n', { payload: { event: 'CRASHED' } }),
    "Invalid input for field/attribute event. Value: CRASHED. 'CRASHED' is not one of ['STARTED', 'STOPPED']",
  );
  await rejected(
    ns,
    notification('n', { payload: { event: 'STOPPED', host_status: 'DOWN' } }),
    "'DOWN' is not one of ['NORMAL', 'UNKNOWN']",
  );
  await rejected(
    ns,
    notification('n', { payload: { event: 'STOPPED', cluster_status: 'DOWN' } }),
    "'DOWN' is not one of ['ONLINE', 'OFFLINE']",
  );
  await rejected(
    ns,
    notification('n', { payload: { event: 'STOPPED', extra: 'x' } }),
    "Additional properties are not allowed ('extra' was unexpected) in a COMPUTE_HOST payload",
  );
  await accepted(ns, notification('n', { payload: { event: 'STARTED' } }));
});

test('PROCESS payload: process_name and event (STARTED|STOPPED) only', async ({ ns }) => {
  const proc = (payload: Record<string, string>) => notification('p', { type: 'PROCESS', payload });
  await rejected(ns, proc({ event: 'STOPPED' }), "'process_name' is a required property of a PROCESS payload");
  await rejected(ns, proc({ process_name: 'nova-compute' }), "'event' is a required property of a PROCESS payload");
  await rejected(ns, proc({ process_name: 'nova-compute', event: 'GONE' }), "'GONE' is not one of ['STARTED', 'STOPPED']");
  await rejected(ns, proc({ process_name: '', event: 'STOPPED' }), "Invalid input for field/attribute process_name. Value: . '' is too short");
  await rejected(ns, proc({ process_name: 'x', event: 'STOPPED', host_status: 'NORMAL' }), "('host_status' was unexpected) in a PROCESS payload");
  await accepted(ns, proc({ process_name: 'nova-compute', event: 'STOPPED' }));
});

test('VM payload: instance_uuid (a uuid), vir_domain_event and event (free text)', async ({ ns }) => {
  const vm = (payload: Record<string, string>) => notification('v', { type: 'VM', payload });
  const uuid = '6b5b4a57-7f0a-4b7e-8f5f-0d9f5f5f5f5f';
  await rejected(ns, vm({ instance_uuid: uuid, event: 'LIFECYCLE' }), "'vir_domain_event' is a required property of a VM payload");
  await rejected(
    ns,
    vm({ instance_uuid: 'not-a-uuid', vir_domain_event: 'STOPPED_FAILED', event: 'LIFECYCLE' }),
    "Invalid input for field/attribute instance_uuid. Value: not-a-uuid. 'not-a-uuid' is not a 'uuid'",
  );
  await accepted(ns, vm({ instance_uuid: uuid, vir_domain_event: 'STOPPED_FAILED', event: 'LIFECYCLE' }));
  await accepted(ns, vm({ instance_uuid: uuid.replace(/-/g, ''), vir_domain_event: 'STOPPED_FAILED', event: 'LIFECYCLE' }));
});

test('payload keys match ^[a-zA-Z0-9-_:. ]{1,255}$ and values are strings of at most 255', async ({ ns }) => {
  await rejected(
    ns,
    notification('n', { payload: { event: 'STOPPED', 'bad/key': 'x' } }),
    "Additional properties are not allowed ('bad/key' was unexpected): payload keys must match",
  );
  await rejected(
    ns,
    notification('n', { type: 'PROCESS', payload: { process_name: 'p'.repeat(256), event: 'STOPPED' } }),
    'Too long: may not be more than 255',
  );
  await rejected(ns, notification('n', { payload: { event: 5 } }), 'spec.payload.event: Invalid value: "integer": spec.payload.event in body must be of type string');
});

test.run();
