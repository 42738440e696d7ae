#!/usr/bin/env bash
# Builds the PromQL parser wrapper (main.go beside this script, on
# github.com/prometheus/prometheus/promql/parser from the Go module proxy) into a
# cache outside git, unless it is already there. Prints the binary's path.
#
#   MASAKARI_ASSETS   cache root shared with hack/envtest/build.sh
#                     (default ~/.cache/masakari-operator/envtest); the tool goes
#                     into <root>/promql-<prometheus version>-<main.go hash>/promql
#
# Bump with: cd hack/promql && go get github.com/prometheus/prometheus@vX.Y.Z && go mod tidy
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '$1 == "github.com/prometheus/prometheus" { print $2; exit } $1 == "require" && $2 == "github.com/prometheus/prometheus" { print $3; exit }' "$here/go.mod")
[ -n "$version" ] || { echo "build.sh: cannot read the prometheus version from $here/go.mod" >&2; exit 1; }
src=$(cat "$here/main.go" "$here/go.sum" | sha256sum | cut -c1-12)
cache=${MASAKARI_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/masakari-operator/envtest}
bin="$cache/promql-$version-$src"
if [ ! -x "$bin/promql" ]; then
  command -v go >/dev/null || { echo "build.sh: go is required to build promql" >&2; exit 1; }
  mkdir -p "$bin"
  echo "building promql (prometheus $version) into $bin..." >&2
  # -mod=readonly: go.mod and go.sum are committed; a build never rewrites them.
  ( cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$bin/promql.tmp" . >&2 )
  mv "$bin/promql.tmp" "$bin/promql"
fi
echo "$bin/promql"
