import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import { createAuditWriter } from './platform/audit.js';
import { createBotProtection } from './platform/bot-protection.js';
import { createMailer } from './platform/mail/mailer.js';
import { createSecretBox } from './platform/secret-box.js';
import { CredentialResolver } from './platform/auth/credentials.js';
import type { Schema } from './platform/db/schema.js';
import type { KeyValueStore } from './platform/kv/index.js';
import { createAccessService } from './modules/access/service.js';
import { createApiKeysService } from './modules/api-keys/service.js';
import { createAuthService } from './modules/auth/service.js';
import { createDevicesService } from './modules/devices/service.js';
import { createGpsService } from './modules/gps/service.js';
import { createPegelService } from './modules/pegel/service.js';
import { createSettingsService } from './modules/settings/service.js';
import { createStatsService } from './modules/stats/service.js';
import { createTripsService } from './modules/trips/service.js';
import { createUsersService } from './modules/users/service.js';
import { createLocationsService } from './modules/locations/service.js';
import { createTripCategoriesService } from './modules/trip-categories/service.js';
import { createGeofencesService } from './modules/geofences/service.js';
import { createTripTemplatesService } from './modules/trip-templates/service.js';

/** Every module's service, built once over the shared database and key-value store. */
export function createServices(db: Kysely<Schema>, kv: KeyValueStore, config: Config, log: FastifyBaseLogger) {
  // The resolver and the services that look credentials up need each other; the lookups are late-bound.
  const credentials: CredentialResolver = new CredentialResolver(
    kv,
    { session: (hash) => auth.lookupSession(hash), apiKey: (hash) => apiKeys.lookup(hash) },
    log,
  );
  const audit = createAuditWriter(db);
  const mailer = createMailer(config, log);
  const secretBox = createSecretBox(config.secretKey, config.dataDir);
  const users = createUsersService(db);
  const access = createAccessService({ db, credentials });
  const apiKeys = createApiKeysService({ db, access, users, credentials, audit });
  const auth = createAuthService({ db, botProtection: createBotProtection(config.botProtection), users, access, credentials, audit });
  const devices = createDevicesService({ db, apiKeys });
  // GPS points join the active logging trip of their device; trips read the latest point of theirs.
  const gps = createGpsService({ db, kv, devices, trips: { loggingTripOf: (deviceId) => trips.loggingTripOf(deviceId) }, log });
  const settings = createSettingsService({ db });
  const trips = createTripsService({
    db,
    latestPositionOf: (deviceId) => gps.latest(deviceId),
    defaultGpsLogging: () => settings.configValue('trips.default_gps_logging', false),
  });
  const stats = createStatsService({ db, kv, log });
  const pegel = config.waterLevelApiUrl
    ? createPegelService({ baseUrl: config.waterLevelApiUrl, kv, currentPosition: () => gps.latest(), log })
    : null;
  const locations = createLocationsService({ db });
  const tripCategories = createTripCategoriesService({ db });
  const geofences = createGeofencesService({ db });
  const tripTemplates = createTripTemplatesService({ db, trips });
  return { credentials, audit, mailer, secretBox, users, access, apiKeys, auth, devices, gps, trips, settings, stats, pegel, locations, tripCategories, geofences, tripTemplates };
}

export type Services = ReturnType<typeof createServices>;
