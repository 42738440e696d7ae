#!/usr/bin/env bash
# Builds the PromQL parser wrapper (main.go beside this script, on
# github.com/prometheus/prometheus/promql/parser) once into the cache; prints its
# path (see hack/go-tool.sh for the cache layout and MASAKARI_ASSETS).
#
# Bump with: cd hack/promql && go get github.com/prometheus/prometheus@vX.Y.Z && go mod tidy
exec "$(dirname "$0")/../go-tool.sh" promql github.com/prometheus/prometheus
