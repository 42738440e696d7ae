// masakari/api/openstack/ha/hosts.py HostsController (under
// /segments/{segment_id}/hosts): body schema, then policy, then the rules in
// src/domain/ha-service.ts. Creating or renaming a host asks Nova whether
// the compute host exists, with the caller's request id.

import type { HostRecord } from '../../domain/records.ts';
import { validateHostCreate, validateHostUpdate } from '../../domain/validators.ts';
import { ROUTE_RESOURCES } from '../routes.ts';
import { hostJson } from '../views.ts';
import type { Controller, ControllerDeps } from './controller.ts';
import { novaRequestId, policyFor, refuseInvalid, validBody } from './controller.ts';

export function hostsController({ service, repo, policy }: ControllerDeps): Controller {
  const { authorize } = policyFor(policy, ROUTE_RESOURCES.hosts.alias);
  const hostDoc = (h: HostRecord) => hostJson(h, repo.getSegment(h.failover_segment_id));
  return {
    index: ({ ctx, req, parentId }) => {
      authorize(ctx, 'index');
      return { status: 200, doc: { hosts: service.listHosts(parentId, req.query).map(hostDoc) } };
    },
    show: ({ ctx, parentId, id }) => {
      authorize(ctx, 'detail');
      return { status: 200, doc: { host: hostDoc(service.getHost(parentId, id)) } };
    },
    create: async (call) => {
      refuseInvalid(validateHostCreate(call.body));
      authorize(call.ctx, 'create');
      const created = await service.createHost(call.parentId, validBody(call), novaRequestId(call));
      return { status: 201, doc: { host: hostDoc(created) } };
    },
    update: async (call) => {
      refuseInvalid(validateHostUpdate(call.body));
      authorize(call.ctx, 'update');
      const updated = await service.updateHost(call.parentId, call.id, validBody(call), novaRequestId(call));
      return { status: 200, doc: { host: hostDoc(updated) } };
    },
    delete: async ({ ctx, parentId, id }) => {
      authorize(ctx, 'delete');
      await service.deleteHost(parentId, id);
      return { status: 204, doc: null };
    },
  };
}
