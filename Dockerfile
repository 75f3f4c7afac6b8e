# syntax=docker/dockerfile:1
# Waygate: build stage compiles TypeScript; the runtime stage has production dependencies and dist/ only.
#   docker build -t waygate .
#   docker run -p 8080:8080 -v waygate-data:/data waygate
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: prepare would build before the sources are here, and argon2 ships prebuilt binaries.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data \
    PORT=8080 \
    HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY migrations ./migrations
COPY scripts ./scripts
COPY --from=build /app/dist ./dist
# The node image's unprivileged user (uid 1000) owns the data directory and nothing else.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# No curl in slim images: node asks. 200 is healthy or degraded (Redis down), 503 the database is down.
# The first start on an empty volume creates the embedded database, hence the start period.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is PID 1 (no npm, no shell): SIGTERM from `docker stop` reaches the server, which drains requests
# and exits 0. It starts no long-lived children, so no zombie reaper is needed (`docker run --init` works too).
ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve"]
