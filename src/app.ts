import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { oauthIssuerBase, type Config } from './config.js';
import type { Database } from './platform/db/database.js';
import { systemClock, type Clock } from './platform/clock.js';
import type { KeyValueStore } from './platform/kv/index.js';
import { registerDocs } from './platform/http/docs.js';
import { registerHostCheck } from './platform/http/envelopes.js';
import { AppError, frameworkErrorResponse, registerErrorHandling } from './platform/http/errors.js';
import { lazyChildLogger, loggerOptions, registerRequestLogging, requestIdFor } from './platform/http/logging.js';
import { registerValidation } from './platform/http/validation.js';
import { lazySerializers } from './platform/http/serialization.js';
import { registerAuth } from './platform/auth/hooks.js';
import { createRateLimit, credentialLookupLimit } from './platform/rate-limit.js';
import { openGeoIp } from './platform/geoip.js';
import { accessRoutes } from './identity/access/routes.js';
import { apiKeyRoutes } from './identity/api-keys/routes.js';
import { DEVICE_KEY_ERRORS } from './identity/api-keys/service.js';
import { userRoutes } from './identity/users/routes.js';
import { signInRoutes, unimplementedSignInRoutes } from './identity/sign-in/routes.js';
import { passwordChangeRoutes, passwordResetRoutes } from './identity/passwords/routes.js';
import { selfDeletionRoutes } from './identity/self-deletion/routes.js';
import { passkeyRoutes } from './identity/passkeys/routes.js';
import { securityNoticeRoutes } from './identity/security-notices/routes.js';
import { preferenceRoutes } from './identity/preferences/routes.js';
import { registrationRoutes } from './identity/registration/routes.js';
import { linkPageRoutes } from './identity/link-pages/routes.js';
import { deviceRoutes } from './tracking/devices/routes.js';
import { gpsRoutes } from './tracking/gps/routes.js';
import { ingestRoutes } from './tracking/gps/ingest-routes.js';
import { sharingRoutes } from './tracking/sharing/routes.js';
import { tripRoutes } from './tracking/trips/routes.js';
import { gpsFileRoutes } from './tracking/gps-files/routes.js';
import { locationRoutes } from './tracking/locations/routes.js';
import { tripCategoryRoutes } from './tracking/trip-categories/routes.js';
import { geofenceRoutes } from './tracking/geofences/routes.js';
import { eventRoutes } from './tracking/events/routes.js';
import { tripTemplateRoutes } from './tracking/trip-templates/routes.js';
import { settingsRoutes } from './operations/settings/routes.js';
import { statsRoutes } from './operations/stats/routes.js';
import { pegelRoutes } from './tracking/pegel/routes.js';
import { systemRoutes } from './operations/system/routes.js';
import { jobRoutes } from './operations/system/jobs-routes.js';
import { auditRoutes } from './operations/audit/routes.js';
import { banRoutes } from './identity/bans/routes.js';
import { groupRoutes } from './identity/groups/routes.js';
import { notificationRoutes } from './operations/notifications/routes.js';
import { oauthClientRoutes } from './identity/oauth-clients/routes.js';
import { oauthRoutes } from './identity/oauth/routes.js';
import { oauthInteractionRoutes } from './identity/oauth/interaction-routes.js';
import { userDeletionRoutes } from './identity/users/deletion-routes.js';
import { exportRoutes } from './operations/export/routes.js';
import { loginProviderRoutes } from './identity/login-providers/routes.js';
import { platformAccountRoutes } from './identity/users/account-routes.js';
import { sessionRoutes } from './identity/sessions/routes.js';
import { twoFactorRoutes } from './identity/two-factor/routes.js';
import type { WebSocketStats } from './operations/system/service.js';
import { realtimeRoutes } from './operations/realtime/routes.js';
import { graphqlRoutes } from './operations/graphql/routes.js';
import { communityRoutes } from './operations/community/routes.js';
import { integrationRoutes } from './identity/integrations/routes.js';
import { consoleRoutes } from './operations/console/routes.js';
import { loadConsoleAssets } from './operations/console/assets.js';
import { createServices, type Services } from './services.js';
import websocket from '@fastify/websocket';
import cors from '@fastify/cors';
import { registerMetrics } from './platform/metrics.js';

