#!/usr/bin/env bash
# Prints the path of the kubectl the tests run, the first of:
#   1. $KUBECTL, when set (it must be an executable);
#   2. `kubectl` on PATH;
#   3. $bin/kubectl (see common.sh), built from k8s.io/kubernetes/cmd/kubectl
#      of the module pinned in kube-apiserver/go.mod, the first time only.
# On stderr it says which one and why, so a CI log shows it.
#
#   MASAKARI_ASSETS       cache root shared with build.sh
#   KUBECTL_FORCE_BUILD   1: skip 1 and 2 (use or build the cached one), e.g. to
#                         check the build on a machine that has kubectl
#
# Machines with a kubectl never pay for the build (minutes on 2 cores).
set -euo pipefail
source "$(dirname "$0")/common.sh"

if [ "${KUBECTL_FORCE_BUILD:-}" != 1 ]; then
  if [ -n "${KUBECTL:-}" ]; then
    found=$(command -v -- "$KUBECTL") && [ -x "$found" ] || { echo "kubectl.sh: KUBECTL=$KUBECTL is not an executable" >&2; exit 1; }
    echo "kubectl.sh: using $found (KUBECTL)" >&2
    echo "$found"
    exit 0
  fi
  if found=$(command -v kubectl); then
    echo "kubectl.sh: using $found (PATH)" >&2
    echo "$found"
    exit 0
  fi
fi

build kubectl kube-apiserver k8s.io/kubernetes/cmd/kubectl "-s -w$k8s_version_ldflags"
echo "kubectl.sh: using $bin/kubectl (built from k8s.io/kubernetes v$K8S_VERSION)" >&2
echo "$bin/kubectl"
