#!/usr/bin/env bash
# Creates (once) the Python venv with sushy-tools (sushy-emulator, the Redfish
# BMC of the mini cloud's emulated BMCs), cached outside git like the mini
# cloud's own venv (hack/openstack/venv.sh). Prints the venv path on stdout;
# progress on stderr.
#
#   MASAKARI_SUSHY_VENV   the venv (default ~/.cache/masakari-operator/bmc/sushy-venv)
#
# Rebuilt when requirements.txt or constraints.txt change (hack/python-venv.sh).
# A build downloads 17 wheels: seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../python-venv.sh" "sushy venv" \
  "${MASAKARI_SUSHY_VENV:-$HOME/.cache/masakari-operator/bmc/sushy-venv}" bin/sushy-emulator \
  "$here/requirements.txt" "$here/constraints.txt"
