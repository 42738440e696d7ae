#!/usr/bin/env bash
# Builds the helm CLI from Go modules (through the Go module proxy) into a
# cache outside git, unless it is already there. Prints the binary's path.
#
#   MASAKARI_ASSETS   cache root shared with hack/envtest/build.sh
#                     (default ~/.cache/masakari-operator/envtest); helm goes
#                     into <root>/helm-<version>/helm
#
# The version is the one go.mod beside this script requires; bump it with
#   cd hack/helm && go get helm.sh/helm/v3@vX.Y.Z && go mod tidy
# A first build on a fresh 2-core machine takes a few minutes; later runs
# find the binary and return at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
HELM_VERSION=$(awk '$1 == "helm.sh/helm/v3" { print $2; exit }' "$here/go.mod")
# Kubernetes minor of the client-go helm links; helm reports it as the default
# cluster version for `helm template` and `helm lint` without a cluster.
K8S_MINOR=$(awk '$1 == "k8s.io/client-go" { split($2, v, "."); print v[2]; exit }' "$here/go.mod")
[ -n "$HELM_VERSION" ] && [ -n "$K8S_MINOR" ] || { echo "build.sh: cannot read the helm and client-go versions from $here/go.mod" >&2; exit 1; }
cache=${MASAKARI_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/masakari-operator/envtest}
bin="$cache/helm-$HELM_VERSION"
mkdir -p "$bin"
# Concurrent callers (two test files, CI's background preparation) wait for one
# build instead of racing on the same output file.
if [ ! -x "$bin/helm" ] && command -v flock >/dev/null; then
  exec {lock}>"$bin/.build.lock"
  flock "$lock"
fi

if [ ! -x "$bin/helm" ]; then
  command -v go >/dev/null || { echo "build.sh: go is required to build helm" >&2; exit 1; }
  echo "building helm $HELM_VERSION into $bin (first time only; takes minutes)..." >&2
  pkg=helm.sh/helm/v3
  ldflags="-s -w -X $pkg/internal/version.version=$HELM_VERSION -X $pkg/internal/version.gitTreeState=clean"
  ldflags+=" -X $pkg/pkg/lint/rules.k8sVersionMajor=1 -X $pkg/pkg/lint/rules.k8sVersionMinor=$K8S_MINOR"
  ldflags+=" -X $pkg/pkg/chartutil.k8sVersionMajor=1 -X $pkg/pkg/chartutil.k8sVersionMinor=$K8S_MINOR"
  # -mod=readonly: go.mod and go.sum are committed; a build never rewrites them.
  ( cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldflags" -o "$bin/helm.tmp.$$" "$pkg/cmd/helm" >&2 )
  mv "$bin/helm.tmp.$$" "$bin/helm"
fi
echo "$bin/helm"
