#!/usr/bin/env bash
# Copies the CRDs (crds/*.yaml, the single source) into the two places that
# ship them: the Helm chart's files/crds/ (rendered by templates/crds.yaml) and kustomize's config/crd/bases/ (kustomize
# loads files only from inside a kustomization's directory, so it cannot point
# at ../../crds). Copies whose source is gone are removed. Run it after
# changing a CRD; test/integration/packaging/chart-crds.test.ts fails until you do.
#   hack/sync-chart-crds.sh           copy
#   hack/sync-chart-crds.sh --check   exit 1 (showing the differences) when out of sync
# A new CRD must also be listed in config/crd/kustomization.yaml.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/crds"
targets=("$root/charts/masakari-operator/files/crds" "$root/config/crd/bases")

if [ "${1:-}" = "--check" ]; then
  status=0
  for dst in "${targets[@]}"; do
    diff -r "$src" "$dst" >&2 || status=1
  done
  if [ "$status" = 0 ]; then echo "CRD copies are in sync with crds/"; else echo "CRD copies differ from crds/: run hack/sync-chart-crds.sh" >&2; fi
  exit "$status"
fi

for dst in "${targets[@]}"; do
  mkdir -p "$dst"
  for f in "$dst"/*.yaml; do
    [ -e "$f" ] || continue
    [ -e "$src/$(basename "$f")" ] || { rm -- "$f"; echo "removed ${dst#"$root"/}/$(basename "$f")"; }
  done
  for f in "$src"/*.yaml; do
    if ! cmp -s "$f" "$dst/$(basename "$f")"; then
      cp -- "$f" "$dst/"
      echo "copied ${dst#"$root"/}/$(basename "$f")"
    fi
  done
done
