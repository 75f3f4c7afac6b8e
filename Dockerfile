# syntax=docker/dockerfile:1
# Waygate in three stages: production dependencies and the TypeScript build on the full Node image
# (compilers at hand), then a slim runtime with node_modules, dist/, migrations/ and console/ only.
#   docker build -t waygate .
#   docker run -p 8080:8080 -v waygate-data:/data waygate
ARG NODE_VERSION=24

# Production dependencies (@node-rs/argon2 brings a prebuilt binary for the platform; nothing compiles).
# The package's own prepare step only says that it builds nothing without TypeScript.
FROM node:${NODE_VERSION}-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --omit=dev --no-audit --no-fund

# dist/ from src/. Scripts off: prepare would build before the sources are here.
FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV DATA_DIR=/data \
    PORT=8080 \
    HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY migrations ./migrations
# The web console: static ES modules and styles served as they are (no front-end build).
COPY console ./console
COPY scripts ./scripts
COPY --from=build /app/dist ./dist
# The node image's unprivileged user (uid 1000) owns the data directory and nothing else (a bind mount
# instead of the named volume must be writable by uid 1000).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# No curl in slim images: node asks, where HOST and PORT say the server listens (a wildcard HOST: loopback). 200 is healthy or degraded (Redis down), 503 the database is down.
# The first start on an empty volume creates the embedded database, hence the start period.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const h=process.env.HOST||'0.0.0.0';const a=h==='0.0.0.0'||h==='::'?'127.0.0.1':h.includes(':')?'['+h+']':h;fetch('http://'+a+':'+(process.env.PORT||8080)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is PID 1 (no npm, no shell): SIGTERM from `docker stop` reaches the server, which drains requests
# and exits 0. It starts no long-lived children, so no zombie reaper is needed (`docker run --init` works too).
ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve"]
