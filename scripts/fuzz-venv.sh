#!/usr/bin/env bash
# Creates (once) the small Python venv with schemathesis for the API fuzzing
# suite (test/fuzz/, `make fuzz`). Prints the venv path. Pinned in
# test/fuzz/requirements.txt; rebuilt when that file changes (hack/python-venv.sh).
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/hack/python-venv.sh" "fuzz venv" "${MASAKARI_FUZZ_VENV:-$root/.cache/fuzz-venv}" bin/st \
  "$root/test/fuzz/requirements.txt"
