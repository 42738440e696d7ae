#!/usr/bin/env bash
# Builds kube-apiserver and etcd from Go modules (through the Go module proxy)
# into a cache outside git, unless they are already there. Prints the bin dir.
#
#   MASAKARI_ASSETS   where to put the binaries (default ~/.cache/masakari-operator/envtest)
#
# A first build on a fresh 2-core machine takes several minutes; later runs
# find the binaries and return at once. kubectl.sh builds kubectl into the
# same dir when the machine has none.
set -euo pipefail
source "$(dirname "$0")/common.sh"

build etcd etcd . "-s -w"
build kube-apiserver kube-apiserver . "-s -w$k8s_version_ldflags"
echo "$bin"
