import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { comparable, diff, KNOWN } from './compare.ts';
import type { RunResult } from './scenario.ts';

const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';

function run(side: string, id: string, tag: string, target: string, at: string): RunResult {
  return {
    side,
    method: 'auto',
    seconds: 1,
    postSeconds: 0.1,
    timedOut: false,
    fleet: { [id]: 'active-0' },
    notification: {
      notification_uuid: `${side === 'ours' ? 'c' : 'd'}ccccccc-0000-4000-8000-000000000003`,
      status: 'finished',
      message: null,
      recovery_workflow_details: [
        {
          name: 'EvacuateInstancesTask',
          state: 'SUCCESS',
          progress: 1,
          progress_details: [
            { timestamp: at, progress: 1, message: `Evacuation of instance '${id}' (sbs-${tag}-active-0) succeeded.` },
          ],
        },
      ],
    },
    vmoves: [
      {
        instance_uuid: id,
        instance_name: `sbs-${tag}-active-0`,
        type: 'evacuation',
        status: 'succeeded',
        source_host: 'cpu1',
        dest_host: target,
        message: null,
        start_time: '2026-12-01T18:00:00.000000',
        end_time: '2026-12-01T18:00:01.000000',
      },
    ],
    hosts: [{ name: 'cpu1', reserved: false, on_maintenance: true }],
    servers: [
      {
        role: 'active-0',
        host: target,
        status: 'ACTIVE',
        vm_state: 'active',
        task_state: null,
        power_state: 1,
        locked: false,
        locked_reason: null,
        evacuations: [`done cpu1→${target}`],
      },
    ],
    service: {
      status: 'disabled',
      state: 'down',
      forced_down: false,
      disabled_reason: 'Masakari detected host failed.',
    },
    load: [1, 1, 1],
  };
}

test('runs differing only in ids, names, timestamps and the scheduler’s choice of healthy host compare equal', () => {
  const ours = run('ours', A, 'a1a1a1', 'cpu2', '2026-12-01 18:00:00.123000');
  const ref = run('masakari-defaults', B, 'b2b2b2', 'cpu3', '2026-12-01 18:03:00.654321');
  assert.equal(diff('auto', comparable(ours), comparable(ref)), []);
});

test('a differing Nova field is reported by role and field', () => {
  const ours = run('ours', A, 'a1a1a1', 'cpu2', '2026-12-01 18:00:00.123000');
  const ref = run('masakari-defaults', B, 'b2b2b2', 'cpu2', '2026-12-01 18:03:00.654321');
  (ref.servers[0] as { locked: boolean }).locked = true;
  const d = diff('auto', comparable(ours), comparable(ref));
  assert.equal(
    d.map((x) => [x.path, x.ours, x.reference]),
    [['servers.active-0.locked', false, true]],
  );
});

test('the target host counts where the method names it (reserved_host)', () => {
  const ours = { ...run('ours', A, 'a1a1a1', 'cpu2', '2026-12-01 18:00:00.1'), method: 'reserved_host' as const };
  const ref = {
    ...run('masakari-defaults', B, 'b2b2b2', 'cpu3', '2026-12-01 18:00:00.1'),
    method: 'reserved_host' as const,
  };
  const paths = diff('reserved_host', comparable(ours), comparable(ref)).map((x) => x.path);
  assert.ok(paths.includes('servers.active-0.host'), paths.join(', '));
});

test('server lists: Nova’s order is ignored, the evacuation order is compared relative to the prepared list', () => {
  const ids = ['11111111-0000-4000-8000-000000000001', '22222222-0000-4000-8000-000000000002'];
  const withMessages = (side: string, prepared: string[], started: string[]): RunResult => {
    const r = run(side, A, 'a1a1a1', 'cpu2', '2026-12-01 18:00:00.1');
    r.fleet = { [ids[0] as string]: 'active-0', [ids[1] as string]: 'active-1' };
    const details = (m: string[]) => m.map((message) => ({ timestamp: '2026-12-01 18:00:00.1', progress: 1, message }));
    r.notification.recovery_workflow_details = [
      {
        name: 'PrepareHAEnabledInstancesTask',
        state: 'SUCCESS',
        progress: 1,
        progress_details: details([`Instances to be evacuated are: '${prepared.join(',')}'`]),
      },
      {
        name: 'EvacuateInstancesTask',
        state: 'SUCCESS',
        progress: 1,
        progress_details: details([
          `Start evacuation of instances from failed host 'cpu1', instance uuids are: '${started.join(',')}'`,
          ...started.map((id) => `Evacuation of instance started: '${id}'`),
        ]),
      },
    ];
    return r;
  };
  const [x, y] = ids as [string, string];
  // Nova listed them in another order, each engine kept its own: equal
  assert.equal(
    diff('auto', comparable(withMessages('ours', [x, y], [x, y])), comparable(withMessages('ref', [y, x], [y, x]))),
    [],
  );
  // the reference evacuates in the reverse of what it prepared (B2): a known difference
  const d = diff(
    'auto',
    comparable(withMessages('ours', [x, y], [x, y])),
    comparable(withMessages('ref', [x, y], [y, x])),
  );
  assert.equal(d[0]?.ours, "Start evacuation of instances from failed host 'cpu1', instance uuids are: '#1,#2'");
  assert.equal(d[0]?.reference, "Start evacuation of instances from failed host 'cpu1', instance uuids are: '#2,#1'");
  assert.ok(
    d.every((q) => q.reason?.startsWith('B2')),
    JSON.stringify(d),
  );
});

test('every known difference is explained in docs/compatibility.md', () => {
  const doc = readFileSync(new URL('../../docs/compatibility.md', import.meta.url), 'utf8');
  for (const k of KNOWN) assert.ok(doc.includes(k.reason), `docs/compatibility.md lacks: ${k.reason}`);
});

test.run();
