#!/usr/bin/env bash
# Creates (once) the Python venv with Keystone 30, Placement 16 and Nova 34
# for the mini OpenStack (tools/openstack-cloud), cached outside git like the
# kube-apiserver binaries. Prints the venv path on stdout; progress on stderr.
#
#   MASAKARI_OPENSTACK_VENV   the venv (default ~/.cache/masakari-operator/openstack/venv)
#
# Rebuilt when requirements.txt or constraints.txt change (hack/python-venv.sh).
# A build takes minutes: pip downloads ~150 wheels and builds one sdist (ovs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../python-venv.sh" "openstack venv" \
  "${MASAKARI_OPENSTACK_VENV:-$HOME/.cache/masakari-operator/openstack/venv}" bin/nova-compute \
  "$here/requirements.txt" "$here/constraints.txt"
