#!/usr/bin/env bash
# Creates (once) the Python venv with the real OpenStack clients and the
# reference Masakari used by the end-to-end tests (takes minutes the first
# time). Prints the venv path (hack/python-venv.sh).
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/hack/python-venv.sh" "e2e venv" "${MASAKARI_E2E_VENV:-$root/.cache/e2e-venv}" bin/python \
  "$root/test/e2e/python/requirements.txt"
