#!/usr/bin/env bash
# Builds kube-apiserver and etcd from Go modules (through the Go module proxy)
# into a cache outside git, unless they are already there. Prints the bin dir.
#
#   MASAKARI_ASSETS   where to put the binaries (default ~/.cache/masakari-operator/envtest)
#
# A first build on a fresh 2-core machine takes several minutes; later runs
# find the binaries and return at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=1.34.4
ETCD_VERSION=3.6.16
cache=${MASAKARI_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/masakari-operator/envtest}
bin="$cache/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
mkdir -p "$bin"

build() { # name dir ldflags
  local name=$1 dir=$2 ldflags=$3
  if [ -x "$bin/$name" ]; then return 0; fi
  command -v go >/dev/null || { echo "build.sh: go is required to build $name" >&2; exit 1; }
  echo "building $name into $bin (first time only; takes minutes)..." >&2
  local work; work=$(mktemp -d)
  cp "$here/$dir/go.mod" "$here/$dir/main.go" "$work/"
  [ -f "$here/$dir/go.sum" ] && cp "$here/$dir/go.sum" "$work/"
  ( cd "$work" && GOFLAGS=-mod=mod go mod tidy >&2 && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/$name.tmp" . >&2 )
  # keep the resolved go.sum next to the sources so later builds are reproducible
  [ -f "$here/$dir/go.sum" ] || cp "$work/go.sum" "$here/$dir/go.sum" 2>/dev/null || true
  mv "$bin/$name.tmp" "$bin/$name"
  rm -rf "$work"
}

vpkg=k8s.io/component-base/version
build etcd etcd "-s -w"
build kube-apiserver kube-apiserver "-s -w -X $vpkg.gitVersion=v$K8S_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=34"
echo "$bin"
