# masakari-operator developer entry points. Every Node command runs on the
# Node 24 that npm installs into node_modules (the "node" devDependency), never
# on whatever node is first in PATH. `npm run …` puts node_modules/.bin first
# in PATH, so scripts started through npm get the same Node.

NODE    := node_modules/.bin/node
TSX     := $(NODE) --import tsx
VERSION  = $(shell $(NODE) -p "require('./package.json').version" 2>/dev/null || echo dev)
IMAGE   ?= masakari-operator:$(VERSION)

.DEFAULT_GOAL := help
.PHONY: help run test build lint typecheck envtest nhc image release bench clean deps config-docs fuzz openstack chaos-soak chaos-ha

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# npm writes node_modules/.package-lock.json on every install, after
# package-lock.json, so it is older than the lock exactly when the lock changed
# since the last install (package.json alone changing needs no reinstall: npm ci
# installs what the lock says).
node_modules/.package-lock.json: package-lock.json
	npm ci
	@touch $@

deps: node_modules/.package-lock.json ## install dependencies when missing or outdated (npm ci)

# An exported KUBECONFIG is ignored (scripts/run-local.ts): only
# MASAKARI_RUN_KUBECONFIG=<path> runs against another cluster.
run: deps build $(if $(MASAKARI_RUN_KUBECONFIG),,envtest) ## run everything locally: own control plane (MASAKARI_RUN_KUBECONFIG=path: that cluster), simulator (unless OS_*/OS_CLOUD), operator
	$(TSX) scripts/run-local.ts

# Not root (or SKIP_ROOT=1): the suites that need root are left out and named
# in the summary (scripts/test-prerequisites.mjs).
test: deps ## run every test suite; prints "N passed, N failed"; SKIP_ROOT=1 leaves out those needing root
	$(if $(SKIP_ROOT),MASAKARI_TEST_SKIP_ROOT=1 )npm test

fuzz: deps ## schemathesis over /v1/openapi.json against a running facade (test/fuzz/; installs its venv once)
	$(NODE) --unhandled-rejections=strict --import tsx node_modules/uvu/bin.js test/fuzz

chaos-soak: deps ## 100 seeded chaos runs (test/chaos/soak.ts; MASAKARI_CHAOS_RUNS=N for fewer); summary in .run/chaos-soak.json
	$(NODE) --unhandled-rejections=strict --import tsx test/chaos/soak.ts

chaos-ha: deps ## the chaos soak on the HA control plane (3 etcd, 2 kube-apiservers, a balancer; etcd, quorum, API-server and balancer faults); 50 runs or MASAKARI_CHAOS_RUNS; summary in .run/chaos-ha.json
	MASAKARI_CHAOS_SHAPE=ha MASAKARI_CHAOS_RUNS=$${MASAKARI_CHAOS_RUNS:-50} MASAKARI_CHAOS_SUMMARY=$${MASAKARI_CHAOS_SUMMARY:-.run/chaos-ha.json} \
		$(NODE) --unhandled-rejections=strict --import tsx test/chaos/soak.ts

build: deps ## compile src/ to dist/
	npm run build

lint: deps ## eslint (with the layer and no-cycle rules, docs/design.md) and prettier --check
	npm run lint
	npm run format:check

typecheck: deps ## tsc --noEmit over src/, tools/, test/, scripts/ and bench/
	npm run typecheck

openstack: deps ## a real mini OpenStack (Keystone, Placement, Nova with fake computes) in the foreground; prints OS_* exports
	$(TSX) tools/openstack-cloud/cli.ts

envtest: ## build kube-apiserver and etcd into ~/.cache/masakari-operator/envtest (first time only)
	hack/envtest/build.sh

nhc: ## build the Medik8s NodeHealthCheck operator from its source snapshot (MASAKARI_NHC_SNAPSHOT; default ../shared/third-party/) into the same cache (first time only)
	hack/nhc/build.sh

image: ## build the container image $(IMAGE): docker if an engine answers, else buildah/podman (hack/image/build.sh)
	hack/image/build.sh $(IMAGE)

release: deps ## the release artifacts in dist/release/$(VERSION): image OCI archive, chart pinned by digest, SBOM, CHANGELOG section, SHA256SUMS
	hack/release/release.sh

bench: deps build ## run the benchmarks in bench/ (results in docs/benchmarks.md); BENCH=scale,storm runs some
	$(TSX) bench/run.ts $(if $(BENCH),--only $(BENCH))

config-docs: deps ## regenerate the option reference in docs/configuration.md
	$(TSX) src/config/docs.ts

clean: ## remove build output and local run state
	rm -rf dist .run coverage
