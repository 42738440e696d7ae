"""Prints the recovery_workflow_details the reference masakari-api would return.

GET /v1/notifications/{id} at microversion >= 1.1 asks masakari-engine over
RPC; with `transport_url = fake://` that call cannot be answered, so this runs
the code the engine runs for it (TaskFlowDriver.get_notification_recovery_
workflow_details over the shared TaskFlow database) and serialises the result
with oslo.serialization, as the API's JSON serializer does.

usage: python workflow_details.py <masakari.conf> <notification uuid>...
prints: {"<uuid>": [{"name", "progress", "progress_details", "state"}...]}
"""
import contextlib
import sys

from oslo_serialization import jsonutils
from taskflow.persistence import backends

from masakari import config
from masakari import context
from masakari.engine.drivers.taskflow import driver as taskflow_driver
from masakari import objects


def main():
    conf_file, uuids = sys.argv[1], sys.argv[2:]
    config.parse_args([sys.argv[0], '--config-file', conf_file],
                      init_rpc=False)
    objects.register_all()
    ctx = context.get_admin_context()
    driver = taskflow_driver.TaskFlowDriver()
    # An engine that never ran a flow has not created the TaskFlow tables yet.
    backend = backends.fetch(driver._persistence_backend)
    with contextlib.closing(backend.get_connection()) as conn:
        conn.upgrade()
    out = {}
    for uuid in uuids:
        notification = objects.Notification.get_by_uuid(ctx, uuid)
        host = objects.Host.get_by_uuid(ctx, notification.source_host_uuid)
        out[uuid] = driver.get_notification_recovery_workflow_details(
            ctx, host.failover_segment.recovery_method, notification)
    sys.stdout.write(jsonutils.dumps(out))


if __name__ == '__main__':
    main()
