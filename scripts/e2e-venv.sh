#!/usr/bin/env bash
# Creates (once) the Python venv with the real OpenStack clients and the
# reference Masakari used by the end-to-end tests (takes minutes the first
# time). Prints the venv path.
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/scripts/python-venv.sh" "${MASAKARI_E2E_VENV:-$root/.cache/e2e-venv}" \
  "$root/test/e2e/python/requirements.txt" bin/python "the e2e venv"
