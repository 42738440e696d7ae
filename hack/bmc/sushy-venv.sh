#!/usr/bin/env bash
# Creates (once) the Python venv with sushy-tools (sushy-emulator, the Redfish
# BMC of the mini cloud's emulated BMCs), cached outside git like the mini
# cloud's own venv (hack/openstack/venv.sh). Prints the venv path on stdout;
# progress on stderr.
#
#   MASAKARI_SUSHY_VENV   the venv (default ~/.cache/masakari-operator/bmc/sushy-venv)
#
# Rebuilt when requirements.txt or constraints.txt change (their hash is
# stamped into the venv). A build downloads 17 wheels: seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${MASAKARI_SUSHY_VENV:-$HOME/.cache/masakari-operator/bmc/sushy-venv}
stamp="$venv/.masakari-requirements.sha256"
want=$(cat "$here/requirements.txt" "$here/constraints.txt" | sha256sum | cut -d' ' -f1)
mkdir -p "$(dirname "$venv")"
# one build at a time: the background install of a CI run and a suite's own call may meet here
exec 9>"$venv.lock"
flock 9
if [ -x "$venv/bin/sushy-emulator" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"; exit 0
fi
py=$(command -v python3.11 || command -v python3.12 || command -v python3)
echo "sushy venv: building $venv with $("$py" --version) (first time only)..." >&2
start=$SECONDS
# build next to the target and rename, so a half-built venv is never used
rm -rf "$venv.new"
"$py" -m venv "$venv.new"
"$venv.new/bin/pip" install --quiet --disable-pip-version-check \
  -r "$here/requirements.txt" -c "$here/constraints.txt" >&2
rm -rf "$venv"
mv "$venv.new" "$venv"
# the console scripts' shebangs name the build path; point them at the final one
grep -rlF "$venv.new/bin/python" "$venv/bin" | xargs -r sed -i "s#$venv.new/bin/python#$venv/bin/python#"
sed -i "s#$venv.new#$venv#g" "$venv/pyvenv.cfg" "$venv/bin/activate"* 2>/dev/null || true
echo "$want" > "$stamp"
echo "sushy venv: built in $(( SECONDS - start )) s" >&2
echo "$venv"
