"""Runs masakari-engine's RPC entry point for notifications, in this process.

masakari-api casts `process_notification` to the engine over RPC; with
`transport_url = fake://` the cast never arrives. This calls the method the
RPC server would dispatch to (MasakariManager.process_notification) with the
same arguments, so the reference's first-attempt path (including its
segment-disabled check, which the periodic path skips: upstream bug B6) can
be compared. Post such a notification with a generated_time in the future so
the engine's periodic task leaves it alone meanwhile.

usage: python process_notification.py <masakari.conf> <notification uuid>...
"""
import sys

from masakari import config
from masakari import context
from masakari.engine import manager
from masakari import exception
from masakari import objects


def main():
    conf_file, uuids = sys.argv[1], sys.argv[2:]
    config.parse_args([sys.argv[0], '--config-file', conf_file],
                      init_rpc=False)
    objects.register_all()
    ctx = context.get_admin_context()
    engine = manager.MasakariManager()
    for uuid in uuids:
        notification = objects.Notification.get_by_uuid(ctx, uuid)
        try:
            engine.process_notification(ctx, notification=notification)
        except exception.FailoverSegmentDisabled:
            # The RPC server only logs it; the notification is already ignored.
            pass


if __name__ == '__main__':
    main()
