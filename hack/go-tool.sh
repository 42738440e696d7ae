#!/usr/bin/env bash
# Builds one of the small Go wrappers under hack/ (hack/<name>/main.go, on one
# module from the Go module proxy, pinned in hack/<name>/go.mod) into a cache
# outside git, unless it is already there. Prints the binary's path.
#
#   usage: hack/go-tool.sh NAME MODULE
#   MASAKARI_ASSETS   cache root shared with hack/envtest/build.sh
#                     (default ~/.cache/masakari-operator/envtest); the tool goes
#                     into <root>/<name>-<module version>-<main.go+go.sum hash>/<name>
set -euo pipefail
name=${1:?usage: hack/go-tool.sh NAME MODULE}
module=${2:?usage: hack/go-tool.sh NAME MODULE}
here=$(cd "$(dirname "$0")/$name" && pwd)
version=$(awk -v m="$module" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$here/go.mod")
[ -n "$version" ] || { echo "go-tool.sh: cannot read the $module version from $here/go.mod" >&2; exit 1; }
src=$(cat "$here/main.go" "$here/go.sum" | sha256sum | cut -c1-12)
cache=${MASAKARI_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/masakari-operator/envtest}
bin="$cache/$name-$version-$src"
mkdir -p "$bin"
# Concurrent callers (two test files, CI's background preparation) wait for one
# build instead of racing on the same output file.
if [ ! -x "$bin/$name" ] && command -v flock >/dev/null; then
  exec {lock}>"$bin/.build.lock"
  flock "$lock"
fi
if [ ! -x "$bin/$name" ]; then
  command -v go >/dev/null || { echo "go-tool.sh: go is required to build $name" >&2; exit 1; }
  echo "building $name ($module $version) into $bin..." >&2
  # -mod=readonly: go.mod and go.sum are committed; a build never rewrites them.
  ( cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$bin/$name.tmp.$$" . >&2 )
  mv "$bin/$name.tmp.$$" "$bin/$name"
fi
echo "$bin/$name"
