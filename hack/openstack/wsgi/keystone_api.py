# Keystone's WSGI initialiser parses sys.argv with oslo.config
# (keystone/server/__init__.py: CONF(project='keystone') reads sys.argv[1:]),
# which under gunicorn holds gunicorn's own options. Reset it first; the
# config comes from OS_KEYSTONE_CONFIG_DIR.
import sys

sys.argv = sys.argv[:1]

from keystone.wsgi.api import application  # noqa: E402,F401
