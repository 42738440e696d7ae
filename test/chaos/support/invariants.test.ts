import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SimServer } from '../../../tools/simulator/process.ts';
import { checkLocks } from './invariants.ts';
import type { Cr } from './kube.ts';
import type { MasakariRest } from './rest.ts';

const server = (id: string, name: string, locked: boolean): SimServer => ({
  id,
  name,
  host: 's1-spare-0',
  vmState: 'active',
  taskState: null,
  locked,
  lockedBy: locked ? 'admin' : null,
  metadata: {},
});
const notification = (uuid: string, hostname: string, phase: string): Cr => ({
  metadata: { name: uuid },
  spec: { hostname },
  status: { uuid, phase },
});
/** GET /v1/notifications/{uuid}: the recovery details each notification shows. */
const rest = (details: Record<string, string>) =>
  ({
    call: async (_method: string, path: string) => {
      const uuid = path.split('/').at(-1) as string;
      return {
        status: 200,
        json: { notification: { notification_uuid: uuid, recovery_workflow_details: details[uuid] } },
      };
    },
  }) as unknown as MasakariRest;

test('no server is left locked in Nova: a locked server is a finding naming it, its notification and the faults', async () => {
  const found = await checkLocks(
    { servers: [server('vm-a', 's1-failed-0-vm-3', true), server('vm-b', 's1-failed-0-vm-4', false)] },
    [notification('n-0', 's1-failed-0', 'finished')],
    { rest: rest({}), heldUnlocks: ['vm-a'], faultsSeen: 'seed 1: +0.5s freeze-leader-mid-unlock: SIGSTOP engine-0' },
  );
  assert.is(found.length, 1);
  assert.match(found[0] as string, /^server s1-failed-0-vm-3 \(vm-a\) is left locked in Nova \(locked_by admin\)/);
  assert.match(found[0] as string, /notification n-0 \(s1-failed-0\) ended finished; Nova held its unlock/);
  assert.match(found[0] as string, /run: seed 1: \+0\.5s freeze-leader-mid-unlock: SIGSTOP engine-0$/);
});

test('no server is left locked in Nova: unless its notification ended error or failed naming that server', async () => {
  const servers = [
    server('vm-a', 's1-failed-0-vm-3', true),
    server('vm-c', 's1-failed-1-vm-0', true),
    server('vm-d', 's1-failed-2-vm-0', true),
  ];
  const crs = [
    notification('n-0', 's1-failed-0', 'error'),
    notification('n-1', 's1-failed-1', 'failed'),
    notification('n-2', 's1-failed-2', 'running'),
  ];
  const details = { 'n-0': 'Failed to unlock instance vm-a', 'n-1': 'Failed to unlock instance vm-x', 'n-2': 'vm-d' };
  const found = await checkLocks({ servers }, crs, { rest: rest(details), heldUnlocks: [], faultsSeen: 'seed 1' });
  assert.equal(
    found.map((f) => f.replace(/ \(locked_by.*? ended /, ' ... ')),
    [
      'server s1-failed-1-vm-0 (vm-c) is left locked in Nova ... failed without naming the server; run: seed 1',
      'server s1-failed-2-vm-0 (vm-d) is left locked in Nova ... running; run: seed 1',
    ],
  );
});

test.run();
