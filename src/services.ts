import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { oauthIssuerBase, type Config } from './config.js';
import type { Clock } from './platform/clock.js';
import type { Locate } from './platform/geoip.js';
import { createDomainEventBus } from './platform/events.js';
import { createBotProtection } from './platform/bot-protection.js';
import { createMailer } from './platform/mail/mailer.js';
import { createSecretBox } from './platform/secret-box.js';
import { CredentialResolver } from './platform/auth/credentials.js';
import { Caches } from './platform/kv/cache.js';
import type { Schema } from './platform/db/schema/index.js';
import { DatabaseStore, type KeyValueStore } from './platform/kv/index.js';
import { createAccessService } from './identity/access/service.js';
import { createApiKeysService } from './identity/api-keys/service.js';
import { createSignInService } from './identity/sign-in/service.js';
import { createSelfDeletion } from './identity/self-deletion/service.js';
import { createReauthentication } from './identity/sign-in/reauthentication.js';
import { createPasswordResetService } from './identity/passwords/service.js';
import { createRegistrationService } from './identity/registration/service.js';
import { createBreachedPasswordCheck } from './identity/passwords/breached-passwords.js';
import { createPasskeysService, type RelyingParty } from './identity/passkeys/service.js';
import { createSignInThrottle } from './identity/sign-in-throttle/service.js';
import { createAccountTokens } from './identity/account-tokens/service.js';
import { createEmailVerification } from './identity/registration/verify-email.js';
import { createDevicesService } from './tracking/devices/service.js';
import { createSharingService } from './tracking/sharing/service.js';
import { createGpsService, LATEST_CACHE_TTL_SECS } from './tracking/gps/service.js';
import { createGpsFilesService, createPointSinkOverBatch } from './tracking/gps-files/service.js';
import { createPegelService } from './tracking/pegel/service.js';
import { createSettingsService } from './operations/settings/service.js';
import { createAuditService } from './operations/audit/service.js';
import { createAuditWriter } from './operations/audit/writer.js';
import { createExportService } from './operations/export/service.js';
import { createAppAssertionVerifier } from './platform/auth/app-assertion.js';
import { createStatsService } from './operations/stats/service.js';
import { createTripsService } from './tracking/trips/service.js';
import { createUsersService } from './identity/users/service.js';
import { createBansService } from './identity/bans/service.js';
import { createGroupsService } from './identity/groups/service.js';
import { createOAuthClientsService } from './identity/oauth-clients/service.js';
import { createOAuthService } from './identity/oauth/service.js';
import { createLoginProvidersService } from './identity/login-providers/service.js';
import { createSessionsService, createSessionStore } from './identity/sessions/service.js';
import { createAccountsService } from './identity/users/accounts.js';
import { createTwoFactorService } from './identity/two-factor/service.js';
import { createLocationsService } from './tracking/locations/service.js';
import { createTripCategoriesService } from './tracking/trip-categories/service.js';
import { createGeofencesService } from './tracking/geofences/service.js';
import { createEventsService } from './tracking/events/service.js';
import { createTripTemplatesService } from './tracking/trip-templates/service.js';
import { createNotificationsService } from './operations/notifications/service.js';
import { createNotificationOutbox } from './operations/notifications/outbox.js';
import { createRealtimeService } from './operations/realtime/service.js';
import { createCommunityService } from './operations/community/service.js';
import { createIntegrationsService } from './identity/integrations/service.js';
import { createSecurityNotices } from './identity/security-notices/service.js';
import { createPreferencesService } from './identity/preferences/service.js';
import { registerReactions } from './reactions.js';
import { createJobs } from './jobs.js';

/** Every module's service, built once over the shared database and key-value store. */
export interface Infrastructure {
  db: Kysely<Schema>;
  kv: KeyValueStore;
  config: Config;
  log: FastifyBaseLogger;
  clock: Clock;
  /** Where an IP address is, when a GeoIP database is configured (GEOIP_DB). */
  locate?: Locate;
  /** Which back end `db` is: GPS commits overlap on a server, and the embedded database gets the maintenance job autovacuum does on one. */
  databaseKind: 'embedded' | 'postgres';
}

/** Batches of POST /v1/gps points committing at once on PostgreSQL (of the pool's 10 connections). */
const GPS_COMMITS_AT_ONCE = 4;

