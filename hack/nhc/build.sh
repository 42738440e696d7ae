#!/usr/bin/env bash
# Builds the Medik8s NodeHealthCheck operator (github.com/medik8s/node-healthcheck-operator)
# from the source snapshot next to the repository into a cache outside git,
# unless it is already there, and prints the cache dir. That dir then holds
#   nhc          the operator binary (`-kubeconfig` runs it out of cluster)
#   crds/        its CRDs (the snapshot's config/crd/bases/)
#   COMMIT       the commit the snapshot is of
# NHC's Go module is not served by the module proxy these machines reach; the
# snapshot is a `git archive` tarball carrying its vendor/ tree, so it builds
# offline. None of its code belongs in the project's source.
#
#   MASAKARI_NHC_SNAPSHOT  the snapshot tarball (default: the one tarball in
#                          ../shared/third-party/node-healthcheck-operator/ next to the repository)
#   MASAKARI_ASSETS        cache root (default ~/.cache/masakari-operator/envtest);
#                          the build goes into <root>/../nhc-<commit>/
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
snapdir="$repo/../shared/third-party/node-healthcheck-operator"
snapshot=${MASAKARI_NHC_SNAPSHOT:-}
if [ -z "$snapshot" ]; then
  snapshot=$(ls "$snapdir"/node-healthcheck-operator-*.tar.gz 2>/dev/null | head -n 1 || true)
fi
[ -n "$snapshot" ] && [ -f "$snapshot" ] || {
  echo "nhc/build.sh: no NHC snapshot (set MASAKARI_NHC_SNAPSHOT, or put node-healthcheck-operator-<commit>.tar.gz in $snapdir)" >&2
  exit 1
}
commit=$(basename "$snapshot" .tar.gz)
commit=${commit#node-healthcheck-operator-}
envtest_cache=${MASAKARI_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/masakari-operator/envtest}
out="$envtest_cache/nhc-$commit"
mkdir -p "$out"
if [ ! -x "$out/nhc" ] && command -v flock >/dev/null; then
  # concurrent callers (two test files, CI's background preparation) wait for one build
  exec {lock}>"$out/.build.lock"
  flock "$lock"
fi
if [ ! -x "$out/nhc" ]; then
  command -v go >/dev/null || { echo "nhc/build.sh: go is required to build NHC" >&2; exit 1; }
  echo "building NHC $commit into $out (first time only; takes minutes)..." >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  tar -xzf "$snapshot" -C "$work"
  src="$work/node-healthcheck-operator"
  rm -rf "$out/crds" && mkdir -p "$out/crds"
  cp "$src"/config/crd/bases/*.yaml "$out/crds/"
  ( cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=vendor go build -trimpath -ldflags "-s -w" -o "$out/nhc.tmp.$$" ./cmd/ >&2 )
  echo "$commit" > "$out/COMMIT"
  mv "$out/nhc.tmp.$$" "$out/nhc"
fi
echo "$out"
