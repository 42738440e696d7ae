import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { notificationView } from './views.ts';
import type { NotificationRecord } from '../domain/records.ts';

const record = (details: NotificationRecord['recovery_workflow_details']): NotificationRecord => ({
  id: 1,
  notification_uuid: 'n',
  generated_time: '2026-01-01T00:00:00',
  source_host_uuid: 'h',
  type: 'VM',
  payload: {},
  status: 'running',
  failover_segment_uuid: 's',
  message: null,
  created_at: '2026-01-01T00:00:00',
  updated_at: null,
  recovery_workflow_details: details,
  k8sName: 'n',
});

test('recovery_workflow_details leaves out tasks that have not reported progress yet', () => {
  const view = notificationView(
    record([
      {
        name: 'StopInstanceTask',
        progress: 1,
        state: 'SUCCESS',
        progressDetails: [{ timestamp: 't', progress: '1.0', message: 'Stopped' }],
      },
      { name: 'StartInstanceTask', progress: 0, state: 'RUNNING', progressDetails: [] },
    ]),
    true,
  );
  const details = view.recovery_workflow_details as Array<{ name: string }>;
  assert.equal(
    details.map((d) => d.name),
    ['StopInstanceTask'],
  );
});

test('recovery_workflow_details is absent below microversion 1.1', () => {
  assert.not.ok('recovery_workflow_details' in notificationView(record([]), false));
});

test.run();
