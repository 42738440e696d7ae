#!/usr/bin/env bash
# Builds the kstatus wrapper (main.go beside this script, on
# sigs.k8s.io/cli-utils/pkg/kstatus/status) once into the cache; prints its path
# (see hack/go-tool.sh for the cache layout and MASAKARI_ASSETS).
#
# Bump cli-utils with: cd hack/kstatus && go get sigs.k8s.io/cli-utils@vX.Y.Z && go mod tidy
exec "$(dirname "$0")/../go-tool.sh" kstatus sigs.k8s.io/cli-utils
