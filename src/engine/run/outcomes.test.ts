import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NovaConflict, NovaError } from '../../openstack/types.ts';
import { outcomeOf, executeFailureMessage, withServersLeftLocked } from './outcomes.ts';
import { IgnoreRecovery, RecoveryFailed, ReservedHostsUnavailable, SkipRecovery } from '../workflows/context.ts';
import { FlowBuildError } from '../workflows/tasks.ts';

test('success and skips finish', () => {
  assert.equal(outcomeOf('instance', 'u', undefined).status, 'finished');
  assert.equal(outcomeOf('instance', 'u', new SkipRecovery('Skipping execution of instance recovery workflow.')), {
    status: 'finished',
    reason: 'Skipping execution of instance recovery workflow.',
  });
  assert.is(outcomeOf('host', 'u', new SkipRecovery('no instances')).status, 'finished');
  assert.is(outcomeOf('process', 'u', new SkipRecovery('x')).status, 'finished');
});

test('IgnoreRecovery means ignored for instances only', () => {
  assert.is(outcomeOf('instance', 'u', new IgnoreRecovery('paused')).status, 'ignored');
  assert.is(outcomeOf('host', 'u', new IgnoreRecovery('x')).status, 'error');
});

test("a workflow's own failure keeps its message; ReservedHostsUnavailable is one", () => {
  assert.equal(outcomeOf('instance', 'u', new RecoveryFailed('Failed to stop instance i')), {
    status: 'error',
    reason: 'Failed to stop instance i',
  });
  assert.equal(outcomeOf('host', 'u', new ReservedHostsUnavailable()), {
    status: 'error',
    reason: 'No reserved_hosts available for evacuation.',
  });
});

test('anything else is wrapped with the driver texts, including the process flow copy-paste slip', () => {
  const nova = outcomeOf('instance', 'n-9', new NovaError(500, 'boom'));
  assert.is(nova.status, 'error');
  assert.is(nova.reason, "Failed to execute instance failure flow for notification 'n-9'.");
  assert.is(nova.detail, 'NovaError: boom');
  assert.is(
    outcomeOf('process', 'n-9', new NovaConflict(409, 'x')).reason,
    "Failed to execute instance failure flow for notification 'n-9'.",
  );
  assert.is(
    outcomeOf('host', 'n-9', new TypeError('bad')).reason,
    "Failed to execute host failure flow for notification 'n-9'.",
  );
  assert.is(executeFailureMessage('process', 'z'), "Failed to execute instance failure flow for notification 'z'.");
});

test('flow build errors keep the create text and say which task is wrong', () => {
  const o = outcomeOf(
    'instance',
    'u',
    new FlowBuildError("Failed to create instance failure flow for notification 'u'.", 'detail'),
  );
  assert.equal(o, {
    status: 'error',
    reason: "Failed to create instance failure flow for notification 'u'.",
    detail: 'detail',
  });
});

test('a server left locked after finished: servers still locked turn any outcome into error naming them', () => {
  const done = { status: 'finished', reason: 'Recovery workflow completed.' } as const;
  assert.equal(withServersLeftLocked(done, []), done);
  assert.equal(withServersLeftLocked(done, ['s1', 's2']), {
    status: 'error',
    reason: 'Failed to unlock server(s) s1, s2 locked by this recovery.',
  });
  const failed = outcomeOf('host', 'u', new Error('boom'));
  const both = withServersLeftLocked(failed, ['s1']);
  assert.is(both.status, 'error');
  assert.is(both.reason, failed.reason, "the run's own failure stays the reason");
  assert.is(both.detail, 'Error: boom; Failed to unlock server(s) s1 locked by this recovery.');
});

test.run();
