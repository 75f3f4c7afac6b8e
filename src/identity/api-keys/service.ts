import type { FastifyRequest } from 'fastify';
import type { DomainEventBus } from '../../platform/events.js';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditWriter } from '../../platform/audit.js';
import { grants, hasPermission, type Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import { API_KEY_PREFIX, displayPrefix, hashToken, newToken, sameSecret } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';

import { DEVELOPER_ROLE, type AccessService } from '../access/service.js';
import type { Reauthentication } from '../sign-in/index.js';
import type { UsersService } from '../users/service.js';
import { createApiKeysRepo, type ApiKeyChanges } from './repo.js';
import { ApiKeyErrors } from './errors.js';
import { RoleErrors } from '../access/errors.js';
import { CurrentPasswordErrors, ReauthenticationErrors } from '../sign-in/errors.js';
import { SignInErrors } from '../sign-in-throttle/service.js';
import type { CreateApiKeyBody, UpdateApiKeyBody } from './schemas.js';
import type { Clock } from '../../platform/clock.js';

const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/** What creating or updating a key may set (the update body is the create body, all optional, plus is_active). */
export type ApiKeyInput = Static<typeof UpdateApiKeyBody>;

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  access: AccessService;
  users: Pick<UsersService, 'exists'>;
  credentials: Pick<CredentialResolver, 'invalidate'>;
  audit: AuditWriter;
  /** Sign-ins and changes the user is told of by mail (the security notices react). */
  events: Pick<DomainEventBus, 'emit'>;
  /** A session shows who it is again before it gets a key value: a stolen session alone must not leave a key behind. */
  reauthentication: Pick<Reauthentication, 'confirm'>;
}

/** Said when a key is created without scopes, which is easy to do by mistake and then looks like a broken key. */
export const NO_SCOPES_MESSAGE =
  'This key has no scopes: until it gets some (PATCH /v1/api-keys/{id} with scopes, e.g. ["gps:read","gps:write"]) or a role ' +
  '(POST /v1/api-keys/{id}/roles), it can call only routes that need no permission, such as GET /v1/users/me';

/** What making a device's new key (POST /v1/devices/{id}/key) may answer besides the device's own errors. */
export const DEVICE_KEY_ERRORS = [
  ApiKeyErrors.system_key_on_device,
  RoleErrors.scope_beyond_caller,
  ReauthenticationErrors.reauthentication_required,
  CurrentPasswordErrors.wrong_current_password,
  SignInErrors.locked_out,
] as const;

/** The scopes of a device's first key, as the console's Connect a device asks for them. */
const deviceKeyScopes = (caller: Caller) => [hasPermission(caller, 'gps:write') ? 'gps:write' : 'gps:write_own'];

/**
 * API keys: random values shown once and stored as SHA-256 hashes. The rules
 * on who may hand out which scopes, owners and system keys live here.
 */
