// masakari/api/openstack/ha/vmoves.py VMovesController (read-only, under
// /notifications/{notification_id}/vmoves).

import { ROUTE_RESOURCES } from '../routes.ts';
import { vmoveView } from '../views.ts';
import type { Controller, ControllerDeps } from './controller.ts';
import { policyFor } from './controller.ts';

export function vmovesController({ service, policy }: ControllerDeps): Controller {
  const { authorize } = policyFor(policy, ROUTE_RESOURCES.vmoves.alias);
  return {
    index: ({ ctx, req, parentId }) => {
      authorize(ctx, 'index');
      return { status: 200, doc: { vmoves: service.listVMoves(parentId, req.query).map(vmoveView) } };
    },
    show: ({ ctx, parentId, id }) => {
      authorize(ctx, 'detail');
      return { status: 200, doc: { vmove: vmoveView(service.getVMove(parentId, id)) } };
    },
  };
}
