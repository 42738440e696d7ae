// The controllers by Routes resource name (routes.ts ROUTE_RESOURCES).

import type { ResourceName } from '../routes.ts';
import type { Controller, ControllerDeps } from './controller.ts';
import { extensionsController } from './extensions.ts';
import { hostsController } from './hosts.ts';
import { notificationsController } from './notifications.ts';
import { segmentsController } from './segments.ts';
import { versionsController } from './versions.ts';
import { vmovesController } from './vmoves.ts';

export type { Call, Controller, ControllerDeps, Result } from './controller.ts';
export { rootVersionsReply } from './versions.ts';

export function createControllers(deps: ControllerDeps): Record<ResourceName, Controller> {
  return {
    extensions: extensionsController(deps),
    hosts: hostsController(deps),
    notifications: notificationsController(deps),
    segments: segmentsController(deps),
    versions: versionsController(),
    vmoves: vmovesController(deps),
  };
}
