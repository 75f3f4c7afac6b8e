import type { Database } from '../../platform/db/database.js';
import type { KeyValueStore } from '../../platform/kv/index.js';

export interface WebSocketStats {
  status: string;
  connections: number;
  subscriptions: number;
}

export interface ServiceCheck {
  status: 'up' | 'down';
  responseTime: number;
}

export interface Uptime {
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
  total: number;
}

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

export function createHealthService(deps: { database: Database; kv: KeyValueStore; websocket: () => WebSocketStats }) {
  return {
    /**
     * healthy: everything answers; degraded: the cache is down (rate limits fail
     * open, reads go to the database); unhealthy: the database is down (503).
     */
    async report() {
      const [database, cache] = await Promise.all([check(deps.database.ping), check(deps.kv.ping.bind(deps.kv))]);
      const status = database.status === 'down' ? 'unhealthy' : cache.status === 'down' ? 'degraded' : 'healthy';
      return { status, services: { database, cache, websocket: deps.websocket() } };
    },
  };
}
