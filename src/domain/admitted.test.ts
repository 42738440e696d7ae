import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { admittedStatus, host } from './testing/ha-host.ts';
import { isAdmitted } from './admitted.ts';

test('admitted means: ids in status, not deleting, not flagged Ready=False', () => {
  assert.ok(isAdmitted(host({}, admittedStatus)));
  assert.not.ok(isAdmitted(host({}, undefined)));
  assert.not.ok(isAdmitted(host({}, { uuid: 'u' })));
  const flagged = host(
    {},
    {
      ...admittedStatus,
      conditions: [{ type: 'Ready', status: 'False', reason: 'NameConflict', message: 'm', lastTransitionTime: 't' }],
    },
  );
  assert.not.ok(isAdmitted(flagged));
  const deleting = host({}, admittedStatus);
  deleting.metadata.deletionTimestamp = '2026-01-02T03:04:05Z';
  assert.not.ok(isAdmitted(deleting));
});

test.run();
