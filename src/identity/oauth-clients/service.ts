import { quoted } from '../../platform/http/errors.js';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import { hashToken, newToken } from '../../platform/auth/tokens.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { DomainEventBus } from '../../platform/events.js';
import { withDates, type Caches } from '../../platform/kv/cache.js';
import { DEVELOPER_ROLE, type AccessService } from '../access/service.js';
import type { UsersService } from '../users/service.js';
import { isUuid } from '../../platform/http/schemas.js';
import { OAuthClientErrors } from './errors.js';
import { createOAuthClientsRepo, type ClientChanges, type ClientWithSecret } from './repo.js';
import type { CreateClientInput, UpdateClientInput } from './schemas.js';

export const CLIENT_SECRET_PREFIX = 'wgcs_';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  audit: AuditWriter;
  users: Pick<UsersService, 'exists'>;
  access: Pick<AccessService, 'userHoldsRole'>;
  events: Pick<DomainEventBus, 'emit'>;
  caches: Pick<Caches, 'define'>;
}

/** Every node forgets a changed client at once; the expiries only bound what a lost message could leave behind. */
const CLIENT_CACHE = {
  sharedTtlSecs: 300,
  localTtlMs: 15_000,
  decode: withDates<ClientWithSecret>('created_at', 'updated_at'),
};

/** RFC 6749 3.1.2 and OAuth 2.1: absolute, no fragment; https, or http only back to this machine (RFC 8252 7.3). */
export function checkedRedirectUri(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw OAuthClientErrors.invalid_redirect_uri(`redirect_uris: "${quoted(value)}" is not an absolute URL`);
  }
  if (value.includes('#'))
    throw OAuthClientErrors.invalid_redirect_uri(`redirect_uris: "${quoted(value)}" has a fragment`);
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  if (!secure)
    throw OAuthClientErrors.invalid_redirect_uri(
      `redirect_uris: "${quoted(value)}" must use https (http only on a loopback address)`,
    );
  return value;
}

/**
 * OAuth client applications: registered by their owner (or a super admin), matched exactly by redirect
 * URI, authenticated by a secret shown once and stored as its SHA-256 hash.
 */
