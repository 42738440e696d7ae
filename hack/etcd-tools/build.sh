#!/usr/bin/env bash
# Builds etcdctl and etcdutl (etcd's client and offline tools; the HA control
# plane's backup takes `etcdctl snapshot save`, its restore `etcdutl snapshot
# restore`) from Go modules into a cache outside git, unless they are already
# there. Prints the bin dir.
#
#   MASAKARI_ASSETS   cache root shared with hack/envtest/build.sh
#                     (default ~/.cache/masakari-operator/envtest); the tools go
#                     into <root>/etcd-tools-<version>/
#
# The version is the one go.mod beside this script requires, the same as the
# etcd hack/envtest builds (ETCD_VERSION in hack/envtest/common.sh); bump both with
#   cd hack/etcd-tools && go get -tool go.etcd.io/etcd/etcdctl/v3@vX.Y.Z go.etcd.io/etcd/etcdutl/v3@vX.Y.Z && go mod tidy
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '$1 == "go.etcd.io/etcd/etcdutl/v3" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
[ -n "$version" ] || { echo "build.sh: cannot read the etcd version from $here/go.mod" >&2; exit 1; }
cache=${MASAKARI_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/masakari-operator/envtest}
bin="$cache/etcd-tools-$version"
mkdir -p "$bin"
# Concurrent callers wait for one build instead of racing on the same output file.
if { [ ! -x "$bin/etcdctl" ] || [ ! -x "$bin/etcdutl" ]; } && command -v flock >/dev/null; then
  exec {lock}>"$bin/.build.lock"
  flock "$lock"
fi
for tool in etcdctl etcdutl; do
  [ -x "$bin/$tool" ] && continue
  command -v go >/dev/null || { echo "build.sh: go is required to build $tool" >&2; exit 1; }
  echo "building $tool $version into $bin (first time only; takes a few minutes)..." >&2
  # -mod=readonly: go.mod and go.sum are committed; a build never rewrites them.
  ( cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$bin/$tool.tmp.$$" "go.etcd.io/etcd/$tool/v3" >&2 )
  mv "$bin/$tool.tmp.$$" "$bin/$tool"
done
echo "$bin"
