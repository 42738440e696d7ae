#!/usr/bin/env bash
# Creates (once) a Python venv from pinned requirements, cached outside git,
# and prints its path on stdout; progress goes to stderr. The one venv builder
# of the repository: hack/openstack/venv.sh (the mini OpenStack's services),
# hack/bmc/sushy-venv.sh (its emulated BMCs), scripts/e2e-venv.sh and
# scripts/fuzz-venv.sh call it with their own venv and requirements.
#
#   usage: hack/python-venv.sh LABEL VENV MARKER REQUIREMENTS [CONSTRAINTS]
#   LABEL     names the venv in the progress lines ("openstack venv")
#   MARKER    a file inside the venv that exists once it is complete (bin/nova-compute)
#
# Rebuilt when the requirements (or constraints) file changes: their sha256 is
# stamped into the venv. Idempotent: with a complete venv and an equal stamp it
# only prints the path.
set -euo pipefail
usage='usage: hack/python-venv.sh LABEL VENV MARKER REQUIREMENTS [CONSTRAINTS]'
label=${1:?$usage}
venv=${2:?$usage}
marker=${3:?$usage}
req=${4:?$usage}
constraints=${5:-}
stamp="$venv/.masakari-requirements.sha256"
want=$(cat "$req" ${constraints:+"$constraints"} | sha256sum | cut -d' ' -f1)
mkdir -p "$(dirname "$venv")"
# One build at a time: .ci/run starts the mini cloud's builds in the background
# while the other suites run, and a suite's own call waits here for them.
exec 9>"$venv.lock"
flock 9
if [ -x "$venv/$marker" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"; exit 0
fi
py=$(command -v python3.11 || command -v python3.12 || command -v python3)
echo "$label: building $venv with $("$py" --version) (first time only)..." >&2
start=$SECONDS
# build next to the target and rename, so a half-built venv is never used
rm -rf "$venv.new"
"$py" -m venv "$venv.new"
"$venv.new/bin/pip" install --quiet --disable-pip-version-check --upgrade pip >&2
"$venv.new/bin/pip" install --quiet --disable-pip-version-check \
  -r "$req" ${constraints:+-c "$constraints"} >&2
rm -rf "$venv"
mv "$venv.new" "$venv"
# the console scripts' shebangs name the build path; point them at the final one
grep -rlF "$venv.new/bin/python" "$venv/bin" | xargs -r sed -i "s#$venv.new/bin/python#$venv/bin/python#"
sed -i "s#$venv.new#$venv#g" "$venv/pyvenv.cfg" "$venv/bin/activate"* 2>/dev/null || true
echo "$want" > "$stamp"
echo "$label: built in $(( SECONDS - start )) s" >&2
echo "$venv"
