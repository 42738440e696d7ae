#!/usr/bin/env bash
# Creates (once) the small Python venv with schemathesis for the API fuzzing
# suite (test/fuzz/, `make fuzz`). Prints the venv path. Pinned in
# test/fuzz/requirements.txt; rebuilt when that file changes.
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/scripts/python-venv.sh" "${MASAKARI_FUZZ_VENV:-$root/.cache/fuzz-venv}" \
  "$root/test/fuzz/requirements.txt" bin/st "the fuzz venv"
