# Sluice's container image: `sluice serve` on 0.0.0.0:9324, data in the /data volume, as a non-root user.
# Binding every address needs credentials (SLUICE_ACCESS_KEY_ID/SLUICE_SECRET_ACCESS_KEY, SLUICE_API_TOKEN
# or a credentials file) or SLUICE_ALLOW_ANONYMOUS=true; see docs/operations.md, "Running it in a container".

# Production dependencies. The one native module (better-sqlite3) takes its prebuilt binary where one
# downloads (its releases, or a mirror named by --build-arg better_sqlite3_binary_host=URL);
# only where none does is a compiler installed and the module built against the image's Node headers.
FROM node:20-bookworm-slim AS deps
ENV npm_config_nodedir=/usr/local
# A build may bring its own npm cache (a volume there, --build-arg npm_config_cache=<its path> and
# npm_config_prefer_offline=true) and, behind a TLS-intercepting proxy, its CA (NODE_EXTRA_CA_CERTS).
ARG npm_config_cache npm_config_prefer_offline NODE_EXTRA_CA_CERTS better_sqlite3_binary_host
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json client/
# Scripts off: the root's and client/'s prepare (tsc) have nothing to build here. The native module is set up on its own.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && if ! (cd node_modules/better-sqlite3 && npm_config_better_sqlite3_binary_host="$better_sqlite3_binary_host" ../.bin/prebuild-install); then \
      apt-get update \
      && apt-get install -y --no-install-recommends python3 make g++ \
      && npm rebuild better-sqlite3; \
    fi

# dist/ and client/dist: TypeScript compiled with the dev dependencies, none of which ship.
FROM node:20-bookworm-slim AS build
ARG npm_config_cache npm_config_prefer_offline NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json client/
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.mjs scripts/
COPY client client
COPY src src
RUN npm --prefix client run build && npm run build

FROM node:20-bookworm-slim
RUN groupadd --system --gid 10001 sluice \
 && useradd --system --uid 10001 --gid sluice --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin sluice \
 && mkdir /data \
 && chown sluice:sluice /data
WORKDIR /app
COPY LICENSE package.json ./
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/client/package.json client/
COPY --from=build /app/client/dist client/dist
COPY --from=build /app/dist dist
ENV NODE_ENV=production \
    SLUICE_HOST=0.0.0.0 \
    SLUICE_PORT=9324 \
    SLUICE_DATA_DIR=/data
USER sluice
VOLUME /data
EXPOSE 9324
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.SLUICE_PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself as PID 1 (not npm): SIGTERM reaches the server, which drains and closes the database.
ENTRYPOINT ["node", "--max-semi-space-size=32", "/app/dist/cli/main.js"]
CMD ["serve"]
