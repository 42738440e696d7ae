# syntax=docker/dockerfile:1
# masakari-operator image: compiled JavaScript on Node 24, production
# dependencies only, running as an unprivileged user.
#   docker build -t masakari-operator:<version> .   (or: make image)

# ---- build: compile TypeScript to dist/ -------------------------------------
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the only install scripts are the "node" devDependency
# (a second Node binary the image does not need) and esbuild (for tsx, unused here).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Run tsc with the image's node explicitly: node_modules/.bin/node is the
# uninstalled placeholder of the "node" package.
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

# ---- deps: production node_modules only -------------------------------------
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime ----------------------------------------------------------------
FROM node:24-slim
ENV NODE_ENV=production \
    # Probes and Prometheus reach the ops endpoint from outside the pod.
    MASAKARI_METRICS_LISTEN=0.0.0.0:8081 \
    # Cap V8's young generation: left to itself V8 sizes it from the memory it
    # sees, up to 64 MiB per semi-space, which under API load is ~140 MiB of
    # resident garbage (docs/benchmarks.md). The chart and config/manager also
    # set --max-old-space-size from the container's memory limit.
    NODE_OPTIONS="--max-semi-space-size=16"
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# 65532: the conventional "nonroot" uid/gid (distroless), matching runAsUser in the chart.
USER 65532:65532
# 15868: Masakari API; 8081: /healthz, /readyz, /metrics.
EXPOSE 15868 8081
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["run"]