export function createServices({ db, kv, config, log, clock, locate, databaseKind }: Infrastructure) {
  const events = createDomainEventBus();
  // State that must outlive a restart (sign-in locks and their counts, replay markers): Redis when there is one,
  // the database otherwise (the in-process store forgets everything when the process stops). Nothing else goes there.
  const durableTable = kv.kind === 'redis' ? undefined : new DatabaseStore(db, clock);
  const durable = durableTable ?? kv;
  const credentials = new CredentialResolver(kv, log, clock);
  const caches = new Caches(kv, clock, log);
  const audit = createAuditWriter(db, locate);
  const mailer = createMailer(config, log);
  const secretBox = createSecretBox(config.secretKey, config.dataDir);
  const loginProviders = createLoginProvidersService({ db, audit });
  const access = createAccessService({ db, credentials, events, caches });
  const users = createUsersService({ db, config, mailer, audit, log, clock, access, loginProviders, events, caches });
  const oauthClients = createOAuthClientsService({ db, clock, audit, users, access, events, caches });
  const bans = createBansService({ db, clock, audit, events, users, access });
  const preferences = createPreferencesService({ db });
  /** A user's mail contact with the time zone of their preferences: mails write times in it. */
  const withTimeZone =
    <C extends object>(contactOf: (userId: string) => Promise<C | undefined>) =>
    async (userId: string) => {
      const [contact, chosen] = await Promise.all([contactOf(userId), preferences.of(userId)]);
      return contact && { ...contact, timeZone: chosen.time_zone };
    };
  const mailContactOf = withTimeZone(users.contactOf);
  const groups = createGroupsService({
    db,
    clock,
    audit,
    events,
    mailer,
    log,
    users,
    contactOf: mailContactOf,
    invitationsUrl: config.frontendUrl ? `${config.frontendUrl}/groups` : `${oauthIssuerBase(config)}/console/#/groups`,
  });
  const oauth = createOAuthService({
    db,
    clock,
    secretBox,
    audit,
    credentials,
    config: { ...config, publicUrl: oauthIssuerBase(config) },
    clients: oauthClients,
    users,
    access,
  });
  const sessionStore = createSessionStore({
    db,
    clock,
    credentials,
    audit,
    accessOfUser: access.accessOfUser,
    assertNotBanned: bans.assertNotBanned,
  });
  const botProtection = createBotProtection(config.botProtection);
  const signInThrottle = createSignInThrottle(durable, log, clock);
  const reauthentication = createReauthentication({ clock, users, signInThrottle, audit, sessions: sessionStore });
  const apiKeys = createApiKeysService({ db, clock, access, users, credentials, audit, events, reauthentication });
  const twoFactor = createTwoFactorService({
    db,
    clock,
    secretBox,
    audit,
    mailer,
    users,
    access,
    loginProviders,
    sessions: sessionStore,
    signInThrottle,
    events,
  });
  const signIn = createSignInService({
    db,
    botProtection,
    users,
    access,
    credentials,
    audit,
    signInThrottle,
    sessions: sessionStore,
    twoFactor,
    bans,
    events,
  });
  const passkeys = createPasskeysService({
    db,
    clock,
    kv,
    audit,
    rp: relyingPartyOf(config),
    users,
    sessions: sessionStore,
    bans,
    twoFactor,
    events,
    reauthentication,
  });
  const breachedPasswords = createBreachedPasswordCheck({ ...config.pwnedPasswords, log });
  const registration = createRegistrationService({
    db,
    clock,
    botProtection,
    mailer,
    users,
    access,
    sessions: sessionStore,
    audit,
    log,
    breachedPasswords,
    events,
    registrationOpen: async () => config.registrationEnabled && (await loginProviders.registrationOpen('email')),
  });
  const passwordReset = createPasswordResetService({
    db,
    clock,
    botProtection,
    mailer,
    users,
    sessions: sessionStore,
    twoFactor,
    oauth,
    signInThrottle,
    reauthentication,
    audit,
    kv,
    log,
    breachedPasswords,
    events,
  });
  const selfDeletion = createSelfDeletion({ users, reauthentication });
  const accountTokens = createAccountTokens(db, clock);
  const accounts = createAccountsService({ db, clock, users, loginProviders, mailer, audit, log });
  const returnOrigins = [
    ...(config.publicUrl ? [new URL(config.publicUrl).origin] : []),
    ...config.corsOrigins.filter((origin) => origin !== '*'),
  ];
  const integrations = createIntegrationsService({
    db,
    kv,
    durable,
    clock,
    secretBox,
    audit,
    log,
    options: { ...config.integrations, returnOrigins },
  });
  const verifyEmail = createEmailVerification({
    registration,
    purposeOf: accountTokens.purposeOf,
    completeEmailChange: users.completeEmailChange,
    completeEmailLink: accounts.completeEmailLink,
  });
  const devices = createDevicesService({ db, apiKeys, events, caches, audit });
  const settings = createSettingsService({ db, log, caches });
  const sharing = createSharingService({
    db,
    devices,
    groups,
    users: {
      idOfUsername: async (username) => (await users.findByUsername(username))?.id,
      usernamesOf: users.usernamesOf,
    },
    caches,
    clock,
    audit,
    selfService: () => settings.configValue('tracking.self_service', true),
  });
  const realtime = createRealtimeService({
    kv,
    clock,
    log,
    credentials,
    accessOfActiveUser: async (userId) =>
      (await users.exists(userId)) && !(await bans.isBanned(userId)) ? access.accessOfUser(userId) : null,
    liveGrantsOf: (caller) => sharing.liveGrantsOf(caller, 'gps:read'),
  });
  // A share, device or group changed what some users reach: their open WebSockets, on every node, judge anew.
  sharing.onChanged((userIds) => realtime.grantsChanged(userIds));
  const community = createCommunityService({ db, kv, bot: realtime.bot, audit, clock, log });
  const gps = createGpsService({
    db,
    kv,
    devices,
    log,
    events,
    latestCacheTtlSecs: () => settings.configValue('gps.latest_cache_ttl_secs', LATEST_CACHE_TTL_SECS),
    commitConcurrency: databaseKind === 'postgres' ? GPS_COMMITS_AT_ONCE : 1,
  });
  const trips = createTripsService({
    db,
    clock,
    events,
    latestPositionOf: gps.latest,
    defaultGpsLogging: () => settings.configValue('trips.default_gps_logging', false),
    pointsOfTrip: gps.pointsOfTrip,
    countOfTripSince: gps.countOfTripSince,
  });
  const gpsFiles = createGpsFilesService({
    db,
    clock,
    log,
    gps,
    devices,
    trips,
    sink: createPointSinkOverBatch(gps),
    timeZoneOf: async (userId) => (await preferences.of(userId)).time_zone,
    importMaxBytes: config.importMaxBytes,
    importLimits: {
      perUser: config.importMaxPerUser,
      perNode: config.importMaxConcurrent,
      spoolMaxBytes: config.importSpoolMaxBytes,
      minBytesPerSecond: config.importMinBytesPerSecond,
      rateWindowMs: config.importRateWindowMs,
    },
  });
  const stats = createStatsService({
    kv,
    log,
    clock,
    counts: { users: users.count, devices: devices.count, gpsPoints: gps.count, tripsByStatus: trips.countByStatus },
  });
  const pegel = config.waterLevelApiUrl
    ? createPegelService({ baseUrl: config.waterLevelApiUrl, kv, currentPosition: () => gps.latest(), log })
    : null;
  const locations = createLocationsService({ db });
  const tripCategories = createTripCategoriesService({ db });
  const geofences = createGeofencesService({ db, caches });
  const trackingEvents = createEventsService({ db, clock, log, events, geofences, sharing });
  const tripTemplates = createTripTemplatesService({ db, trips });
  const assertions = createAppAssertionVerifier({
    secrets: config.internalAppSecrets,
    ttlSecs: config.idAppAssertionTtlSecs,
    nonces: durable,
    clock,
  });
  const auditLog = createAuditService({
    db,
    clock,
    writer: audit,
    mailer,
    log,
    assertions,
    users: { exists: users.exists, idsMatching: users.idsMatching, contactOf: mailContactOf },
  });
  const sessions = createSessionsService({
    db,
    clock,
    credentials,
    audit,
    log,
    notifySignOut: realtime.signOut,
    revokeOAuthTokens: oauth.revokeTokensOf,
    store: sessionStore,
    platformName: loginProviders.displayName,
    userWithPrimaryProvider: users.findWithPrimaryProvider,
  });
  const securityNotices = createSecurityNotices({
    db,
    kv,
    clock,
    mailer,
    log,
    locate,
    contactOf: withTimeZone(users.noticeContactOf),
    sessionsUrl: `${oauthIssuerBase(config)}/console/#/account`,
  });
  const notifications = createNotificationsService({
    db,
    clock,
    log,
    caches,
    secretBox,
    mailer,
    contactOf: mailContactOf,
    sharing,
    geofences,
    settings: {
      ...config.notifications,
      vapidSubject: vapidSubjectOf(config),
      consoleUrl: config.frontendUrl ?? `${oauthIssuerBase(config)}/console/`,
    },
  });
  const notificationOutbox = createNotificationOutbox({
    db,
    clock,
    log,
    notifications,
    sharing,
    devices,
    timeZoneOf: async (userId) => (await preferences.of(userId)).time_zone,
    mailer,
    contactOf: mailContactOf,
    consoleUrl: config.frontendUrl ?? `${oauthIssuerBase(config)}/console/`,
  });
  const exports = createExportService({
    db,
    clock,
    audit,
    log,
    sources: {
      user: users.findById,
      platformAccounts: accounts.list,
      apiKeys: apiKeys.ofUser,
      roles: async (userId) => (await access.rolesOfUser(userId)).map((role) => role.name),
      twoFactor: twoFactor.summaryOf,
      deletionStatus: users.deletionStatus,
      sessions: sessions.liveSessionsOf,
      ownedApps: oauthClients.listOfOwner,
      connectedApps: oauth.consentsOf,
      integrations: (userId) => integrations.list(userId),
      passkeys: passkeys.listOfUser,
      securityNotifications: securityNotices.personalDataOf,
      preferences: preferences.of,
      devicesOfApiKeys: devices.ofApiKeys,
      ownedDevices: devices.ofOwner,
      pointsSentBy: (userId) => gps.pointsSentBy(userId),
      pointsOfOwnedDevices: (userId, deviceIds) => gps.pointsOfDevicesNotSentBy(deviceIds, userId),
      tracksGpx: (userId, name) => gpsFiles.gpxOfSender(userId, name),
    },
  });
  // Hooks that would close a cycle, and the reactions to domain events: registered once every service exists.
  gps.useLoggingTripOf(trips.loggingTripOf);
  gps.usePointObserver(trackingEvents.pointObserver);
  trackingEvents.useDeliveries(notificationOutbox);
  gps.useTransitionRecorder(trackingEvents.recordDeviceTransition);
  users.useBanStatus(bans.isBanned);
  twoFactor.usePasskeys(passkeys.verifyingCountOf);
  credentials.useLookups({
    session: (hash) => sessionStore.lookup(hash),
    apiKey: (hash) => apiKeys.lookup(hash),
    oauthToken: (hash) => oauth.lookup(hash),
  });
  registerReactions({
    events,
    credentials,
    securityNotices,
    passkeys,
    apiKeys,
    sessions,
    sessionStore,
    oauth,
    oauthClients,
    auditLog,
    realtime,
    gps,
    groups,
    sharing,
  });
  const { scheduler, purgeExpired } = createJobs({
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
  });
  return {
    scheduler,
    securityNotices,
    preferences,
    gpsFiles,
    caches,
    events,
    clock,
    realtime,
    community,
    integrations,
    purgeExpired,
    credentials,
    sessionStore,
    bans,
    groups,
    exports,
    oauthClients,
    oauth,
    audit,
    auditLog,
    assertions,
    mailer,
    secretBox,
    users,
    access,
    apiKeys,
    signIn,
    signInThrottle,
    registration,
    passwordReset,
    selfDeletion,
    passkeys,
    verifyEmail,
    devices,
    sharing,
    gps,
    trips,
    settings,
    stats,
    pegel,
    locations,
    tripCategories,
    geofences,
    trackingEvents,
    tripTemplates,
    loginProviders,
    accounts,
    sessions,
    twoFactor,
    notifications,
    notificationOutbox,
  };
}

export type Services = ReturnType<typeof createServices>;

/** Who push services may contact about our pushes (RFC 8292): PUBLIC_URL when https, else MAIL_FROM's address. */
function vapidSubjectOf(config: Config): string {
  if (config.publicUrl?.startsWith('https:')) return config.publicUrl;
  const address = /<([^>]+)>/.exec(config.mailFrom)?.[1] ?? config.mailFrom;
  return `mailto:${address.trim()}`;
}

/**
 * Passkeys are bound to PUBLIC_URL's host (the server's own address without it); their ceremonies may
 * run on its pages and on the front ends of CORS_ORIGINS (which must be that host or below it).
 */
function relyingPartyOf(config: Config): RelyingParty {
  const base = new URL(oauthIssuerBase(config));
  const origins = [base.origin, ...config.corsOrigins.filter((origin) => origin !== '*')];
  return { id: base.hostname, name: 'Waygate', origins: [...new Set(origins)] };
}
