import { PassThrough, Readable, Transform } from 'node:stream';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import { userIdOf } from '../../platform/auth/hooks.js';
import { AppError, AuthErrors } from '../../platform/http/errors.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { ExportErrors } from './errors.js';
import { createExportRepo } from './repo.js';
import { EXPORT_LOGS_MAX_LIMIT } from './schemas.js';
import { exportLocale, exportTexts } from './texts.js';
import { dayIn } from '../../platform/days.js';

/** Where a user's personal data lives: each owning module answers for its own (wired in services.ts). */
export interface PersonalDataSources {
  user(userId: string): Promise<
    | {
        id: string;
        username: string;
        privacy_mode: boolean;
        avatars_enabled: boolean;
        created_at: Date;
        last_login_at: Date | null;
        preferred_locale: string | null;
      }
    | undefined
  >;
  platformAccounts(userId: string): Promise<object[]>;
  /** The user's API keys as their list shows them: never the key or its hash. */
  apiKeys(userId: string): Promise<
    {
      id: string;
      key_prefix: string;
      name: string;
      description: string | null;
      scopes: string[];
      is_active: boolean;
      is_system: boolean;
      expires_at: Date | null;
      last_used_at: Date | null;
      created_at: Date;
      updated_at: Date;
    }[]
  >;
  roles(userId: string): Promise<string[]>;
  twoFactor(userId: string): Promise<{ enabled: boolean; enabledAt: Date | null; backupCodesRemaining: number }>;
  deletionStatus(userId: string): Promise<{ is_scheduled_for_deletion: boolean }>;
  sessions(userId: string, currentSessionId: string | null): Promise<object[]>;
  /** OAuth clients the user owns (never a secret). */
  ownedApps(userId: string): Promise<object[]>;
  /** Third-party apps the user consented to, with the scopes. */
  connectedApps(userId: string): Promise<object[]>;
  /** The user's streaming-platform integrations as their list shows them: never a token. */
  integrations(userId: string): Promise<object[]>;
  /** The user's passkeys as their list shows them: never a public key. */
  passkeys(userId: string): Promise<object[]>;
  /** Which optional security notices the user gets, and when each browser and network known as theirs was seen. */
  securityNotifications(userId: string): Promise<object>;
  /** The user's units, time zone and coordinate format. */
  preferences(userId: string): Promise<{ time_zone: string | null }>;
  devicesOfApiKeys(apiKeyIds: string[]): Promise<{ id: string }[]>;
  /** The devices the user owns (owner_id). */
  ownedDevices(userId: string): Promise<{ id: string }[]>;
  /** Every point the user sent, in time order, a batch at a time. */
  pointsSentBy(userId: string): AsyncIterable<object[]>;
  /** The points of these devices (the user's own) that the user did not send, a batch at a time. */
  pointsOfOwnedDevices(userId: string, deviceIds: string[]): AsyncIterable<object[]>;
  /** The same points as one GPX 1.1 track (tracks.gpx), as text a batch at a time. */
  tracksGpx(userId: string, name: string): AsyncIterable<string>;
}

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  audit: AuditWriter;
  log: FastifyBaseLogger;
  sources: PersonalDataSources;
}

const FORMAT_VERSION = '1.0';
const camelKey = (key: string) => key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

/** Snake_case rows to the camelCase JSON of the export; dates as ISO 8601. */
export function camelCased(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelCased);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [camelKey(key), camelCased(inner)]));
  return value;
}

/**
 * The personal data export: a ZIP streamed to the client as it is made (data.json, tracks.gpx,
 * report.pdf, README.txt), so an account with millions of GPS points costs no more memory than one with ten.
 * Everything but the points is read before the first byte, so a failure there is a clean 500; the
 * points follow from the database a batch at a time. The export log row (with the real size) and the
 * data_exported event are written when the last byte has passed, before the response ends.
 */
