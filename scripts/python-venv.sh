#!/usr/bin/env bash
# Creates (once) a Python venv from a pinned requirements file and prints its
# path; rebuilt when the requirements file changes (its sha256 is stamped in
# the venv). Shared by scripts/e2e-venv.sh and scripts/fuzz-venv.sh.
#
#   usage: scripts/python-venv.sh VENV_DIR REQUIREMENTS MARKER LABEL
#   MARKER: a file inside the venv that exists once it is complete (bin/python, bin/st)
set -euo pipefail
venv=${1:?usage: python-venv.sh VENV_DIR REQUIREMENTS MARKER LABEL}
req=${2:?}
marker=${3:?}
label=${4:?}
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/$marker" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"; exit 0
fi
py=$(command -v python3.11 || command -v python3)
echo "creating $label at $venv (first time only)..." >&2
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip >&2
"$venv/bin/pip" install --quiet -r "$req" >&2
echo "$want" > "$stamp"
echo "$venv"