export function createApiKeysService(deps: Deps) {
  const repo = createApiKeysRepo(deps.db, deps.clock);
  const lastUsedWrites = new Map<string, number>();

  async function visibleKey(caller: Caller, id: string) {
    const key = await repo.get(id);
    if (!key || !(caller.isSuperAdmin || (caller.userId !== null && key.user_id === caller.userId))) {
      throw ApiKeyErrors.not_found();
    }
    return key;
  }

  /**
   * A key the caller may change, regenerate, delete or give roles: visible to them, not a system key
   * (unless they are a super admin), and no wider than the caller, so a narrower sibling key cannot
   * take over, remove or obtain a wider one.
   */
  async function mutableKey(caller: Caller, id: string, action: string) {
    const key = await visibleKey(caller, id);
    if (key.is_system && !caller.isSuperAdmin)
      throw ApiKeyErrors.system_key_super_admin_only(`Only super admins may ${action} system keys`);
    await assertKeyWithin(caller, key);
    return key;
  }

  /**
   * The caller must hold everything the key can do: its scopes, and what its roles give it as far as
   * its owner holds that (a key never exceeds its owner), so a sibling key cannot obtain a key a role widened.
   */
  async function assertKeyWithin(
    caller: Caller,
    key: { id: string; scopes: string[]; is_system: boolean; user_id: string | null },
  ) {
    if (caller.isSuperAdmin) return;
    let fromRoles = (await deps.access.accessOfApiKey(key.id, [])).permissions;
    if (fromRoles.length > 0 && key.user_id && !key.is_system) {
      const owner = await deps.access.accessOfUser(key.user_id);
      if (!owner.isSuperAdmin) fromRoles = fromRoles.filter((permission) => grants(owner.permissions, permission));
    }
    deps.access.assertScopesWithin(caller, [...key.scopes, ...fromRoles]);
  }

  /** user_id: super admins only, and the owner must hold role_developer. */
  async function checkedOwner(caller: Caller, userId: string): Promise<string> {
    if (!caller.isSuperAdmin) throw ApiKeyErrors.owner_super_admin_only();
    if (!(await deps.users.exists(userId))) throw ApiKeyErrors.unknown_owner();
    if (!(await deps.access.userHoldsRole(userId, DEVELOPER_ROLE)))
      throw ApiKeyErrors.owner_not_developer(`The user_id owner must hold ${DEVELOPER_ROLE}`);
    return userId;
  }

  async function checkedChanges(caller: Caller, input: ApiKeyInput): Promise<ApiKeyChanges> {
    if (input.scopes) deps.access.assertScopesWithin(caller, input.scopes);
    if (input.is_system !== undefined && !caller.isSuperAdmin) throw ApiKeyErrors.is_system_super_admin_only();
    const changes: ApiKeyChanges = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description;
    if (input.scopes !== undefined) changes.scopes = [...new Set(input.scopes)];
    if (input.is_active !== undefined) changes.is_active = input.is_active;
    if (input.is_system !== undefined) changes.is_system = input.is_system;
    if (input.expires_at !== undefined) changes.expires_at = futureDate(input.expires_at, deps.clock.now());
    if (input.user_id !== undefined) changes.user_id = await checkedOwner(caller, input.user_id);
    return changes;
  }

  return {
    keyHashesOf: (userId: string) => repo.keyHashesOfOwner(userId),

    /** Credential lookup for the resolver: the caller a key stands for, or null. */
    async lookup(keyHash: string): Promise<Caller | null> {
      const key = await repo.findUsable(keyHash);
      if (!key || !sameSecret(key.key_hash, keyHash)) return null;
      const access = key.is_system
        ? { roles: [], permissions: ['*:*'] }
        : await deps.access.accessOfApiKey(key.id, key.scopes);
      const owner = key.user_id && !key.is_system ? await deps.access.accessOfUser(key.user_id) : null;
      return {
        kind: 'api_key',
        userId: key.user_id,
        apiKeyId: key.id,
        sessionId: null,
        permissions: access.permissions,
        roles: access.roles,
        isSystem: key.is_system,
        isSuperAdmin: false,
        provider: null,
        expiresAt: key.expires_at ? key.expires_at.getTime() : null,
        ownerPermissions: owner && !owner.isSuperAdmin ? owner.permissions : null,
      };
    },

    /** Records last_used_at at most once a minute per key and process, off the request path. */
    noteUsed(keyId: string, onError: (err: unknown) => void): void {
      const now = deps.clock.now().getTime();
      if (now - (lastUsedWrites.get(keyId) ?? 0) < LAST_USED_WRITE_INTERVAL_MS) return;
      if (lastUsedWrites.size > 10_000) lastUsedWrites.clear();
      lastUsedWrites.set(keyId, now);
      repo.touch(keyId).catch(onError);
    },

    /** What the devices area needs to decide whether a key may be linked to a device. */
    async linkable(id: string): Promise<{ is_system: boolean; user_id: string | null } | undefined> {
      const key = await repo.get(id);
      return key && { is_system: key.is_system, user_id: key.user_id };
    },

    list: (caller: Caller) =>
      caller.isSuperAdmin ? repo.list() : caller.userId ? repo.list(caller.userId) : Promise.resolve([]),

    get: (caller: Caller, id: string) => visibleKey(caller, id),

    /** The keys a user owns, as their list shows them (never a hash). */
    ofUser: (userId: string) => repo.list(userId),

    async create(caller: Caller, input: Static<typeof CreateApiKeyBody>, request: FastifyRequest) {
      const changes = await checkedChanges(caller, input);
      await deps.reauthentication.confirm(request, caller, input.current_password, 'api_key_create');
      const key = newToken(API_KEY_PREFIX);
      // The key and its audit event commit together: a key is never created without a trace.
      const created = await deps.db.transaction().execute(async (trx) => {
        const inserted = await repo.insert(
          {
            key_hash: hashToken(key),
            key_prefix: displayPrefix(key),
            name: input.name,
            description: changes.description ?? null,
            scopes: changes.scopes ?? [],
            is_system: changes.is_system ?? false,
            user_id: changes.user_id ?? caller.userId,
            expires_at: changes.expires_at ?? null,
          },
          trx,
        );
        await deps.audit.record(
          request,
          {
            eventType: 'api_key_created',
            userId: inserted.user_id,
            actorId: caller.userId,
            resourceType: 'api_key',
            resourceId: inserted.id,
            metadata: { name: inserted.name, scopes: inserted.scopes, is_system: inserted.is_system },
          },
          trx,
        );
        return inserted;
      });
      if (created.user_id)
        await deps.events.emit('user.security_changed', {
          userId: created.user_id,
          kind: 'api_key_created',
          name: created.name,
        });
      return {
        ...created,
        key,
        ...(created.scopes.length === 0 && !created.is_system ? { message: NO_SCOPES_MESSAGE } : {}),
      };
    },

    /**
     * A device's new key (POST /v1/devices/{id}/key), before its transaction. It belongs to the caller, as every key
     * one makes, and is named after the device. Replacing a key of the caller's own it keeps that key's name,
     * description and scopes (not its roles or expiry); else (no key, or another's) it gets what Connect a device
     * asks for: gps:write, or gps:write_own without it. The scopes must be within the caller's permissions, and a
     * session shows who it is again as for POST /v1/api-keys; api_keys:write is not needed (docs/access.md).
     */
    async planDeviceKey(
      request: FastifyRequest,
      caller: Caller,
      device: { name: string; apiKeyId: string | null },
      currentPassword: string | undefined,
    ) {
      const old = device.apiKeyId === null ? undefined : await repo.get(device.apiKeyId);
      if (old?.is_system) throw ApiKeyErrors.system_key_on_device();
      const own = old !== undefined && old.user_id === caller.userId;
      const plan = own
        ? { name: old.name, description: old.description, scopes: old.scopes }
        : { name: `Device: ${device.name}`.slice(0, 100), description: null, scopes: deviceKeyScopes(caller) };
      deps.access.assertScopesWithin(caller, plan.scopes);
      await deps.reauthentication.confirm(request, caller, currentPassword, 'device_key_replace');
      return plan;
    },

    /**
     * In the device's transaction: the planned key is made and `replacing` (the key linked now) deleted, each with
     * its audit event; after the commit every node forgets the old key and the new key's owner is told of it.
     */
    async makeDeviceKey(
      request: FastifyRequest,
      caller: Caller,
      plan: { name: string; description: string | null; scopes: string[] },
      device: { id: string; replacing: string | null },
      trx: Kysely<Schema>,
      onCommit: (task: () => Promise<void>) => void,
    ) {
      const old = device.replacing === null ? undefined : await repo.get(device.replacing, trx);
      if (old?.is_system) throw ApiKeyErrors.system_key_on_device();
      const key = newToken(API_KEY_PREFIX);
      const inserted = await repo.insert(
        {
          key_hash: hashToken(key),
          key_prefix: displayPrefix(key),
          ...plan,
          is_system: false,
          user_id: caller.userId,
          expires_at: null,
        },
        trx,
      );
      const event = { actorId: caller.userId, resourceType: 'api_key' };
      await deps.audit.record(
        request,
        {
          ...event,
          eventType: 'api_key_created',
          userId: inserted.user_id,
          resourceId: inserted.id,
          metadata: { name: inserted.name, scopes: inserted.scopes, is_system: false, device_id: device.id },
        },
        trx,
      );
      if (old) {
        await repo.delete(old.id, trx);
        await deps.audit.record(
          request,
          {
            ...event,
            eventType: 'api_key_revoked',
            userId: old.user_id,
            resourceId: old.id,
            metadata: { name: old.name, device_id: device.id, replaced_by: inserted.id },
          },
          trx,
        );
        onCommit(() => deps.credentials.invalidate([old.key_hash]));
      }
      const owner = inserted.user_id;
      if (owner)
        onCommit(async () => {
          await deps.events.emit('user.security_changed', {
            userId: owner,
            kind: 'api_key_created',
            name: inserted.name,
          });
        });
      return { ...inserted, key };
    },

    async update(caller: Caller, id: string, input: ApiKeyInput) {
      const existing = await mutableKey(caller, id, 'change');
      const updated = await repo.update(id, await checkedChanges(caller, input));
      await deps.credentials.invalidate([existing.key_hash]);
      return updated;
    },

    async regenerate(caller: Caller, id: string, request: FastifyRequest, currentPassword?: string) {
      const existing = await mutableKey(caller, id, 'regenerate');
      await deps.reauthentication.confirm(request, caller, currentPassword, 'api_key_regenerate');
      const key = newToken(API_KEY_PREFIX);
      const updated = await repo.update(id, { key_hash: hashToken(key), key_prefix: displayPrefix(key) });
      await deps.credentials.invalidate([existing.key_hash]);
      return { ...updated, key };
    },

    async remove(caller: Caller, id: string, request: FastifyRequest) {
      const existing = await visibleKey(caller, id);
      if (existing.is_system) throw ApiKeyErrors.system_key_delete();
      await assertKeyWithin(caller, existing);
      await deps.db.transaction().execute(async (trx) => {
        await repo.delete(id, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'api_key_revoked',
            userId: existing.user_id,
            actorId: caller.userId,
            resourceType: 'api_key',
            resourceId: id,
            metadata: { name: existing.name },
          },
          trx,
        );
      });
      await deps.credentials.invalidate([existing.key_hash]);
    },

    async roles(caller: Caller, id: string) {
      await visibleKey(caller, id);
      return deps.access.rolesOfApiKey(id);
    },

    async assignRole(caller: Caller, id: string, roleId: string) {
      const key = await mutableKey(caller, id, 'change');
      await deps.access.assignRoleToApiKey(caller, id, roleId);
      await deps.credentials.invalidate([key.key_hash]);
      return deps.access.rolesOfApiKey(id);
    },

    async removeRole(caller: Caller, id: string, roleId: string) {
      const key = await mutableKey(caller, id, 'change');
      await deps.access.removeRoleFromApiKey(caller, id, roleId);
      await deps.credentials.invalidate([key.key_hash]);
    },

    /**
     * Deactivates the user's keys (system keys excepted) in the caller's transaction; `onCommit` receives
     * the work that drops them from the credential cache once it has committed.
     */
    async revokeAllOfUser(
      userId: string,
      trx: Kysely<Schema>,
      onCommit: (task: () => Promise<void>) => void,
    ): Promise<number> {
      const hashes = await repo.deactivateAllOfUser(userId, trx);
      if (hashes.length) onCommit(() => deps.credentials.invalidate(hashes));
      return hashes.length;
    },

    /** A new password that asked for it (`user.passkeys_and_keys_removing`): the user's keys go, system keys stay; cached ones are dropped after the commit. */
    async removeOwnedBy(
      userId: string,
      trx: Kysely<Schema>,
      onCommit: (task: () => Promise<void>) => void,
    ): Promise<number> {
      const hashes = await repo.deleteOwnedBy(userId, trx);
      if (hashes.length) onCommit(() => deps.credentials.invalidate(hashes));
      return hashes.length;
    },

    /** For the removal of a user: system keys lose their owner, the others are deleted (`user.purging`). */
    async removeAllOfUser(
      userId: string,
      trx: Kysely<Schema>,
      onCommit: (task: () => Promise<void>) => void,
    ): Promise<number> {
      const hashes = await repo.removeAllOfUser(userId, trx);
      if (hashes.length) onCommit(() => deps.credentials.invalidate(hashes));
      return hashes.length;
    },

    /** Start-up: makes sure a system key with exactly this value exists and is usable. */
    async ensureSystemKey(value: string): Promise<'created' | 'exists'> {
      const keyHash = hashToken(value);
      const existing = await repo.findByHash(keyHash);
      if (existing) {
        const expired = existing.expires_at !== null && existing.expires_at.getTime() <= deps.clock.now().getTime();
        if (!existing.is_system || !existing.is_active || expired) {
          await repo.update(existing.id, { is_system: true, is_active: true, expires_at: null });
          await deps.credentials.invalidate([keyHash]);
        }
        return 'exists';
      }
      await repo.insert({
        key_hash: keyHash,
        // The operator chose this secret; show less of it than of a generated key.
        key_prefix: `${value.slice(0, 4)}…`,
        name: 'System key (SYSTEM_API_KEY)',
        description: 'Ensured at start-up from the SYSTEM_API_KEY setting',
        scopes: ['*:*'],
        is_system: true,
        user_id: null,
        expires_at: null,
      });
      return 'created';
    },

    /** CLI: a new system key; the value is returned once. */
    async createSystemKey(name: string): Promise<{ id: string; key: string }> {
      const key = newToken(API_KEY_PREFIX);
      const created = await repo.insert({
        key_hash: hashToken(key),
        key_prefix: displayPrefix(key),
        name,
        description: 'Created with waygate system-key create',
        scopes: ['*:*'],
        is_system: true,
        user_id: null,
        expires_at: null,
      });
      return { id: created.id, key };
    },
  };
}

function futureDate(value: string | null, now: Date): Date | null {
  if (value === null) return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw ApiKeyErrors.invalid_expiry();
  if (date.getTime() <= now.getTime()) throw ApiKeyErrors.expiry_in_past();
  return date;
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
