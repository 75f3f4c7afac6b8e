import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AuthErrors } from './http/errors.js';
import { bearerToken } from './auth/hooks.js';
import { hashToken, sameSecret } from './auth/tokens.js';
import type { CacheStats } from './kv/cache.js';
import type { Database } from './db/database.js';
import type { JobStatus } from './scheduler.js';

export interface MetricsOptions {
  /** The bearer token a scraper must send; without one there is no /metrics. */
  token: string;
  /** This node's WebSocket connections and subscriptions, read at scrape time. */
  websocket: () => { connections: number; subscriptions: number };
  /** Each cache's answers so far, by where they came from, read at scrape time. */
  caches: () => Record<string, CacheStats>;
  database: Pick<Database, 'observeQueries' | 'connections'>;
  /** The scheduled jobs' records (shared by all nodes), read at scrape time. */
  jobs: () => Promise<JobStatus[]>;
}

/**
 * Prometheus metrics at GET /metrics (METRICS_TOKEN): requests by route pattern, method and status
 * with their latency, rate-limit refusals, cache lookups, database statements and connections, WebSocket connections and the process's own metrics. Nothing
 * is recorded unless the token is configured (the hook costs a little on every request).
 */
export function registerMetrics(app: FastifyInstance, options: MetricsOptions): void {
  const registry = new Registry();
  // The process's own metrics under their standard names (process_*, nodejs_*), as stock Node.js
  // dashboards and alerts expect them; the application's carry waygate_.
  collectDefaultMetrics({ register: registry });
  // Gauges must not end in _total (promtool check metrics): these three are the sums of the labelled
  // nodejs_active_handles, nodejs_active_requests and nodejs_active_resources, served beside them.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
    registry.removeSingleMetric(name);
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'waygate_http_requests_total',
    help: 'HTTP requests answered',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'waygate_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'waygate_rate_limited_total',
    help: 'Requests refused with 429',
    labelNames: ['route'],
    registers: [registry],
  });
  const gauges = [
    new Gauge({
      name: 'waygate_websocket_connections',
      help: 'Open WebSocket connections on this node',
      registers: [registry],
      collect() {
        this.set(options.websocket().connections);
      },
    }),
    new Gauge({
      name: 'waygate_websocket_subscriptions',
      help: 'Channel subscriptions on this node',
      registers: [registry],
      collect() {
        this.set(options.websocket().subscriptions);
      },
    }),
  ];
  void gauges;
  registerCacheCounter(registry, options.caches);
  registerDatabaseMetrics(registry, options.database);
  registerJobMetrics(registry, options.jobs);

  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    // The route pattern, never the raw URL: ids in paths would make a label per resource.
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    if (reply.statusCode === 429) rateLimited.inc({ route: labels.route });
    done();
  });

  const expected = hashToken(options.token);
  app.get('/metrics', { schema: { hide: true }, config: { ownAuthorization: true } }, async (request, reply) => {
    const token = bearerToken(request.headers.authorization);
    // Compared as hashes: equal lengths, constant time.
    if (!token || !sameSecret(hashToken(token), expected)) throw AuthErrors.unauthorized();
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}

/** Lookups per cache and source (local map, shared store, database): the hit ratio is (local + shared) / all. */
function registerCacheCounter(registry: Registry, caches: () => Record<string, CacheStats>): void {
  const reported = new Map<string, number>();
  new Counter({
    name: 'waygate_cache_lookups_total',
    help: 'Cache lookups by cache and by where the answer came from (local, shared, database)',
    labelNames: ['cache', 'source'],
    registers: [registry],
    collect() {
      // The caches count on their own (a counter per lookup would cost on the hot path); report what was added since.
      for (const [cache, stats] of Object.entries(caches())) {
        for (const [source, count] of [
          ['local', stats.local],
          ['shared', stats.shared],
          ['database', stats.loaded],
        ] as const) {
          const key = `${cache}:${source}`;
          this.inc({ cache, source }, count - (reported.get(key) ?? 0));
          reported.set(key, count);
        }
      }
    },
  });
}

/** Statement latency by outcome, and the pool's connections by state, read at scrape time. */
function registerDatabaseMetrics(registry: Registry, database: MetricsOptions['database']): void {
  const statements = new Histogram({
    name: 'waygate_db_statement_duration_seconds',
    help: 'Time each SQL statement took, by outcome',
    labelNames: ['outcome'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  database.observeQueries((ms, failed) => statements.observe({ outcome: failed ? 'error' : 'ok' }, ms / 1000));
  new Gauge({
    name: 'waygate_db_connections',
    help: 'Database connections by state (total, idle, and requests waiting for one); the embedded database has one',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { total, idle, waiting } = database.connections();
      this.set({ state: 'total' }, total);
      this.set({ state: 'idle' }, idle);
      this.set({ state: 'waiting' }, waiting);
    },
  });
}

/**
 * Each scheduled job's last run, read from the database at scrape time, so every node reports the same
 * values (a job runs on one node): alert on waygate_job_last_success == 0, or on a last run older than its period.
 */
function registerJobMetrics(registry: Registry, jobs: MetricsOptions['jobs']): void {
  // One read serves the gauges of one scrape (they are collected together).
  let read: { at: number; jobs: Promise<JobStatus[]> } | undefined;
  const current = () => {
    if (!read || performance.now() - read.at > 1000) read = { at: performance.now(), jobs: jobs() };
    return read.jobs;
  };
  const gauge = (name: string, help: string, value: (job: JobStatus) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['job'],
      registers: [registry],
      async collect() {
        for (const job of await current()) this.set({ job: job.name }, value(job));
      },
    });
  gauge(
    'waygate_job_last_run_timestamp_seconds',
    'When the job last finished (Unix seconds); 0 before its first run',
    (job) => (job.last_finished_at?.getTime() ?? 0) / 1000,
  );
  gauge('waygate_job_last_duration_seconds', 'How long its last run took', (job) => (job.last_duration_ms ?? 0) / 1000);
  gauge('waygate_job_last_success', '1 when its last run succeeded, 0 when it failed or never ran', (job) =>
    job.last_outcome === 'succeeded' ? 1 : 0,
  );
  gauge('waygate_job_running', '1 while a node runs it', (job) => (job.running ? 1 : 0));
  gauge(
    'waygate_job_runs',
    'Its runs so far on all nodes (a count kept in the database, so a gauge)',
    (job) => job.runs,
  );
  gauge('waygate_job_failures', 'Its failed runs so far on all nodes', (job) => job.failures);
}
