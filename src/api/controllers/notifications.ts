// masakari/api/openstack/ha/notifications.py NotificationsController: the
// body schema, policy, then the payload schema of the notification's type;
// microversion 1.1 adds recovery_workflow_details to show.

import { atLeast } from '../../domain/api-version.ts';
import { validateNotificationCreate, validateNotificationPayload } from '../../domain/validators.ts';
import { ROUTE_RESOURCES } from '../routes.ts';
import { notificationView } from '../views.ts';
import type { Controller, ControllerDeps } from './controller.ts';
import { policyFor, refuseInvalid, validBody } from './controller.ts';

export function notificationsController({ service, policy }: ControllerDeps): Controller {
  const { authorize } = policyFor(policy, ROUTE_RESOURCES.notifications.alias);
  return {
    index: ({ ctx, req }) => {
      authorize(ctx, 'index');
      const notifications = service.listNotifications(req.query).map((n) => notificationView(n));
      return { status: 200, doc: { notifications } };
    },
    show: async ({ ctx, id, version }) => {
      authorize(ctx, 'detail');
      // Only 1.1+ shows the workflow details, the one part of a notification no cache keeps.
      const details = atLeast(version, 1, 1);
      const n = details ? await service.getNotificationDetails(id) : service.getNotification(id);
      return { status: 200, doc: { notification: notificationView(n, details) } };
    },
    create: async (call) => {
      refuseInvalid(validateNotificationCreate(call.body));
      authorize(call.ctx, 'create');
      const n = (call.body as { notification: { type: string; payload: unknown } }).notification;
      refuseInvalid(validateNotificationPayload(n.type, n.payload));
      const created = await service.createNotification(validBody(call));
      return { status: 202, doc: { notification: notificationView(created) } };
    },
  };
}
