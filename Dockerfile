# v2-bridge gateway (also runs the standalone sandbox: see docker-compose.yml).
# Production runs the compiled JavaScript (npm run build) on plain node: no TypeScript loader.

# 1. Build: every dependency (TypeScript included), then src/ and mappings/ compiled to dist/.
FROM node:26-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY sandbox ./sandbox
COPY facts ./facts
COPY mappings ./mappings
COPY queries ./queries
RUN npm run build

# 2. Production dependencies only (the image runs the compiled code: no TypeScript tool).
FROM node:26-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund \
  && npm cache clean --force

# 3. Runtime: compiled code (with its GraphQL documents), production node_modules; runs as the image's non-root user.
FROM node:26-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8080
# Liveness: /healthz over loopback, with the node already in the image (no curl in -slim).
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz',{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM drains requests in flight for up to SHUTDOWN_DRAIN_MS (default 8 s, inside docker stop's 10 s).
STOPSIGNAL SIGTERM
# The same V8 heap bound as npm start (docs/performance.md: Load).
CMD ["node", "--max-old-space-size=512", "dist/src/index.js"]
