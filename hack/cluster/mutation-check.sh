#!/usr/bin/env bash
# Shows that the cluster suite catches a broken chart: for each planted fault
# (the ones a first real install tends to meet) it copies the chart, breaks
# the copy, runs test/cluster/helm.test.ts against it on a fresh cluster
# (scripts/run-tests.mjs cluster --filter helm, MASAKARI_TEST_CLUSTER_CHART,
# MASAKARI_TEST_CLUSTER_BAIL=1) and requires a failed test. Prints each
# run's failing assertion lines; exits 0 only when every fault was caught.
# Needs root, like the suite; ~5-8 min per fault on 2 cores.
#
#   mutation-check.sh [NAME...]   probe-port, rbac-verb, webhook-port (default: all)
#   MUTATION_LOG_DIR              where the full runs go (default: a temp dir)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
logs=${MUTATION_LOG_DIR:-$(mktemp -d)}
mkdir -p "$logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# mutate NAME CHART_DIR: plants the fault; each edit must change exactly what it names.
mutate() {
  local chart=$2
  case "$1" in
    probe-port) # the readiness probe asks a port nothing listens on
      sed -i '/path: \/readyz/{n;s/port: ops/port: 8082/}' "$chart/templates/_helpers.tpl" ;;
    rbac-verb) # leader election loses `update` on Leases (it can acquire, never renew)
      sed -i '/resources: \[leases\]/{n;s/verbs: \[get, create, update\]/verbs: [get, create]/}' "$chart/templates/rbac.yaml" ;;
    webhook-port) # the webhook Service sends the API server to a port the pods do not serve
      sed -i 's/targetPort: webhook/targetPort: 9444/' "$chart/templates/webhook.yaml" ;;
    *) echo "mutation-check.sh: unknown mutation $1" >&2; return 2 ;;
  esac
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(probe-port rbac-verb webhook-port)
status=0
for name in "${names[@]}"; do
  chart="$work/$name/masakari-operator"
  mkdir -p "$work/$name"
  cp -r charts/masakari-operator "$chart"
  mutate "$name" "$chart" || exit 2
  if diff -r -q charts/masakari-operator "$chart" >/dev/null; then
    echo "== $name: the edit changed nothing (the chart moved on?); fix mutate()" >&2
    exit 2
  fi
  echo "== $name: $(diff -r -U0 charts/masakari-operator "$chart" | grep -E '^[-+] ' | paste -sd ' ' -)"
  start=$SECONDS
  MASAKARI_TEST_CLUSTER_CHART=$chart MASAKARI_TEST_CLUSTER_BAIL=1 \
    node_modules/.bin/node scripts/run-tests.mjs cluster --filter helm >"$logs/$name.log" 2>&1
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/$name.log" | tail -n 1)
  failed=${summary#* passed, }
  failed=${failed% failed}
  echo "   $summary ($(( SECONDS - start )) s; log $logs/$name.log)"
  # uvu's failure report: the test name, then the assertion and its message
  grep -E '✘|FAIL |AssertionError|Error:|Expected|Actual|^\s+[-+]{2}' "$logs/$name.log" \
    | grep -v 'not run: the earlier test' | head -n 12 | sed 's/^/   | /'
  if [ -z "$summary" ] || [ "${failed:-0}" -eq 0 ]; then
    echo "   NOT CAUGHT: every test passed against the broken chart"
    status=1
  fi
done
exit $status
