import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditEventType, AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { Schema } from '../../platform/db/schema/index.js';

import { createLoginProvidersRepo, type PlatformRow, type PlatformSetting } from './repo.js';
import { PlatformErrors } from './errors.js';
import type { SettingsBody } from './schemas.js';

/** Slug of the built-in email-and-password platform. */
export const EMAIL_PLATFORM = 'email';

export type Platform = PlatformRow;
/** The body of PATCH /v1/platforms/{id_or_slug}/settings. */
export type PlatformSettings = Static<typeof SettingsBody>;

/** Audit event written once per changed platform setting (metadata: platform, setting, old_value, new_value). */
export const PLATFORM_SETTING_CHANGED = 'platform_setting_changed' satisfies AuditEventType;
const SETTINGS: readonly PlatformSetting[] = ['enabled', 'two_factor_required', 'registration_enabled'];

interface Deps {
  db: Kysely<Schema>;
  audit: AuditWriter;
}

/** Login providers (the email platform and OAuth providers) and their switches; their table and routes keep the name `platforms`. */
export function createLoginProvidersService(deps: Deps) {
  const repo = createLoginProvidersRepo(deps.db);

  async function get(idOrSlug: string): Promise<Platform> {
    const platform = await repo.find(idOrSlug);
    if (!platform) throw PlatformErrors.not_found();
    return platform;
  }

  /**
   * Applies the requested settings in one transaction and writes one audit event per value that
   * actually changed; returns the platform and the names of the changed settings.
   */
  async function change(request: FastifyRequest, caller: Caller, idOrSlug: string, requested: PlatformSettings) {
    const { id } = await get(idOrSlug);
    return deps.db.transaction().execute(async (trx) => {
      const before = await repo.findForUpdate(id, trx);
      const changed = SETTINGS.filter(
        (setting) => requested[setting] !== undefined && requested[setting] !== before[setting],
      );
      if (changed.length === 0) return { platform: before, changed };
      const platform = await repo.update(id, Object.fromEntries(changed.map((s) => [s, requested[s]])), trx);
      for (const setting of changed) {
        await deps.audit.record(
          request,
          {
            eventType: PLATFORM_SETTING_CHANGED,
            userId: caller.userId,
            actorId: caller.userId,
            resourceType: 'platform',
            resourceId: platform.id,
            description: `${setting} of platform ${platform.slug} set to ${String(platform[setting])}`,
            metadata: { platform: platform.slug, setting, old_value: before[setting], new_value: platform[setting] },
          },
          trx,
        );
      }
      return { platform, changed };
    });
  }

  return {
    list: () => repo.list(),
    /** Start-up (OAUTH_PLATFORMS): the configured login providers exist; new ones start disabled. */
    ensureOAuthPlatforms: (platforms: { slug: string; name: string }[]) => repo.addMissing(platforms),
    listEnabled: () => repo.list(true),
    get,

    /**
     * The platform with this id or slug, or undefined (for other modules; never throws). Pass the
     * transaction when calling inside one (the embedded database has a single connection).
     */
    find: (idOrSlug: string, executor?: Kysely<Schema>) => repo.find(idOrSlug, executor),

    /** New logins through the platform are allowed. */
    async isEnabled(slug: string): Promise<boolean> {
      return (await repo.find(slug))?.enabled === true;
    },

    /** New users may sign up through the platform: it is enabled and its registration switch is on. */
    async registrationOpen(slug: string): Promise<boolean> {
      const platform = await repo.find(slug);
      return platform !== undefined && platform.enabled && platform.registration_enabled;
    },

    /** The platform's display name (e.g. "Email"); the slug itself when there is no such platform. */
    async displayName(slug: string): Promise<string> {
      return (await repo.find(slug))?.name ?? slug;
    },

    async setEnabled(request: FastifyRequest, caller: Caller, idOrSlug: string, enabled: boolean): Promise<Platform> {
      return (await change(request, caller, idOrSlug, { enabled })).platform;
    },

    async updateSettings(request: FastifyRequest, caller: Caller, idOrSlug: string, requested: PlatformSettings) {
      const asked = SETTINGS.some((setting) => requested[setting] !== undefined);
      if (!asked) return { success: true, message: 'No changes requested', platform: await get(idOrSlug) };
      const { platform, changed } = await change(request, caller, idOrSlug, requested);
      const message = changed.length
        ? `Platform settings updated: ${changed.join(', ')}`
        : 'Platform settings already as requested';
      return { success: true, message, platform };
    },
  };
}

export type LoginProvidersService = ReturnType<typeof createLoginProvidersService>;
