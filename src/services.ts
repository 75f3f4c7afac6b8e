import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { Clock } from './platform/clock.js';
import { createDomainEventBus } from './platform/events.js';
import { createAuditWriter } from './platform/audit.js';
import { createBotProtection } from './platform/bot-protection.js';
import { createMailer } from './platform/mail/mailer.js';
import { createSecretBox } from './platform/secret-box.js';
import { CredentialResolver } from './platform/auth/credentials.js';
import type { Schema } from './platform/db/schema/index.js';
import type { KeyValueStore } from './platform/kv/index.js';
import { createAccessService } from './identity/access/service.js';
import { createApiKeysService } from './identity/api-keys/service.js';
import { createAuthService } from './identity/auth/service.js';
import { createPasswordResetService } from './identity/auth/password-reset.js';
import { createRegistrationService } from './identity/auth/registration.js';
import { createSignInThrottle } from './identity/sign-in-throttle/service.js';
import { createAccountTokens } from './identity/account-tokens/service.js';
import { createEmailVerification } from './identity/auth/verify-email.js';
import { createDevicesService } from './tracking/devices/service.js';
import { createGpsService, LATEST_CACHE_TTL_SECS } from './tracking/gps/service.js';
import { createPegelService } from './tracking/pegel/service.js';
import { createSettingsService } from './operations/settings/service.js';
import { createStatsService } from './operations/stats/service.js';
import { createTripsService } from './tracking/trips/service.js';
import { createUsersService } from './identity/users/service.js';
import { createPlatformsService } from './identity/platforms/service.js';
import { createSessionsService } from './identity/sessions/service.js';
import { createAccountsService } from './identity/accounts/service.js';
import { createTwoFactorService } from './identity/two-factor/service.js';
import { createLocationsService } from './tracking/locations/service.js';
import { createTripCategoriesService } from './tracking/trip-categories/service.js';
import { createGeofencesService } from './tracking/geofences/service.js';
import { createTripTemplatesService } from './tracking/trip-templates/service.js';

/** Every module's service, built once over the shared database and key-value store. */
export interface Infrastructure {
  db: Kysely<Schema>;
  kv: KeyValueStore;
  config: Config;
  log: FastifyBaseLogger;
  clock: Clock;
}

export function createServices({ db, kv, config, log, clock }: Infrastructure) {
  const events = createDomainEventBus();
  // The resolver and the services that look credentials up need each other; the lookups are late-bound.
  const credentials: CredentialResolver = new CredentialResolver(
    kv,
    { session: (hash) => auth.lookupSession(hash), apiKey: (hash) => apiKeys.lookup(hash) },
    log,
  );
  const audit = createAuditWriter(db);
  const mailer = createMailer(config, log);
  const secretBox = createSecretBox(config.secretKey, config.dataDir);
  const platforms = createPlatformsService({ db, audit });
  const access = createAccessService({
    db, credentials,
    credentialHashesOfUser: async (userId) => [...(await auth.sessionHashesOf(userId)), ...(await apiKeys.keyHashesOf(userId))],
  });
  // Late-bound: deleting a user revokes their sessions (auth) and API keys, and both of those use users.
  const users = createUsersService({
    db, config, mailer, audit, log, access, platforms,
    revokeAllSessions: (userId, trx) => auth.revokeAllSessions(userId, trx),
    revokeAllApiKeys: (userId, trx) => apiKeys.revokeAllOfUser(userId, trx),
  });
  const apiKeys = createApiKeysService({ db, access, users, credentials, audit });
  const botProtection = createBotProtection(config.botProtection);
  const signInThrottle = createSignInThrottle(kv, log);
  // Late-bound: the two-factor service signs in through auth.issueSession; login opens its challenges.
  const auth = createAuthService({
    db, botProtection, users, access, credentials, audit, signInThrottle,
    twoFactor: { startLoginChallenge: (userId, provider) => twoFactor.startLoginChallenge(userId, provider) },
  });
  const twoFactor = createTwoFactorService({ db, secretBox, audit, mailer, users, access, platforms, auth, signInThrottle });
  const registration = createRegistrationService({
    db, botProtection, mailer, users, access, auth, audit, log,
    registrationOpen: async () => config.registrationEnabled && (await platforms.registrationOpen('email')),
  });
  const passwordReset = createPasswordResetService({
    db, botProtection, mailer, users, auth, audit, kv, log,
    clearSignInFailures: (identifiers) => signInThrottle.clear(identifiers),
    closeTwoFactorChallenges: (userId, trx) => twoFactor.closeChallengesOf(userId, trx),
  });
  const accountTokens = createAccountTokens(db);
  const verifyEmail = createEmailVerification({
    registration,
    purposeOf: (tokenHash) => accountTokens.purposeOf(tokenHash),
    completeEmailChange: (request, token) => users.completeEmailChange(request, token),
    completeEmailLink: (request, token) => accounts.completeEmailLink(request, token),
  });
  const devices = createDevicesService({ db, apiKeys });
  const settings = createSettingsService({ db, log });
  // GPS points join the active logging trip of their device; trips read the latest point of theirs.
  const gps = createGpsService({
    db,
    kv,
    devices,
    trips: { loggingTripOf: (deviceId) => trips.loggingTripOf(deviceId) },
    log,
    latestCacheTtlSecs: () => settings.configValue('gps.latest_cache_ttl_secs', LATEST_CACHE_TTL_SECS),
  });
  const trips = createTripsService({
    db,
    latestPositionOf: (deviceId) => gps.latest(deviceId),
    defaultGpsLogging: () => settings.configValue('trips.default_gps_logging', false),
    pointsOfTrip: (tripId, limit, offset) => gps.pointsOfTrip(tripId, limit, offset),
  });
  const stats = createStatsService({
    kv,
    log,
    counts: { users: users.count, devices: devices.count, gpsPoints: gps.count, tripsByStatus: trips.countByStatus },
  });
  const pegel = config.waterLevelApiUrl
    ? createPegelService({ baseUrl: config.waterLevelApiUrl, kv, currentPosition: () => gps.latest(), log })
    : null;
  const locations = createLocationsService({ db });
  const tripCategories = createTripCategoriesService({ db });
  const geofences = createGeofencesService({ db });
  const tripTemplates = createTripTemplatesService({ db, trips });
  const accounts = createAccountsService({ db, users, platforms, mailer, audit, log });
  // OAuth tokens do not exist yet: the OAuth area passes revokeOAuthTokens here when they do.
  const sessions = createSessionsService({
    db, kv, credentials, audit, log,
    createSession: (request, input, trx) => auth.createSession(request, input, trx),
    liveSession: (tokenHash) => auth.liveSession(tokenHash),
    platformName: (slug) => platforms.displayName(slug),
    userWithPrimaryProvider: (userId) => users.findWithPrimaryProvider(userId),
  });
  /** Hourly: rows that can never be used again, several of them holding password hashes. */
  const purgeExpired = async () => ({
    sessions: await sessions.purgeExpired(),
    pending_registrations: await registration.purgeExpired(),
    account_tokens: await accountTokens.purgeSpent(),
    two_factor_challenges: await twoFactor.purgeFinishedChallenges(),
  });
  return { events, clock, purgeExpired, credentials, audit, mailer, secretBox, users, access, apiKeys, auth, signInThrottle, registration, passwordReset, verifyEmail, devices, gps, trips, settings, stats, pegel, locations, tripCategories, geofences, tripTemplates, platforms, accounts, sessions, twoFactor };
}

export type Services = ReturnType<typeof createServices>;
