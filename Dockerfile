# syntax=docker/dockerfile:1
# Switchyard router image. Build from the repository root:
#   docker build -t switchyard .
#   docker run -p 3002:3002 -v "$PWD/router.config.yaml:/config/router.config.yaml:ro" switchyard
# Never built where it was written (no container runtime there): see docs/deployment.md.

ARG NODE_VERSION=24

# --- build: all dependencies, TypeScript -> dist/ -------------------------
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsup.config.ts ./
COPY src ./src
COPY plugins ./plugins
COPY templates ./templates
RUN npm run build
# Used by deploy/compose.yaml to run the demo subgraphs (target: build).
COPY examples ./examples

# --- runtime: production dependencies and dist/ only ----------------------
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# Containers are reached from outside: listen on every interface
# (LISTEN_ADDR overrides listen_addr from the config file).
ENV NODE_ENV=production \
    LISTEN_ADDR=0.0.0.0:3002
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/templates ./templates
# The official Node images ship an unprivileged user "node" (uid 1000).
USER node
EXPOSE 3002
# Slim images have no curl: ask Node.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3002/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The flag is the one the bin's shebang passes (README, "Performance").
ENTRYPOINT ["node", "--max-semi-space-size=64", "/app/dist/cli/main.js"]
CMD ["router", "-c", "/config/router.config.yaml"]
