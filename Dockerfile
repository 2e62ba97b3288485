# Toolport: the gateway, its console and the tools to run npm and PyPI MCP servers.
#   docker build -t toolport .            (behind a blocked registry: --build-arg NPM_REGISTRY=https://registry.npmmirror.com)
#   docker run -p 3000:3000 -v toolport-data:/data toolport
# See docs/operations.md.

ARG NODE_IMAGE=node:20-bookworm-slim
# The distroless uv image, only copied from (https://docs.astral.sh/uv/guides/integration/docker/).
ARG UV_IMAGE=ghcr.io/astral-sh/uv:0.10

FROM ${UV_IMAGE} AS uv

# ---- build: install every dependency, build console and server, then drop the dev dependencies ----
FROM ${NODE_IMAGE} AS build
ARG NPM_REGISTRY=
# better-sqlite3 compiles from source when its prebuilt binary cannot be downloaded: node-gyp needs
# Python, make and a C++ compiler, and the image's own Node headers (it must not download them).
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
WORKDIR /app
# Manifests first, so the dependency layer is reused while only sources change.
COPY package.json package-lock.json .npmrc ./
COPY packages/contract/package.json packages/contract/
COPY apps/server/package.json apps/server/
COPY apps/web/package.json apps/web/
COPY e2e/package.json e2e/
COPY bench/package.json bench/
RUN if [ -n "$NPM_REGISTRY" ]; then npm config set registry "$NPM_REGISTRY"; fi \
  && npm ci
COPY . .
RUN npm run build \
  && npm prune --omit=dev \
  && mkdir -p apps/server/node_modules

# ---- runtime ----
FROM ${NODE_IMAGE}
# tini: PID 1 that forwards SIGTERM to the server and reaps the orphans tool servers may leave.
# Python 3 (with venv) for PyPI tool servers; uv installs them, pip is the fallback.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ca-certificates python3 python3-venv \
  && rm -rf /var/lib/apt/lists/*
COPY --from=uv /uv /uvx /usr/local/bin/
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/apps/server/package.json ./apps/server/
# Dependencies npm could not hoist (another version at the root) stay beside the server.
COPY --from=build /app/apps/server/node_modules ./apps/server/node_modules
COPY --from=build /app/apps/server/dist ./apps/server/dist
COPY --from=build /app/apps/web/dist ./apps/web/dist
RUN mkdir -p /data && chown node:node /data
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=3000 \
    WEB_DIST_DIR=/app/apps/web/dist
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The `toolport` command: `start` by default; `docker run … toolport migrate` and the like run others.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "apps/server/dist/main.js"]
CMD ["start"]
