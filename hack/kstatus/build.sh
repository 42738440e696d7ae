#!/usr/bin/env bash
# Builds the kstatus wrapper (main.go beside this script, on
# sigs.k8s.io/cli-utils/pkg/kstatus/status from the Go module proxy) into a
# cache outside git, unless it is already there. Prints the binary's path.
#
#   MASAKARI_ASSETS   cache root shared with hack/envtest/build.sh
#                     (default ~/.cache/masakari-operator/envtest); the tool goes
#                     into <root>/kstatus-<cli-utils version>-<main.go hash>/kstatus
#
# Bump cli-utils with: cd hack/kstatus && go get sigs.k8s.io/cli-utils@vX.Y.Z && go mod tidy
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '$1 == "sigs.k8s.io/cli-utils" { print $2; exit }' "$here/go.mod")
[ -n "$version" ] || { echo "build.sh: cannot read the cli-utils version from $here/go.mod" >&2; exit 1; }
src=$(cat "$here/main.go" "$here/go.sum" | sha256sum | cut -c1-12)
cache=${MASAKARI_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/masakari-operator/envtest}
bin="$cache/kstatus-$version-$src"
if [ ! -x "$bin/kstatus" ]; then
  command -v go >/dev/null || { echo "build.sh: go is required to build kstatus" >&2; exit 1; }
  mkdir -p "$bin"
  echo "building kstatus (cli-utils $version) into $bin..." >&2
  # -mod=readonly: go.mod and go.sum are committed; a build never rewrites them.
  ( cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$bin/kstatus.tmp" . >&2 )
  mv "$bin/kstatus.tmp" "$bin/kstatus"
fi
echo "$bin/kstatus"
