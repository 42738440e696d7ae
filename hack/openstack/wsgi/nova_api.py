# nova-api has no console script in Nova 34; devstack serves
# nova.wsgi.osapi_compute:application. Its initialiser passes sys.argv to
# oslo.config (nova/api/openstack/wsgi_app.py: config.parse_args(sys.argv)),
# which under gunicorn holds gunicorn's own options. Reset it first; the
# config comes from OS_NOVA_CONFIG_DIR / OS_NOVA_CONFIG_FILES.
import sys

sys.argv = sys.argv[:1]

from nova.wsgi.osapi_compute import application  # noqa: E402,F401