export function createOAuthClientsService(deps: Deps) {
  const repo = createOAuthClientsRepo(deps.db, deps.caches.define('oauth_clients', CLIENT_CACHE));

  /** A client the caller owns, or any client for a super admin; others are not found (no id probing). */
  async function visible(caller: Caller, id: string) {
    const client = await repo.get(id);
    if (!client || !(caller.isSuperAdmin || (caller.userId !== null && client.owner_user_id === caller.userId)))
      throw OAuthClientErrors.not_found();
    return client;
  }

  /** A client whose secret the caller may replace: of a first-party one, only a super admin. */
  async function changeable(caller: Caller, id: string) {
    const client = await visible(caller, id);
    if (client.is_first_party && !caller.isSuperAdmin) throw OAuthClientErrors.first_party_locked();
    return client;
  }

  /**
   * A client the caller may update or delete: never a first-party one, whoever asks (the spec: "clients
   * already first-party cannot be modified"). Its secret can still be replaced, so a leak is not for good.
   */
  async function modifiable(caller: Caller, id: string) {
    const client = await visible(caller, id);
    if (client.is_first_party) throw OAuthClientErrors.first_party_immutable();
    return client;
  }

  async function checkedOwner(caller: Caller, userId: string): Promise<string> {
    if (!caller.isSuperAdmin && !caller.isSystem) throw OAuthClientErrors.owner_super_admin_only();
    if (!(await deps.users.exists(userId))) throw OAuthClientErrors.unknown_owner();
    if (!(await deps.access.userHoldsRole(userId, DEVELOPER_ROLE))) throw OAuthClientErrors.owner_not_developer();
    return userId;
  }

  async function checkedChanges(caller: Caller, input: UpdateClientInput): Promise<ClientChanges> {
    if (input.is_first_party !== undefined && !caller.isSuperAdmin && !caller.isSystem)
      throw OAuthClientErrors.first_party_forbidden();
    const changes: ClientChanges = {};
    for (const field of [
      'name',
      'description',
      'logo_url',
      'homepage_url',
      'privacy_policy_url',
      'terms_of_service_url',
      'is_active',
      'is_first_party',
    ] as const) {
      if (input[field] !== undefined) (changes as Record<string, unknown>)[field] = input[field];
    }
    if (input.redirect_uris) changes.redirect_uris = [...new Set(input.redirect_uris.map(checkedRedirectUri))];
    if (input.allowed_scopes) changes.allowed_scopes = [...new Set(input.allowed_scopes)];
    if (input.owner_user_id !== undefined)
      changes.owner_user_id = await checkedOwner(caller, input.owner_user_id.toLowerCase());
    return changes;
  }

  return {
    listMine: (caller: Caller) => (caller.userId ? repo.list(caller.userId) : Promise.resolve([])),
    listAll: () => repo.list(),
    listOfOwner: (userId: string) => repo.list(userId),

    /**
     * An active client as the OAuth provider registers it (RFC 7591 metadata). `client_secret` is the
     * secret's hash: the provider compares the hash of what a client presents (see oauth/provider.ts).
     */
    async providerMetadataOf(id: string) {
      const client = isUuid(id) ? await repo.withSecret(id.toLowerCase()) : undefined;
      if (!client?.is_active) return undefined;
      const confidential = client.client_type === 'confidential';
      return {
        client_id: client.id,
        ...(confidential ? { client_secret: client.secret_hash! } : {}),
        client_name: client.name,
        redirect_uris: client.redirect_uris,
        response_types: ['code'],
        grant_types: confidential
          ? ['authorization_code', 'refresh_token', 'client_credentials']
          : ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
        scope: client.allowed_scopes.join(' '),
      };
    },
    get: visible,

    /** An active client as the consent page and the provider's policies see it, or undefined. */
    async activeClient(id: string) {
      const client = isUuid(id) ? await repo.get(id.toLowerCase()) : undefined;
      return client?.is_active ? client : undefined;
    },

    async create(request: FastifyRequest, caller: Caller, input: CreateClientInput) {
      const changes = await checkedChanges(caller, input);
      const owner = changes.owner_user_id ?? caller.userId;
      if (!owner) throw OAuthClientErrors.owner_required();
      const clientType = input.client_type ?? 'confidential';
      const secret = clientType === 'confidential' ? newToken(CLIENT_SECRET_PREFIX) : null;
      const client = await deps.db.transaction().execute(async (trx) => {
        const created = await repo.insert(
          {
            ...changes,
            name: input.name,
            redirect_uris: changes.redirect_uris!,
            client_type: clientType,
            secret_hash: secret && hashToken(secret),
            owner_user_id: owner,
          },
          trx,
        );
        await deps.audit.record(
          request,
          {
            eventType: 'client_created',
            userId: owner,
            actorId: caller.userId,
            resourceType: 'oauth_client',
            resourceId: created.id,
            metadata: {
              name: created.name,
              client_type: clientType,
              is_first_party: created.is_first_party,
              redirect_uris: created.redirect_uris,
            },
          },
          trx,
        );
        return created;
      });
      return {
        client: { id: client.id, name: client.name, client_type: client.client_type, is_active: client.is_active },
        client_secret: secret,
      };
    },

    async update(request: FastifyRequest, caller: Caller, id: string, input: UpdateClientInput) {
      const current = await modifiable(caller, id);
      const changes = await checkedChanges(caller, input);
      const updated = await deps.db.transaction().execute(async (trx) => {
        if (!(await repo.lock(id, trx))) throw OAuthClientErrors.not_found();
        const changed = await repo.update(id, changes, deps.clock.now(), trx);
        await deps.audit.record(
          request,
          {
            eventType: 'client_updated',
            userId: changed.owner_user_id,
            actorId: caller.userId,
            resourceType: 'oauth_client',
            resourceId: id,
            metadata: { fields: Object.keys(changes) },
          },
          trx,
        );
        return changed;
      });
      // The id as stored (the path may spell it in upper case; tokens record it in lower case).
      if (changes.is_active === false || changes.allowed_scopes)
        await deps.events.emit('oauth_client.restricted', { clientId: current.id });
      return updated;
    },

    /** A new secret, shown once; the old one stops working as this commits. */
    async regenerateSecret(request: FastifyRequest, caller: Caller, id: string) {
      const client = await changeable(caller, id);
      if (client.client_type === 'public') throw OAuthClientErrors.public_has_no_secret();
      const secret = newToken(CLIENT_SECRET_PREFIX);
      await deps.db.transaction().execute(async (trx) => {
        await repo.update(id, { secret_hash: hashToken(secret) }, deps.clock.now(), trx);
        await deps.audit.record(
          request,
          {
            eventType: 'client_secret_regenerated',
            userId: client.owner_user_id,
            actorId: caller.userId,
            resourceType: 'oauth_client',
            resourceId: id,
          },
          trx,
        );
      });
      return {
        client_id: id,
        client_secret: secret,
        message: 'Client secret regenerated. Store it now: it is not shown again.',
      };
    },

    /** In the transaction that purges a user: the clients they own go with them (a cascade), so every node forgets them. */
    async forgetOwnedBy(userId: string, trx: Kysely<Schema>): Promise<number> {
      const ids = await repo.ownedBy(userId, trx);
      await repo.forget(ids);
      return ids.length;
    },

    async remove(request: FastifyRequest, caller: Caller, id: string): Promise<void> {
      const client = await modifiable(caller, id);
      await deps.db.transaction().execute(async (trx) => {
        await repo.delete(id, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'client_deleted',
            userId: client.owner_user_id,
            actorId: caller.userId,
            resourceType: 'oauth_client',
            resourceId: id,
            metadata: { name: client.name },
          },
          trx,
        );
      });
      await deps.events.emit('oauth_client.restricted', { clientId: client.id });
    },
  };
}

export type OAuthClientsService = ReturnType<typeof createOAuthClientsService>;
