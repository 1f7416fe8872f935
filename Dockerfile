# syntax=docker/dockerfile:1
# sluice: Kafka throttling sidecar.
#   docker build -t sluice .
#   docker run --read-only -e SLUICE_INGRESS_TOPIC=events -e SLUICE_DOWNSTREAM_TOPIC=events.throttled \
#     -v "$PWD/config:/etc/sluice/quotas:ro" sluice run
# Stage 1 builds dist/ with the dev dependencies (and patches kafkajs): one bundled file with the
# patched kafkajs inside, and the Lua scripts; stage 2 installs the production dependencies only
# (the native CRC-32C addon is the one the bundle loads from node_modules); the final stage holds
# dist/, those node_modules and package.json.

# Node 24: a maintained LTS (`npm test` also runs the unit tests on it).
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# kafkajs carries one patch (patches/, docs/kafkajs.md): linear header and varint code, a native CRC-32C.
RUN npm ci --ignore-scripts --no-audit --no-fund && npx patch-package
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/build.mjs
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    SLUICE_QUOTAS_FILE=/etc/sluice/quotas/quotas.yaml
WORKDIR /app
# Owned by root and not writable by the runtime user: nothing is written at run time, so the
# container runs with a read-only root filesystem.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The node image's unprivileged user, by number so Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 9464
# node is PID 1 and handles SIGTERM itself (sluice stops readiness, parks what it holds,
# commits and exits within 10 s); the exec form keeps a shell out of the way.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "require('http').get('http://127.0.0.1:' + (process.env.SLUICE_HTTP_PORT || 9464) + '/healthz', (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))"]
ENTRYPOINT ["node", "dist/main.js"]
CMD ["run"]
