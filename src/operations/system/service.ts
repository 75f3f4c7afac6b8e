import type { Static } from 'typebox';
import type { Database } from '../../platform/db/database.js';
import type { KeyValueStore } from '../../platform/kv/index.js';

import type {
  ServiceCheck as ServiceCheckSchema,
  Uptime as UptimeSchema,
  WebSocketStats as WebSocketStatsSchema,
} from './schemas.js';

/** The shapes GET /v1/health and /v1/info answer with (their route schemas are the one source). */
export type WebSocketStats = Static<typeof WebSocketStatsSchema>;
export type ServiceCheck = Static<typeof ServiceCheckSchema>;
export type Uptime = Static<typeof UptimeSchema>;

const CHECK_TIMEOUT_MS = 2000;

export function uptimeOf(totalSeconds: number): Uptime {
  const whole = Math.floor(totalSeconds);
  return {
    days: Math.floor(whole / 86_400),
    hours: Math.floor((whole % 86_400) / 3600),
    minutes: Math.floor((whole % 3600) / 60),
    seconds: whole % 60,
    total: Math.round(totalSeconds * 1000) / 1000,
  };
}

/** Times one dependency's ping; a ping that fails or takes longer than 2 s counts as down. */
export async function check(ping: () => Promise<void>): Promise<ServiceCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([ping(), timeout]);
    return { status: 'up', responseTime: elapsedMs(started) };
  } catch {
    return { status: 'down', responseTime: elapsedMs(started) };
  } finally {
    clearTimeout(timer);
  }
}

const elapsedMs = (since: number) => Math.round((performance.now() - since) * 100) / 100;

/** Dependency probes are shared for this long: health is exempt from rate limits, so it must not turn into database load. */
export const PROBE_TTL_MS = 1000;

export function createHealthService(deps: {
  database: Database;
  kv: KeyValueStore;
  websocket: () => WebSocketStats;
  nowMs: () => number;
}) {
  let probe: { at: number; checks: Promise<[ServiceCheck, ServiceCheck]> } | undefined;

  /** One probe of each dependency per second, whatever the number of callers (concurrent ones share it). */
  function checks(): Promise<[ServiceCheck, ServiceCheck]> {
    const now = deps.nowMs();
    if (!probe || now - probe.at >= PROBE_TTL_MS || now < probe.at) {
      probe = { at: now, checks: Promise.all([check(deps.database.ping), check(deps.kv.ping.bind(deps.kv))]) };
    }
    return probe.checks;
  }

  return {
    /**
     * healthy: everything answers; degraded: the cache is down (rate limits fail
     * open, reads go to the database); unhealthy: the database is down (503).
     * At most a second old.
     */
    async report() {
      const [database, cache] = await checks();
      const status = database.status === 'down' ? 'unhealthy' : cache.status === 'down' ? 'degraded' : 'healthy';
      return { status, services: { database, cache, websocket: deps.websocket() } };
    },
  };
}