export function createExportService(deps: Deps) {
  const repo = createExportRepo(deps.db);
  const { sources } = deps;

  async function snapshotOf(userId: string, currentSessionId: string | null, exportedAt: Date) {
    const user = await sources.user(userId);
    if (!user) throw AuthErrors.user_required();
    const [
      platformAccounts,
      apiKeys,
      roles,
      twoFactorAuth,
      deletion,
      sessions,
      ownedApps,
      connectedApps,
      integrations,
      passkeys,
      securityNotifications,
      preferences,
      ownedDevices,
      earlier,
    ] = await Promise.all([
      sources.platformAccounts(userId),
      sources.apiKeys(userId),
      sources.roles(userId),
      sources.twoFactor(userId),
      sources.deletionStatus(userId),
      sources.sessions(userId, currentSessionId),
      sources.ownedApps(userId),
      sources.connectedApps(userId),
      sources.integrations(userId),
      sources.passkeys(userId),
      sources.securityNotifications(userId),
      sources.preferences(userId),
      sources.ownedDevices(userId),
      repo.logsOf(userId, EXPORT_LOGS_MAX_LIMIT, 0),
    ]);
    const devices = await sources.devicesOfApiKeys(apiKeys.map((key) => key.id));
    const data = {
      exportInfo: { exportedAt, format: 'json', version: FORMAT_VERSION },
      user: {
        id: user.id,
        username: user.username,
        privacyMode: user.privacy_mode,
        avatarsEnabled: user.avatars_enabled,
        createdAt: user.created_at,
        lastLoginAt: user.last_login_at,
      },
      platformAccounts,
      connectedApps,
      ownedApps,
      apiKeys,
      roles,
      twoFactorAuth,
      passkeys,
      securityNotifications,
      preferences,
      deletionStatus: deletion.is_scheduled_for_deletion ? deletion : null,
      exportLogs: earlier.logs,
      sessions,
      integrations,
      devices,
      ownedDevices,
    };
    return {
      user,
      data: camelCased(data) as Record<string, unknown>,
      devices,
      ownedDeviceIds: ownedDevices.map((device) => device.id),
      earlierExports: earlier.total,
      timeZone: preferences.time_zone,
    };
  }

  return {
    async logs(caller: Caller, query: { limit?: number; offset?: number }) {
      const limit = Math.min(Math.max(query.limit ?? 50, 1), EXPORT_LOGS_MAX_LIMIT);
      const offset = query.offset ?? 0;
      const { logs, total } = await repo.logsOf(userIdOf(caller), limit, offset);
      return { logs, total, hasMore: offset + logs.length < total };
    },

    /** Starts the export: the file name and the archive stream to send. Throws before any byte is sent. */
    async start(request: FastifyRequest, caller: Caller): Promise<{ fileName: string; stream: Readable }> {
      const userId = userIdOf(caller);
      const exportedAt = deps.clock.now();
      const snapshot = await snapshotOf(userId, caller.sessionId, exportedAt).catch((err: unknown) => {
        if (err instanceof AppError) throw err;
        deps.log.error({ err, user_id: userId }, 'could not read the data to export');
        throw ExportErrors.failed();
      });
      const locale = exportLocale(snapshot.user.preferred_locale);
      const texts = exportTexts(locale);
      // Loaded on the first export: the zip and PDF writers took about a tenth of a second of every start.
      const [{ ZipArchive }, { writeReport }] = await Promise.all([import('archiver'), import('./report.js')]);
      const points = { sent: 0, ofOwnedDevices: 0 };

      /** The points of `batches` as the items of a JSON array, counted into points[counter]. */
      async function* pointItems(batches: AsyncIterable<object[]>, counter: keyof typeof points) {
        let separator = '';
        for await (const batch of batches) {
          points[counter] += batch.length;
          yield separator + batch.map((point) => JSON.stringify(camelCased(point))).join(',');
          separator = ',';
        }
      }

      async function* dataJson() {
        const head = JSON.stringify(snapshot.data);
        yield `${head.slice(0, -1)},"gpsPoints":[`;
        yield* pointItems(sources.pointsSentBy(userId), 'sent');
        // A point the user sent to a device of theirs is in gpsPoints already: each point is in the file once.
        yield '],"ownedDevicePoints":[';
        yield* pointItems(sources.pointsOfOwnedDevices(userId, snapshot.ownedDeviceIds), 'ofOwnedDevices');
        yield ']}';
        // The report counts the points, so it is written once they have all gone out (archive entries are sequential).
        writeReport(report, texts, {
          username: snapshot.user.username,
          exportedAt,
          createdAt: snapshot.user.created_at,
          lastLoginAt: snapshot.user.last_login_at,
          privacyMode: snapshot.user.privacy_mode,
          roles: snapshot.data.roles as string[],
          twoFactor: snapshot.data.twoFactorAuth as { enabled: boolean; backupCodesRemaining: number },
          counts: {
            platformAccounts: (snapshot.data.platformAccounts as unknown[]).length,
            sessions: (snapshot.data.sessions as unknown[]).length,
            apiKeys: (snapshot.data.apiKeys as unknown[]).length,
            integrations: (snapshot.data.integrations as unknown[]).length,
            devices: snapshot.devices.length,
            gpsPoints: points.sent,
            ownedDevices: snapshot.ownedDeviceIds.length,
            ownedDevicePoints: points.ofOwnedDevices,
            exports: snapshot.earlierExports,
          },
        });
      }

      const report = new PassThrough();
      const archive = new ZipArchive({ zlib: { level: 6 } });
      let bytes = 0;
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          done(null, chunk);
        },
        flush: (done) => {
          const gpsPoints = points.sent + points.ofOwnedDevices;
          record(request, userId, { exportedAt, locale, bytes, gpsPoints }).then(() => done(), done);
        },
      });
      archive.on('warning', (err: Error) => deps.log.warn({ err }, 'export archive warning'));
      archive.on('error', (err: Error) => counted.destroy(err));
      // A client that goes away stops the reading of points too.
      counted.on('close', () => {
        if (!counted.writableFinished) archive.abort();
      });
      archive.pipe(counted);
      archive.append(Readable.from(dataJson()), { name: 'data.json', date: exportedAt });
      archive.append(Readable.from(sources.tracksGpx(userId, `${snapshot.user.username}: GPS points sent`)), {
        name: 'tracks.gpx',
        date: exportedAt,
      });
      archive.append(report, { name: 'report.pdf', date: exportedAt });
      archive.append(texts.readme(exportedAt.toISOString().replace('T', ' ').slice(0, 16)), {
        name: 'README.txt',
        date: exportedAt,
      });
      void archive.finalize().catch((err: unknown) => counted.destroy(err as Error));
      // Named by the day in the user's time zone (their preferences), as they would name it.
      const day = dayIn(exportedAt, snapshot.timeZone);
      return { fileName: `service-data-export-${day}.zip`, stream: counted };
    },
  };

  /** The export log row and the data_exported event, together. */
  async function record(
    request: FastifyRequest,
    userId: string,
    done: { exportedAt: Date; locale: string; bytes: number; gpsPoints: number },
  ) {
    await deps.db.transaction().execute(async (trx) => {
      const log = await repo.insert(
        {
          user_id: userId,
          exported_at: done.exportedAt,
          ip_address: request.ip,
          user_agent: request.headers['user-agent'] ?? null,
          file_size_bytes: done.bytes,
          locale: done.locale,
        },
        trx,
      );
      await deps.audit.record(
        request,
        {
          eventType: 'data_exported',
          userId,
          actorId: userId,
          resourceType: 'export',
          resourceId: log.id,
          metadata: { format: 'zip', file_size_bytes: done.bytes, gps_points: done.gpsPoints },
        },
        trx,
      );
    });
  }
}

export type ExportService = ReturnType<typeof createExportService>;
