// masakari/api/openstack/ha/segments.py SegmentsController: body schema,
// then policy, then the rules in src/domain/ha-service.ts.

import { validateSegmentCreate, validateSegmentUpdate } from '../../domain/validators.ts';
import { ROUTE_RESOURCES } from '../routes.ts';
import { segmentJson, segmentView } from '../views.ts';
import type { Controller, ControllerDeps } from './controller.ts';
import { policyFor, refuseInvalid, validBody } from './controller.ts';

export function segmentsController({ service, policy }: ControllerDeps): Controller {
  const { authorize } = policyFor(policy, ROUTE_RESOURCES.segments.alias);
  return {
    index: ({ ctx, req }) => {
      authorize(ctx, 'index');
      return { status: 200, doc: { segments: service.listSegments(req.query).map(segmentJson) } };
    },
    show: ({ ctx, id }) => {
      authorize(ctx, 'detail');
      return { status: 200, doc: { segment: segmentView(service.getSegment(id)) } };
    },
    create: async (call) => {
      refuseInvalid(validateSegmentCreate(call.body, call.version));
      authorize(call.ctx, 'create');
      return { status: 201, doc: { segment: segmentView(await service.createSegment(validBody(call))) } };
    },
    update: async (call) => {
      refuseInvalid(validateSegmentUpdate(call.body, call.version));
      authorize(call.ctx, 'update');
      return { status: 200, doc: { segment: segmentView(await service.updateSegment(call.id, validBody(call))) } };
    },
    delete: async ({ ctx, id }) => {
      authorize(ctx, 'delete');
      await service.deleteSegment(id);
      return { status: 204, doc: null };
    },
  };
}
