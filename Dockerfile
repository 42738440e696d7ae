# syntax=docker/dockerfile:1
# masakari-operator image: compiled JavaScript on Node 24, production
# dependencies only, running as an unprivileged user.
#   make image        (docker when an engine answers, else buildah or podman)
#
# BASE_IMAGE: any Debian-based image with Node 24 and npm in PATH. The default
# is the public node image, pinned by version and by the digest of its
# multi-platform index (docker-library/repo-info, repos/node/remote/
# 24-bookworm-slim.md). Where no registry is reachable, hack/image/build-base.sh
# builds an equivalent base from Debian packages and the npm `node` package,
# and `make image` uses it (docs/install.md).
ARG BASE_IMAGE=docker.io/library/node:24.18.1-bookworm-slim@sha256:235600a8101ab264e117b1768e925532262668dc9b581ef1dd7d96ced463b8e7

# ---- build: compile TypeScript to dist/ -------------------------------------
FROM ${BASE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The npm-ca secret (optional; hack/image/build.sh passes the CA bundle npm
# trusts on the build host) lets npm through a TLS-intercepting proxy without
# baking the CA into a layer.
# --ignore-scripts: the only install scripts are the "node" devDependency
# (a second Node binary the image does not need) and esbuild (for tsx, unused here).
RUN --mount=type=secret,id=npm-ca \
    { [ -s /run/secrets/npm-ca ] && export NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca; } ; \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Run tsc with the image's node explicitly: node_modules/.bin/node is the
# uninstalled placeholder of the "node" package.
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

# ---- deps: production node_modules only -------------------------------------
FROM ${BASE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional leaves out @kubernetes/client-node: the operator loads it
# only for kubeconfig exec plugins and auth providers, which a pod (service
# account token) never uses (src/k8s/kubeconfig.ts).
RUN --mount=type=secret,id=npm-ca \
    { [ -s /run/secrets/npm-ca ] && export NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca; } ; \
    npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime ----------------------------------------------------------------
FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="masakari-operator" \
      org.opencontainers.image.description="Kubernetes-native instance HA for OpenStack: a Masakari v1 API facade, custom resources and recovery reconcilers" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
ENV NODE_ENV=production \
    # Probes and Prometheus reach the ops endpoint from outside the pod.
    MASAKARI_METRICS_LISTEN=0.0.0.0:8081 \
    # Stack traces point into src/*.ts (dist/ carries source maps). Cap V8's
    # young generation: left to itself V8 sizes it from the memory it sees, up
    # to 64 MiB per semi-space, which under API load is ~140 MiB of resident
    # garbage (docs/benchmarks.md). The chart and config/manager also set
    # --max-old-space-size from the container's memory limit.
    NODE_OPTIONS="--enable-source-maps --max-semi-space-size=8" \
    # glibc malloc with fixed mmap and trim thresholds (128 KiB, glibc's own
    # starting values). Left to adjust itself, glibc raises its mmap threshold
    # to the largest block freed so far (a 1-2 MB page of a list answer), then
    # serves such blocks from its main heap, which it cannot give back while
    # anything above them lives: 41 MiB of resident [heap] in the api at
    # 100,000 notifications against 15 (docs/benchmarks.md, Scale).
    MALLOC_MMAP_THRESHOLD_=131072 \
    MALLOC_TRIM_THRESHOLD_=131072
# ipmitool: the IPMI fencing driver (HaHost spec.fencing driver ipmi) runs it. The local
# base (hack/image/build-base.sh) already has it and no apt; the public node image gets it here.
RUN command -v ipmitool >/dev/null || { apt-get update && \
      apt-get install -y --no-install-recommends ipmitool && rm -rf /var/lib/apt/lists/*; }
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# 65532: the conventional "nonroot" uid/gid (distroless), matching runAsUser in the chart.
USER 65532:65532
# 15868: Masakari API; 9443: validating webhook (TLS); 8081: /healthz, /readyz, /metrics.
EXPOSE 15868 9443 8081
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["run"]
