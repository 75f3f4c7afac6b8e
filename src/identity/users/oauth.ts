import type { Clock } from '../../platform/clock.js';
import { quoted } from '../../platform/http/errors.js';
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditWriter } from '../../platform/audit.js';
import type { Schema } from '../../platform/db/schema/index.js';

import { DEFAULT_USER_ROLE, type AccessService } from '../access/service.js';
import type { LoginProvidersService } from '../login-providers/service.js';
import type { UsersRepo } from './repo.js';
import { OauthSignInErrors, UserErrors } from './errors.js';
import type { OAuthSignInBody } from './schemas.js';

export type OAuthSignInInput = Static<typeof OAuthSignInBody>;

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  repo: UsersRepo;
  audit: AuditWriter;
  access: Pick<AccessService, 'grantRoleDirectly'>;
  loginProviders: Pick<LoginProvidersService, 'find'>;
  /** REGISTRATION_ENABLED: the global switch covers sign-ups through OAuth too. */
  registrationEnabled: boolean;
}

const USERNAME_MAX = 30;

/**
 * `Jürgen Müller-Lüdenscheidt` becomes `jurgen_muller_ludenscheidt`: lower case, accents dropped,
 * every run of other characters one underscore, cut to 30; names too short get a `_user` tail.
 */
export function usernameBase(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, USERNAME_MAX);
  if (base.length >= 3) return base;
  return base ? `${base}_user` : 'user';
}

/**
 * Social sign-in for the first-party apps (system key): creates or updates the account of a
 * provider identity. A new identity whose email matches an existing user joins that user;
 * otherwise it becomes a new user with role_user. The provider vouches for the email here,
 * which is why only the system key may call this.
 */
export function createOAuthSignIn(deps: Deps) {
  const { repo } = deps;

  /** The name itself when free, else the name with `_2`, `_3`, … and finally a random tail. */
  async function freeUsername(name: string, trx: Kysely<Schema>): Promise<string> {
    const base = usernameBase(name);
    if (!(await repo.usernameTaken(base, trx))) return base;
    for (let n = 2; n <= 20; n++) {
      const suffix = `_${n}`;
      const candidate = base.slice(0, USERNAME_MAX - suffix.length) + suffix;
      if (!(await repo.usernameTaken(candidate, trx))) return candidate;
    }
    const suffix = `_${randomBytes(4).toString('hex')}`;
    return base.slice(0, USERNAME_MAX - suffix.length) + suffix;
  }

  async function checkedPlatform(slug: string, trx: Kysely<Schema>) {
    const platform = await deps.loginProviders.find(slug, trx);
    if (!platform?.is_oauth)
      throw OauthSignInErrors.unknown_provider(`oauthProvider '${quoted(slug)}' is not a known OAuth provider`);
    if (!platform.enabled) throw OauthSignInErrors.provider_disabled(`Sign-in through '${quoted(slug)}' is disabled`);
    return platform;
  }

  return async function signIn(
    request: FastifyRequest,
    input: { email: string | null; name: string; provider: string; providerId: string; image: string | null },
  ) {
    return deps.db.transaction().execute(async (trx) => {
      const platform = await checkedPlatform(input.provider, trx);
      const now = deps.clock.now();
      const existing = await repo.findAccountOfIdentity(platform.id, input.providerId, trx);
      if (existing) {
        if (existing.deleted_at) throw UserErrors.deleted();
        // Deleted between the lookup and the lock (a concurrent DELETE): the same answer as deleted before.
        const user = await repo.lockById(existing.user_id, trx);
        if (!user) throw UserErrors.deleted();
        const avatar = user.avatars_enabled ? input.image : null;
        await repo.updateAccountProfile(
          existing.id,
          { username: input.name, email: input.email, avatar_url: avatar },
          trx,
        );
        await repo.update(user.id, { last_login_at: now }, trx);
        const metadata = { provider: platform.slug };
        await deps.audit.record(
          request,
          {
            eventType: 'account_reconnected',
            userId: user.id,
            resourceType: 'platform_account',
            resourceId: existing.id,
            metadata,
          },
          trx,
        );
        return repo.flatUserOfAccount(existing.id, trx);
      }

      // The interface links by email across platforms, trusting the address the provider reports
      // (only the system key, i.e. the sign-in app that did the OAuth exchange, may call this).
      const owner = input.email ? (await repo.accountsWithEmail(input.email, trx))[0] : undefined;
      if (!owner && !(deps.registrationEnabled && platform.registration_enabled))
        throw OauthSignInErrors.registration_disabled(`Registration through '${platform.slug}' is disabled`);
      const user = owner
        ? await repo.lockById(owner.user_id, trx)
        : await repo.insertUser({ username: await freeUsername(input.name, trx) }, trx);
      if (!user) throw UserErrors.deleted();
      const account = await repo.insertAccount(
        {
          user_id: user.id,
          platform_id: platform.id,
          platform_user_id: input.providerId,
          username: input.name,
          email: input.email,
          avatar_url: user.avatars_enabled ? input.image : null,
        },
        trx,
      );
      if (owner) {
        await repo.update(user.id, { last_login_at: now }, trx);
        const metadata = { provider: platform.slug, matched_by: 'email' };
        await deps.audit.record(
          request,
          {
            eventType: 'account_linked',
            userId: user.id,
            resourceType: 'platform_account',
            resourceId: account.id,
            metadata,
          },
          trx,
        );
      } else {
        await repo.update(user.id, { primary_platform_account_id: account.id, last_login_at: now }, trx);
        await deps.access.grantRoleDirectly(user.id, DEFAULT_USER_ROLE, trx);
        await deps.audit.record(
          request,
          {
            eventType: 'user_created',
            userId: user.id,
            resourceType: 'user',
            resourceId: user.id,
            metadata: { provider: platform.slug },
          },
          trx,
        );
      }
      return repo.flatUserOfAccount(account.id, trx);
    });
  };
}
