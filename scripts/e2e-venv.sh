#!/usr/bin/env bash
# Creates (once) the Python venv with the real OpenStack clients and the
# reference Masakari used by the end-to-end tests. Prints the venv path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${MASAKARI_E2E_VENV:-$root/.cache/e2e-venv}
req="$root/test/e2e/python/requirements.txt"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"; exit 0
fi
py=$(command -v python3.11 || command -v python3)
echo "creating e2e venv at $venv (first time only; takes minutes)..." >&2
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip >&2
"$venv/bin/pip" install --quiet -r "$req" >&2
echo "$want" > "$stamp"
echo "$venv"
