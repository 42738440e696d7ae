#!/usr/bin/env bash
# Creates (once) the small Python venv with schemathesis for the API fuzzing
# suite (test/fuzz/, `make fuzz`). Prints the venv path. Pinned in
# test/fuzz/requirements.txt; rebuilt when that file changes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${MASAKARI_FUZZ_VENV:-$root/.cache/fuzz-venv}
req="$root/test/fuzz/requirements.txt"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/st" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"; exit 0
fi
py=$(command -v python3.11 || command -v python3)
echo "creating fuzz venv at $venv (first time only)..." >&2
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip >&2
"$venv/bin/pip" install --quiet -r "$req" >&2
echo "$want" > "$stamp"
echo "$venv"