/** The largest WebSocket message the server reads (the community bot sizes its batches to fit); larger closes with 1009. */
const WS_MAX_MESSAGE_BYTES = 64 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    kv: KeyValueStore;
    services: Services;
    /** The WebSocket connections of this node; health reports them. */
    websocketStats: () => WebSocketStats;
  }
}

/** What the app needs from outside; the caller opens and closes them (tests inject their own). */
export interface AppDependencies {
  database: Database;
  kv: KeyValueStore;
  /** The one source of "now" (tests pass one they can move); the system clock by default. */
  clock?: Clock;
}

export interface BuildOptions {
  /** false silences logging; a stream receives the JSON log lines (tests read them). */
  logger?: false | { stream: NodeJS.WritableStream };
  /** Called before any route is registered (tests watch every response here). */
  instrument?: (app: FastifyInstance) => void;
  /** Registered after the modules, before the app is ready (tests add probe routes here). */
  extraRoutes?: (app: FastifyInstance) => Promise<void>;
  /** false: no job runs by itself (tests and CLI commands run them by hand); they run by default. */
  scheduledJobs?: boolean;
}

/**
 * Wires the plugins and modules together in a fixed order: platform
 * (validation, errors, logging, docs), then the feature modules.
 */
export async function buildApp(config: Config, deps: AppDependencies, options: BuildOptions = {}) {
  const logging = options.logger === false ? false : loggerOptions(config.logLevel, options.logger?.stream);
  const app = Fastify({
    logger: logging,
    ...(logging ? { childLoggerFactory: lazyChildLogger } : {}),
    // Fastify's two lines per request are replaced by one line of our own (registerRequestLogging).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: (request) => requestIdFor(request.headers['x-request-id']),
    bodyLimit: config.bodyLimitBytes,
    // Fastify accepts a hop count here although its typings only list the other forms.
    trustProxy: config.trustProxy as boolean | string,
    // On close, a request arriving on an open keep-alive connection is answered 503 with
    // `Connection: close` rather than having its connection cut under it (see main.ts, stop).
    return503OnClosing: true,
    forceCloseConnections: false,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkErrorResponse,
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', config);
  app.decorate('database', deps.database);
  app.decorate('kv', deps.kv);

  // The API speaks JSON only; anything else is answered 415 instead of reaching a handler as text.
  app.removeContentTypeParser('text/plain');
  registerValidation(app);
  registerErrorHandling(app);
  registerRequestLogging(app);
  await registerDocs(app, config);
  options.instrument?.(app as unknown as FastifyInstance);

  const locate = config.geoipDb ? await openGeoIp(config.geoipDb) : undefined;
  const services = createServices({
    db: deps.database.db,
    kv: deps.kv,
    config,
    log: app.log,
    clock: deps.clock ?? systemClock,
    locate,
    databaseKind: deps.database.kind,
  });
  app.decorate('services', services);
  await services.credentials.start();
  app.addHook('onClose', () => services.credentials.stop());
  await services.caches.start();
  app.addHook('onClose', () => services.caches.stop());
  await services.realtime.start();
  await services.community.start();
  app.addHook('onClose', () => services.community.stop());
  // preClose: connections are told to go away (1001) before the server stops listening.
  app.addHook('preClose', () => services.realtime.stop());
  // Before every hook that can refuse a request (Host, credentials, rate limits): its onRequest marks an
  // upgrade as one, and only a marked upgrade's socket is destroyed after the answer; a refused upgrade
  // was kept open for good (piling up, and holding the server open on close). After realtime's preClose,
  // so connections are told 1001 before the plugin closes the rest.
  await app.register(websocket, {
    options: {
      maxPayload: WS_MAX_MESSAGE_BYTES,
      // Browsers send the ticket as a second subprotocol entry and need the server to select one.
      handleProtocols: (protocols) => (protocols.has('service-ticket') ? 'service-ticket' : false),
    },
  });
  registerHostCheck(app);
  app.decorate('websocketStats', (): WebSocketStats => ({ status: 'up', ...services.realtime.stats() }));
  if (config.metricsToken) {
    registerMetrics(app, {
      token: config.metricsToken,
      websocket: services.realtime.stats,
      caches: () => ({
        ...services.caches.stats(),
        credentials: services.credentials.stats,
        latest_points: services.gps.latestStats,
      }),
      database: deps.database,
      jobs: () => services.scheduler.list(),
    });
  }
  // Notices still on their way go out before the mailer closes.
  app.addHook('onClose', async () => {
    await services.securityNotices.settled();
    services.mailer.close();
  });
  if (options.scheduledJobs !== false) services.scheduler.start();
  // Every node sends due notifications (tests call sendDue themselves).
  if (options.scheduledJobs !== false) services.notificationOutbox.start();
  app.addHook('onClose', () => services.notificationOutbox.stop());
  app.addHook('onClose', () => services.scheduler.stop());
  services.sessions.activity.start();
  app.addHook('onClose', () => services.sessions.activity.stop());
  const rateLimit = createRateLimit(app, deps.kv, config);
  registerAuth(app, services.credentials, {
    onResolved: (caller) => {
      if (caller.apiKeyId)
        services.apiKeys.noteUsed(caller.apiKeyId, (err) => app.log.warn({ err }, 'could not record API key use'));
      if (caller.sessionId) services.sessions.noteActivity(caller.sessionId);
    },
    beforeDatabaseLookup: credentialLookupLimit(deps.kv, config, app.log),
    countBodyCaller: rateLimit.countDeferred,
  });
  // After the guard's hooks: they resolve the caller the limits count.
  rateLimit.register();
  if (config.corsOrigins.length > 0) {
    // Bearer tokens only, never cookies: no credentials mode, so `*` is safe where an operator wants it.
    await app.register(cors, {
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'X-Source-Service'],
      exposedHeaders: [
        'X-Request-Id',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'Retry-After',
        'Location',
      ],
      maxAge: 600,
    });
  }

  // With bot protection on, the pages people sign in on show Turnstile with this site key.
  const turnstileSiteKey = config.botProtection.secret ? config.botProtection.siteKey : undefined;
  await app.register(systemRoutes);
  await app.register(jobRoutes, { scheduler: services.scheduler });
  await app.register(signInRoutes, { signIn: services.signIn });
  await app.register(registrationRoutes, { registration: services.registration, verifyEmail: services.verifyEmail });
  await app.register(passwordResetRoutes, { passwordReset: services.passwordReset });
  await app.register(unimplementedSignInRoutes);
  await app.register(linkPageRoutes, {
    passwordReset: services.passwordReset,
    verifyEmail: services.verifyEmail,
    turnstileSiteKey,
  });
  await app.register(accessRoutes, { access: services.access, users: services.users });
  await app.register(apiKeyRoutes, { apiKeys: services.apiKeys });
  await app.register(userRoutes, { users: services.users });
  await app.register(passwordChangeRoutes, { passwordReset: services.passwordReset });
  await app.register(selfDeletionRoutes, { selfDeletion: services.selfDeletion });
  await app.register(passkeyRoutes, { passkeys: services.passkeys });
  await app.register(securityNoticeRoutes, { notices: services.securityNotices });
  await app.register(preferenceRoutes, { preferences: services.preferences });
  await app.register(gpsFileRoutes, { gpsFiles: services.gpsFiles, sharing: services.sharing });
  await app.register(gpsRoutes, { gps: services.gps, sharing: services.sharing });
  await app.register(ingestRoutes, { gps: services.gps, clock: services.clock, sharing: services.sharing });
  await app.register(deviceRoutes, {
    devices: services.devices,
    sharing: services.sharing,
    keyErrors: DEVICE_KEY_ERRORS,
  });
  await app.register(sharingRoutes, { sharing: services.sharing });
  await app.register(tripRoutes, { trips: services.trips, sharing: services.sharing });
  await app.register(locationRoutes, { locations: services.locations });
  await app.register(tripCategoryRoutes, { tripCategories: services.tripCategories });
  await app.register(geofenceRoutes, { geofences: services.geofences, sharing: services.sharing });
  await app.register(eventRoutes, { events: services.trackingEvents, sharing: services.sharing });
  await app.register(tripTemplateRoutes, { tripTemplates: services.tripTemplates });
  await app.register(settingsRoutes, { settings: services.settings });
  await app.register(statsRoutes, { stats: services.stats });
  await app.register(loginProviderRoutes, { loginProviders: services.loginProviders });
  await app.register(platformAccountRoutes, { accounts: services.accounts });
  await app.register(integrationRoutes, { integrations: services.integrations });
  await app.register(sessionRoutes, { sessions: services.sessions });
  await app.register(twoFactorRoutes, { twoFactor: services.twoFactor });
  await app.register(auditRoutes, { audit: services.auditLog });
  await app.register(banRoutes, { bans: services.bans });
  await app.register(groupRoutes, { groups: services.groups });
  await app.register(notificationRoutes, {
    notifications: services.notifications,
    outbox: services.notificationOutbox,
  });
  await app.register(oauthClientRoutes, { clients: services.oauthClients });
  await app.register(oauthRoutes, { oauth: services.oauth, assertions: services.assertions });
  await app.register(oauthInteractionRoutes, {
    oauth: services.oauth,
    publicUrl: oauthIssuerBase(config),
    turnstileSiteKey,
    signIn: (request, input) => services.signIn.login(request, input, { withoutSession: true }),
    verifyTwoFactor: (request, input) => services.twoFactor.verifyLogin(request, input, { withoutSession: true }),
    loginUrl: config.oauthLoginUrl,
    kv: deps.kv,
  });
  await app.register(userDeletionRoutes, { users: services.users });
  await app.register(exportRoutes, { exports: services.exports });
  await app.register(graphqlRoutes, {
    services: { ...services, audit: services.auditLog },
    introspection: config.graphqlIntrospection,
    graphiql: config.swaggerUiEnabled,
    defaultLocale: config.supportedLocales[0] ?? 'en',
  });
  await app.register(communityRoutes, { community: services.community });
  await app.register(realtimeRoutes, { realtime: services.realtime, documented: config.openapiEnabled });
  if (services.pegel) await app.register(pegelRoutes, { pegel: services.pegel });
  if (config.console.enabled) {
    await app.register(consoleRoutes, {
      assets: loadConsoleAssets(),
      ...config.console,
      supportedLocales: config.supportedLocales,
      turnstileSiteKey,
      registrationEnabled: config.registrationEnabled,
    });
  }
  if (options.extraRoutes) await app.register(options.extraRoutes);

  try {
    await bootstrap(app, config, services);
  } catch (err) {
    // Stop what the services started (subscriptions, timers) before giving up.
    await app.close();
    throw err;
  }

  await app.ready();
  return app as unknown as FastifyInstance;
}

/** BOOTSTRAP_ADMIN_*, OAUTH_PLATFORMS and SYSTEM_API_KEY: make sure the first super admin, the configured login platforms and the system key exist. */
async function bootstrap(app: { log: FastifyInstance['log'] }, config: Config, services: Services): Promise<void> {
  if (config.bootstrapAdmin) {
    const { userId, created } = await services.signIn.ensureSuperAdmin(config.bootstrapAdmin).catch((err: unknown) => {
      // One clear line at start: which setting is wrong and why.
      throw err instanceof AppError ? new AppError(err.status, err.code, `BOOTSTRAP_ADMIN_*: ${err.message}`) : err;
    });
    app.log.info({ user_id: userId }, created ? 'created the bootstrap super admin' : 'bootstrap super admin exists');
  }
  const added = await services.loginProviders.ensureOAuthPlatforms(config.oauthPlatforms);
  if (added.length)
    app.log.info({ platforms: added }, 'added login platforms from OAUTH_PLATFORMS (disabled until enabled)');
  if (config.systemApiKey) {
    const outcome = await services.apiKeys.ensureSystemKey(config.systemApiKey);
    app.log.info(
      outcome === 'created'
        ? 'created the system API key from SYSTEM_API_KEY'
        : 'system API key from SYSTEM_API_KEY exists',
    );
  }
}
