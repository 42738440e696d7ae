// masakari/api/openstack/ha/vmoves.py VMovesController (read-only, under
// /notifications/{notification_id}/vmoves).

import { ROUTE_RESOURCES } from '../routes.ts';
import { vmoveView } from '../views.ts';
import type { Controller, ControllerDeps } from './controller.ts';
import { policyFor } from './controller.ts';

export function vmovesController({ service, policy }: ControllerDeps): Controller {
  const { authorize } = policyFor(policy, ROUTE_RESOURCES.vmoves.alias);
  return {
    index: async ({ ctx, req, parentId }) => {
      authorize(ctx, 'index');
      return { status: 200, doc: { vmoves: (await service.listVMoves(parentId, req.query)).map(vmoveView) } };
    },
    show: async ({ ctx, parentId, id }) => {
      authorize(ctx, 'detail');
      return { status: 200, doc: { vmove: vmoveView(await service.getVMove(parentId, id)) } };
    },
  };
}
