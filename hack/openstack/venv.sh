#!/usr/bin/env bash
# Creates (once) the Python venv with Keystone 30, Placement 16 and Nova 34
# for the mini OpenStack (tools/openstack-cloud), cached outside git like the
# kube-apiserver binaries. Prints the venv path on stdout; progress on stderr.
#
#   MASAKARI_OPENSTACK_VENV   the venv (default ~/.cache/masakari-operator/openstack/venv)
#
# The venv is rebuilt when requirements.txt or constraints.txt change (their
# hash is stamped into the venv). A build takes minutes: pip downloads ~150
# wheels and builds one sdist (ovs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${MASAKARI_OPENSTACK_VENV:-$HOME/.cache/masakari-operator/openstack/venv}
stamp="$venv/.masakari-requirements.sha256"
want=$(cat "$here/requirements.txt" "$here/constraints.txt" | sha256sum | cut -d' ' -f1)
mkdir -p "$(dirname "$venv")"
# One build at a time: .ci/run starts a build in the background while the
# other suites run, and the openstack suite's own call waits here for it.
exec 9>"$venv.lock"
flock 9
if [ -x "$venv/bin/nova-compute" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"; exit 0
fi
py=$(command -v python3.11 || command -v python3.12 || command -v python3)
echo "openstack venv: building $venv with $("$py" --version) (first time only; takes minutes)..." >&2
start=$SECONDS
# build next to the target and rename, so a half-built venv is never used
rm -rf "$venv.new"
"$py" -m venv "$venv.new"
"$venv.new/bin/pip" install --quiet --disable-pip-version-check --upgrade pip >&2
"$venv.new/bin/pip" install --quiet --disable-pip-version-check \
  -r "$here/requirements.txt" -c "$here/constraints.txt" >&2
rm -rf "$venv"
mv "$venv.new" "$venv"
# the console scripts' shebangs name the build path; point them at the final one
grep -rlF "$venv.new/bin/python" "$venv/bin" | xargs -r sed -i "s#$venv.new/bin/python#$venv/bin/python#"
sed -i "s#$venv.new#$venv#g" "$venv/pyvenv.cfg" "$venv/bin/activate"* 2>/dev/null || true
echo "$want" > "$stamp"
echo "openstack venv: built in $(( SECONDS - start )) s" >&2
echo "$venv"
