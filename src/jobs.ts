import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from './platform/clock.js';
import { maintainEmbeddedDatabase } from './platform/db/maintenance.js';
import type { Schema } from './platform/db/schema/index.js';
import type { DatabaseStore } from './platform/kv/index.js';
import { createScheduler } from './platform/scheduler.js';
import type { AccountTokens } from './identity/account-tokens/service.js';
import type { OAuthService } from './identity/oauth/service.js';
import type { RegistrationService } from './identity/registration/service.js';
import type { SecurityNotices } from './identity/security-notices/service.js';
import type { SessionsService } from './identity/sessions/service.js';
import type { TwoFactorService } from './identity/two-factor/service.js';
import type { UsersService } from './identity/users/service.js';
import { createGpsPartitions, MONTHS_AHEAD } from './tracking/gps/retention.js';
import { MONTHS_AHEAD as AUDIT_MONTHS_AHEAD, type AuditService } from './operations/audit/service.js';
import type { CommunityService } from './operations/community/service.js';
import type { SettingsService } from './operations/settings/service.js';
import type { EventsService } from './tracking/events/service.js';

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** What the scheduled jobs run, each service narrowed to what its job calls. */
export interface JobSources {
  db: Kysely<Schema>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** The embedded database gets the maintenance job autovacuum does on a server. */
  databaseKind: 'embedded' | 'postgres';
  /** The table of keys that outlive a restart, when there is no Redis (its expired rows go with the hourly purge). */
  durableTable: Pick<DatabaseStore, 'purgeExpired'> | undefined;
  sessions: Pick<SessionsService, 'purgeExpired'>;
  registration: Pick<RegistrationService, 'purgeExpired'>;
  accountTokens: Pick<AccountTokens, 'purgeSpent'>;
  twoFactor: Pick<TwoFactorService, 'purgeFinishedChallenges'>;
  users: Pick<UsersService, 'purgeDue'>;
  oauth: Pick<OAuthService, 'purgeExpired' | 'retireSupersededKeys'>;
  community: Pick<CommunityService, 'purgeStaleStaging'>;
  securityNotices: Pick<SecurityNotices, 'purgeStaleDevices'>;
  settings: Pick<SettingsService, 'configValue'>;
  auditLog: Pick<AuditService, 'addMonths' | 'expire'>;
  trackingEvents: Pick<EventsService, 'purgeBefore'>;
}

/**
 * The scheduled jobs (GET /v1/system/jobs lists them), defined over the built services by the composition root;
 * `purgeExpired` is also run by hand (tests, the CLI).
 */
export function createJobs({
  db,
  clock,
  log,
  databaseKind,
  durableTable,
  sessions,
  registration,
  accountTokens,
  twoFactor,
  users,
  oauth,
  community,
  securityNotices,
  settings,
  auditLog,
  trackingEvents,
}: JobSources) {
  /** Hourly: rows that can never be used again (several hold password hashes), and users past their deletion grace period. */
  const purgeExpired = async () => ({
    sessions: await sessions.purgeExpired(),
    pending_registrations: await registration.purgeExpired(),
    account_tokens: await accountTokens.purgeSpent(),
    two_factor_challenges: await twoFactor.purgeFinishedChallenges(),
    deleted_users: await users.purgeDue(),
    oauth_artifacts: await oauth.purgeExpired(),
    oauth_signing_keys_retired: await oauth.retireSupersededKeys(),
    community_member_staging: await community.purgeStaleStaging(),
    sign_in_devices: await securityNotices.purgeStaleDevices(),
    durable_keys: (await durableTable?.purgeExpired()) ?? 0,
  });
  const gpsPartitions = createGpsPartitions({ db, clock });
  const retentionDays = (key: string) => settings.configValue<number | null>(key, null);
  const scheduler = createScheduler({ db, clock, log });
  scheduler.define({
    name: 'purge-expired',
    description:
      'Deletes rows that can never be used again (expired sessions, spent tokens) and users past their deletion grace period',
    intervalMs: HOUR_MS,
    run: purgeExpired,
  });
  scheduler.define({
    name: 'gps-partitions',
    description: `Adds the monthly partitions of GPS points up to ${MONTHS_AHEAD} months ahead, and for points older than the first month`,
    intervalMs: DAY_MS,
    run: gpsPartitions.addMonths,
  });
  scheduler.define({
    name: 'gps-retention',
    description: 'Removes GPS points older than gps.retention_days (null keeps them)',
    intervalMs: DAY_MS,
    run: async () => gpsPartitions.expire(await retentionDays('gps.retention_days')),
  });
  if (databaseKind === 'embedded') {
    scheduler.define({
      name: 'database-maintenance',
      description: "Vacuums and analyses the embedded database's tables, as autovacuum does on a PostgreSQL server",
      intervalMs: HOUR_MS,
      run: () => maintainEmbeddedDatabase(db),
    });
  }
  scheduler.define({
    name: 'audit-partitions',
    description: `Adds the monthly partitions of the activity log up to ${AUDIT_MONTHS_AHEAD} months ahead`,
    intervalMs: DAY_MS,
    run: auditLog.addMonths,
  });
  scheduler.define({
    name: 'audit-retention',
    description: 'Removes activity-log events older than audit.retention_days (null keeps them)',
    intervalMs: DAY_MS,
    run: async () => auditLog.expire(await retentionDays('audit.retention_days')),
  });
  scheduler.define({
    name: 'events-retention',
    description: 'Removes events older than events.retention_days (null keeps them)',
    intervalMs: DAY_MS,
    run: async () => {
      const days = await retentionDays('events.retention_days');
      if (days === null) return { retention_days: null, events_deleted: 0 };
      const cutoff = new Date(clock.nowMs() - days * DAY_MS);
      return {
        retention_days: days,
        cutoff: cutoff.toISOString(),
        events_deleted: await trackingEvents.purgeBefore(cutoff),
      };
    },
  });
  return { scheduler, purgeExpired };
}
