#!/usr/bin/env bash
# Builds kube-controller-manager, kube-scheduler, kubelet and kube-proxy from
# the k8s.io/kubernetes module pinned in node/go.mod (the same version as
# hack/envtest's kube-apiserver) in ONE `go build`, into a cache outside git,
# unless they are already there. Prints the bin dir.
#
#   MASAKARI_ASSETS   cache root shared with hack/envtest (default
#                     ~/.cache/masakari-operator/envtest); the binaries go into
#                     <root>/k8s-<version>-node/
#
# One invocation compiles the packages the four commands share once; a first
# build on a fresh 2-core machine takes several minutes (less when
# hack/envtest/build.sh has already filled Go's build cache).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../envtest/common.sh"
node_bin="$cache/k8s-$K8S_VERSION-node"
cmds=(kube-controller-manager kube-scheduler kubelet kube-proxy)

# The cluster must run the Kubernetes the envtest API server runs: same
# k8s.io/kubernetes version, same replace block.
pinned() { grep -E '^(require )?[[:space:]]*k8s.io/kubernetes v' "$1" | grep -Eo 'k8s.io/kubernetes v[0-9.]+' | head -1; sed -n '/^replace (/,/^)/p' "$1"; }
if [ "$(pinned "$here/node/go.mod")" != "$(pinned "$envtest_dir/kube-apiserver/go.mod")" ]; then
  echo "build.sh: hack/cluster/node/go.mod pins a different Kubernetes than hack/envtest/kube-apiserver/go.mod" >&2
  exit 1
fi
[ "$(pinned "$here/node/go.mod" | head -1)" = "k8s.io/kubernetes v$K8S_VERSION" ] || { echo "build.sh: node/go.mod is not k8s.io/kubernetes v$K8S_VERSION" >&2; exit 1; }

missing=0
for c in "${cmds[@]}"; do [ -x "$node_bin/$c" ] || missing=1; done
if [ "$missing" = 1 ]; then
  mkdir -p "$node_bin"
  lock=""
  if command -v flock >/dev/null; then exec {lock}>"$node_bin/.build.lock"; flock "$lock"; fi
  missing=0
  for c in "${cmds[@]}"; do [ -x "$node_bin/$c" ] || missing=1; done
  if [ "$missing" = 1 ]; then
    command -v go >/dev/null || { echo "build.sh: go is required to build the cluster binaries" >&2; exit 1; }
    echo "building ${cmds[*]} $K8S_VERSION into $node_bin (first time only; takes minutes)..." >&2
    out=$(mktemp -d "$node_bin/.out.XXXXXX")
    pkgs=()
    for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
    # -mod=readonly: go.mod and go.sum are committed; a build never rewrites them.
    ( cd "$here/node" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w$k8s_version_ldflags" -o "$out/" "${pkgs[@]}" >&2 )
    for c in "${cmds[@]}"; do mv "$out/$c" "$node_bin/$c"; done
    rmdir "$out"
  fi
  if [ -n "$lock" ]; then exec {lock}>&-; fi
fi
echo "$node_bin"
