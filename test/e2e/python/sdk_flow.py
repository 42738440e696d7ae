"""Drives the facade through openstacksdk's instance_ha proxy, as masakari-monitors
and Horizon do. Credentials come from OS_* variables (Keystone of the simulator,
whose catalog points `instance-ha` at the facade). Prints one JSON document with
what each call returned, for the TypeScript test to assert on.
"""
import json
import sys

import openstack
from openstack import exceptions


def main():
    host_name = sys.argv[1]
    spare_host_name = sys.argv[2]
    conn = openstack.connect(instance_ha_api_version='1.3')
    ha = conn.instance_ha
    out = {}
    seg = ha.create_segment(name='sdk-seg', recovery_method='auto', service_type='COMPUTE', is_enabled=True)
    # Masakari addresses objects by uuid; the SDK's `id` attribute is the
    # integer id, so callers (Horizon, monitors) pass `uuid`.
    out['segment_create'] = {'id': seg.uuid, 'name': seg.name, 'is_enabled': seg.is_enabled}
    out['segment_list'] = [s.name for s in ha.segments()]
    seg = ha.update_segment(seg.uuid, description='from sdk')
    out['segment_update'] = seg.description
    out['segment_get'] = ha.get_segment(seg.uuid).name
    host = ha.create_host(seg.uuid, name=host_name, type='COMPUTE', control_attributes='SSH')
    out['host_create'] = {'id': host.uuid, 'name': host.name, 'segment': host.failover_segment_id}
    out['host_list'] = [h.name for h in ha.hosts(seg.uuid)]
    host = ha.update_host(host.uuid, seg.uuid, reserved=True)
    out['host_update_reserved'] = host.reserved
    out['host_get'] = ha.get_host(host.uuid, seg.uuid).name
    n = ha.create_notification(type='COMPUTE_HOST', hostname=host_name,
                               generated_time='2026-11-29T10:00:00',
                               payload={'event': 'STOPPED', 'host_status': 'NORMAL', 'cluster_status': 'OFFLINE'})
    out['notification_create'] = {'id': n.notification_uuid, 'status': n.status, 'type': n.type}
    out['notification_list'] = [x.notification_uuid for x in ha.notifications()]
    got = ha.get_notification(n.notification_uuid)
    out['notification_get'] = {'status': got.status,
                               'has_details': got.recovery_workflow_details is not None}
    out['vmoves'] = [v.server_id for v in ha.vmoves(n.notification_uuid)]

    # Deleting: a segment with no notifications is not in use, so it and its
    # host go (sdk-seg above has a notification that may still be running).
    spare = ha.create_segment(name='sdk-seg-spare', recovery_method='auto', service_type='COMPUTE')
    spare_host = ha.create_host(spare.uuid, name=spare_host_name, type='COMPUTE', control_attributes='SSH')
    deleted_host = ha.delete_host(spare_host.uuid, spare.uuid, ignore_missing=False)
    out['host_delete'] = {'id': deleted_host.id if deleted_host else None,
                          'left': [h.name for h in ha.hosts(spare.uuid)]}
    deleted_segment = ha.delete_segment(spare.uuid, ignore_missing=False)
    try:
        ha.get_segment(spare.uuid)
        gone = None
    except exceptions.NotFoundException as e:
        gone = e.status_code
    out['segment_delete'] = {'id': deleted_segment.id if deleted_segment else None,
                             'uuid': spare.uuid,
                             'host_uuid': spare_host.uuid,
                             'listed': [s.name for s in ha.segments()],
                             'get_after': gone}
    print(json.dumps(out))


if __name__ == '__main__':
    main()
