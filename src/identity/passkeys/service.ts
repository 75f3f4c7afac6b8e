import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { FastifyRequest } from 'fastify';
import { signInOf, type DomainEventBus } from '../../platform/events.js';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import { bannedError } from '../bans/errors.js';
import type { BansService } from '../bans/service.js';
import { SessionErrors } from '../sessions/errors.js';
import type { Reauthentication } from '../sign-in/index.js';
import type { AuthResult, SessionStore } from '../sessions/service.js';
import type { TwoFactorService } from '../two-factor/service.js';
import type { UsersService } from '../users/service.js';
import { PasskeyErrors } from './errors.js';
import { createPasskeysRepo } from './repo.js';
import type {
  PasskeySecondFactorBody,
  PasskeySignInBody,
  PasskeySignInOptionsBody,
  RegisterPasskeyBody,
} from './schemas.js';

/** How long a ceremony's challenge may be answered (the browser's own timeout is 60 s). */
export const PASSKEY_CHALLENGE_TTL_SECS = 300;
/** The provider a passkey sign-in's session records. */
export const PASSKEY_PROVIDER = 'passkey';

export interface RelyingParty {
  /** The host of PUBLIC_URL: passkeys are bound to it. */
  id: string;
  name: string;
  /** Origins whose pages may run the ceremonies: PUBLIC_URL's and CORS_ORIGINS'. */
  origins: string[];
}

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  kv: Pick<KeyValueStore, 'get' | 'set' | 'setIfAbsent' | 'delete'>;
  audit: AuditWriter;
  rp: RelyingParty;
  users: Pick<UsersService, 'findById' | 'findEmailAccountOfUser' | 'findPasswordLogin' | 'accountsOf' | 'recordLogin'>;
  sessions: Pick<SessionStore, 'issue'>;
  bans: Pick<BansService, 'inForce'>;
  /** A passkey that did not verify the user is one factor: with 2FA on, a code follows, as after a password. */
  twoFactor: Pick<TwoFactorService, 'startLoginChallenge' | 'userOfChallenge' | 'completeWithPasskey'>;
  /** Sign-ins and changes the user is told of by mail (the security notices react). */
  events: Pick<DomainEventBus, 'emit'>;
  /** A session shows who it is again before it adds a passkey: a stolen session alone must not get a way back in. */
  reauthentication: Pick<Reauthentication, 'confirm'>;
}

type Ceremony = 'register' | 'sign_in' | 'second_factor';

/**
 * Passkeys (WebAuthn) with @simplewebauthn/server: registration for the signed-in user, and sign-in with
 * discoverable credentials (no username typed) answering as POST /v1/auth/login does. Challenges live in
 * the key-value store, single use on every node, and expire by the clock.
 */
export function createPasskeysService(deps: Deps) {
  const repo = createPasskeysRepo(deps.db);

  const keyOf = (ceremony: Ceremony, challenge: string) => `passkey:challenge:${ceremony}:${challenge}`;

  async function issueChallenge(ceremony: Ceremony, challenge: string, userId: string | null): Promise<void> {
    const expiresAt = deps.clock.nowMs() + PASSKEY_CHALLENGE_TTL_SECS * 1000;
    await deps.kv.set(keyOf(ceremony, challenge), JSON.stringify({ userId, expiresAt }), PASSKEY_CHALLENGE_TTL_SECS);
  }

  /** Request options naming the passkeys that may answer (none: any the browser holds), their challenge issued for the ceremony. */
  async function authenticationOptions(
    ceremony: Exclude<Ceremony, 'register'>,
    allow: { credential_id: string; transports: string[] }[],
    userId: string | null,
  ) {
    const options = await generateAuthenticationOptions({
      rpID: deps.rp.id,
      userVerification: 'preferred',
      allowCredentials: allow.map((row) => ({ id: row.credential_id, transports: row.transports as never })),
    });
    await issueChallenge(ceremony, options.challenge, userId);
    return options;
  }

  async function takeChallenge(ceremony: Ceremony, challenge: string): Promise<{ userId: string | null } | undefined> {
    const key = keyOf(ceremony, challenge);
    const stored = await deps.kv.get(key);
    if (!stored || !(await deps.kv.setIfAbsent(`${key}:taken`, '1', PASSKEY_CHALLENGE_TTL_SECS))) return undefined;
    await deps.kv.delete(key);
    const { userId, expiresAt } = JSON.parse(stored) as { userId: string | null; expiresAt: number };
    return expiresAt > deps.clock.nowMs() ? { userId } : undefined;
  }

  function sessionUserOf(caller: Caller): string {
    if (caller.kind !== 'session' || !caller.userId) throw SessionErrors.session_required();
    return caller.userId;
  }

  /** A password, or a sign-in account of another platform: the account stays reachable without passkeys. */
  async function hasOtherWayIn(userId: string, executor: Kysely<Schema>): Promise<boolean> {
    const password = (await deps.users.findEmailAccountOfUser(userId, executor))?.password_hash;
    if (password) return true;
    return (await deps.users.accountsOf(userId, executor)).some((account) => account.platform !== 'email');
  }

  async function refuseSignIn(request: FastifyRequest, userId: string | null, reason: string): Promise<never> {
    await deps.audit.record(request, {
      eventType: 'login_failed',
      userId,
      resourceType: 'session',
      status: 'failure',
      errorMessage: reason,
      metadata: { provider: PASSKEY_PROVIDER },
    });
    throw PasskeyErrors.sign_in_failed();
  }

  /**
   * Checks an authentication response against a challenge of `ceremony` (for the second factor, one issued
   * to `userId`, whose passkey it must be) and moves the passkey's counter; 401 with a `login_failed` event
   * for anything that does not verify, and for a counter that went back (a clone) `passkey_clone_suspected`.
   */
  async function verifyAssertion(
    request: FastifyRequest,
    body: unknown,
    ceremony: 'sign_in' | 'second_factor',
    userId?: string,
  ) {
    const response = body as AuthenticationResponseJSON;
    const passkey = await repo.findByCredentialId(response.id);
    if (!passkey) return refuseSignIn(request, userId ?? null, 'unknown passkey');
    if (userId && passkey.user_id !== userId) return refuseSignIn(request, userId, 'passkey of another user');
    const userHandle = response.response?.userHandle;
    if (userHandle && Buffer.from(userHandle, 'base64url').toString() !== passkey.user_id)
      return refuseSignIn(request, passkey.user_id, 'user handle does not match');
    const stored = Number(passkey.counter);
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: async (challenge) => {
          const taken = await takeChallenge(ceremony, challenge);
          return Boolean(taken) && taken!.userId === (userId ?? null);
        },
        expectedOrigin: deps.rp.origins,
        expectedRPID: deps.rp.id,
        // The counter is compared below, after the signature: only a genuine assertion can report a clone.
        credential: {
          id: passkey.credential_id,
          publicKey: Buffer.from(passkey.public_key, 'base64url'),
          counter: 0,
          transports: passkey.transports,
        },
        requireUserVerification: false,
      });
    } catch (err) {
      return refuseSignIn(request, passkey.user_id, `passkey not verified: ${(err as Error).message}`);
    }
    if (!verified.verified) return refuseSignIn(request, passkey.user_id, 'passkey not verified');
    const { newCounter, userVerified } = verified.authenticationInfo;

    const advanced = await deps.db
      .transaction()
      .execute((trx) => repo.advance(passkey.id, newCounter, deps.clock.now(), trx));
    if (!advanced) {
      await deps.audit.record(request, {
        eventType: 'passkey_clone_suspected',
        userId: passkey.user_id,
        resourceType: 'passkey',
        resourceId: passkey.id,
        status: 'failure',
        errorMessage: `signature counter ${newCounter} is not above the stored ${stored}`,
        metadata: { provider: PASSKEY_PROVIDER, counter: newCounter, stored_counter: stored },
      });
      throw PasskeyErrors.cloned();
    }
    return { passkey, userVerified };
  }

  return {
    /** Passkeys of the user that verified the user when registered: each counts as two factors (the two-factor requirement). */
    verifyingCountOf: (userId: string) => repo.countVerifyingOfUser(userId),

    /**
     * POST /v1/auth/2fa/passkey/options: after a password, when the answer was `requires_2fa`, options to
     * answer with a passkey instead of a code: the temporary token's user's passkeys (400 when they have none).
     */
    async secondFactorOptions(tempToken: string) {
      const userId = await deps.twoFactor.userOfChallenge(tempToken);
      const allow = await repo.credentialsOfUser(userId);
      if (allow.length === 0) throw PasskeyErrors.none_registered();
      return authenticationOptions('second_factor', allow, userId);
    },

    /** POST /v1/auth/2fa/passkey: the passkey is the second factor; the temporary token gives its session (as /v1/auth/2fa/verify). */
    async verifySecondFactor(
      request: FastifyRequest,
      input: Static<typeof PasskeySecondFactorBody>,
    ): Promise<AuthResult> {
      const userId = await deps.twoFactor.userOfChallenge(input.temp_token);
      await verifyAssertion(request, input.response, 'second_factor', userId);
      return deps.twoFactor.completeWithPasskey(request, input.temp_token, userId);
    },

    /** A new password that asked for it (`user.passkeys_and_keys_removing`): every passkey of the user goes; how many. */
    removeAllOfUser: (userId: string, trx: Kysely<Schema>) => repo.deleteAllOfUser(userId, trx),

    /** For the personal data export: the user's passkeys as their list shows them (never a key). */
    listOfUser: (userId: string) => repo.listOfUser(userId),

    async list(caller: Caller) {
      return repo.listOfUser(sessionUserOf(caller));
    },

    /**
     * Creation options for navigator.credentials.create: a resident key, user verification preferred. Only a
     * session that showed who it is again (a recent sign-in, or the current password) gets a challenge, so a
     * registration, which answers one, needs nothing more.
     */
    async registrationOptions(request: FastifyRequest, caller: Caller, currentPassword?: string) {
      const userId = sessionUserOf(caller);
      await deps.reauthentication.confirm(request, caller, currentPassword, 'passkey_add');
      const user = await deps.users.findById(userId);
      if (!user) throw SessionErrors.session_required();
      const options = await generateRegistrationOptions({
        rpName: deps.rp.name,
        rpID: deps.rp.id,
        userName: user.username,
        userDisplayName: user.username,
        userID: new TextEncoder().encode(userId),
        attestationType: 'none',
        excludeCredentials: (await repo.credentialsOfUser(userId)).map((row) => ({
          id: row.credential_id,
          transports: row.transports,
        })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      });
      await issueChallenge('register', options.challenge, userId);
      return options;
    },

    async register(request: FastifyRequest, caller: Caller, input: Static<typeof RegisterPasskeyBody>) {
      const userId = sessionUserOf(caller);
      let verified;
      try {
        verified = await verifyRegistrationResponse({
          response: input.response as unknown as RegistrationResponseJSON,
          expectedChallenge: async (challenge) => (await takeChallenge('register', challenge))?.userId === userId,
          expectedOrigin: deps.rp.origins,
          expectedRPID: deps.rp.id,
          requireUserVerification: false,
        });
      } catch (err) {
        throw PasskeyErrors.invalid_response(`The passkey response could not be verified: ${(err as Error).message}`);
      }
      if (!verified.verified) throw PasskeyErrors.invalid_response();
      const { credential, credentialDeviceType, credentialBackedUp, userVerified } = verified.registrationInfo;
      const added = await deps.db.transaction().execute(async (trx) => {
        const created = await repo.insert(
          {
            user_id: userId,
            credential_id: credential.id,
            public_key: Buffer.from(credential.publicKey).toString('base64url'),
            counter: credential.counter,
            transports: credential.transports ?? [],
            device_type: credentialDeviceType,
            backed_up: credentialBackedUp,
            user_verified: userVerified,
            name: input.name ?? `Passkey ${deps.clock.now().toISOString().slice(0, 10)}`,
          },
          trx,
        );
        await deps.audit.record(
          request,
          {
            eventType: 'passkey_added',
            userId,
            actorId: userId,
            resourceType: 'passkey',
            resourceId: created.id,
            metadata: { name: created.name, device_type: credentialDeviceType, user_verified: userVerified },
          },
          trx,
        );
        return created;
      });
      await deps.events.emit('user.security_changed', { userId, kind: 'passkey_added', name: added.name });
      return added;
    },

    async rename(request: FastifyRequest, caller: Caller, id: string, name: string) {
      const userId = sessionUserOf(caller);
      return deps.db.transaction().execute(async (trx) => {
        const renamed = await repo.rename(userId, id, name, trx);
        if (!renamed) throw PasskeyErrors.not_found();
        await deps.audit.record(
          request,
          {
            eventType: 'passkey_renamed',
            userId,
            actorId: userId,
            resourceType: 'passkey',
            resourceId: id,
            metadata: { name },
          },
          trx,
        );
        return renamed;
      });
    },

    /** Refused for the last passkey of an account with no other way in (no password, no other platform). */
    async remove(request: FastifyRequest, caller: Caller, id: string): Promise<void> {
      const userId = sessionUserOf(caller);
      const removed = await deps.db.transaction().execute(async (trx) => {
        const deleted = await repo.delete(userId, id, trx);
        if (!deleted) throw PasskeyErrors.not_found();
        if ((await repo.countOfUser(userId, trx)) === 0 && !(await hasOtherWayIn(userId, trx)))
          throw PasskeyErrors.last_credential();
        await deps.audit.record(
          request,
          {
            eventType: 'passkey_removed',
            userId,
            actorId: userId,
            resourceType: 'passkey',
            resourceId: id,
            metadata: { name: deleted.name },
          },
          trx,
        );
        return deleted;
      });
      await deps.events.emit('user.security_changed', { userId, kind: 'passkey_removed', name: removed.name });
    },

    /**
     * Request options for navigator.credentials.get. Without an identifier (or with one no account has:
     * the answer must not tell), no credentials are listed and the browser offers every passkey it holds
     * for this site (discoverable credentials, conditional UI).
     */
    async signInOptions(input: Static<typeof PasskeySignInOptionsBody>) {
      const identifier = input.identifier?.trim().toLowerCase();
      const user = identifier ? (await deps.users.findPasswordLogin(identifier)).user : undefined;
      const allow = user ? await repo.credentialsOfUser(user.id) : [];
      return authenticationOptions('sign_in', allow, null);
    },

    /** Answers as POST /v1/auth/login: a session, or `requires_2fa` when the passkey did not verify the user and 2FA is on. */
    async signIn(request: FastifyRequest, input: Static<typeof PasskeySignInBody>): Promise<AuthResult> {
      const { passkey, userVerified } = await verifyAssertion(request, input.response, 'sign_in');
      const user = await deps.users.findById(passkey.user_id);
      if (!user || user.deleted_at) return refuseSignIn(request, passkey.user_id, 'user deleted');
      const ban = await deps.bans.inForce(user.id);
      if (ban) {
        await deps.audit.record(request, {
          eventType: 'login_failed',
          userId: user.id,
          resourceType: 'session',
          status: 'failure',
          errorMessage: 'banned',
          metadata: { provider: PASSKEY_PROVIDER, ban_id: ban.id },
        });
        throw bannedError(ban);
      }
      const email = (await deps.users.findEmailAccountOfUser(user.id))?.email ?? '';
      // A passkey that verified the user (PIN, biometrics) is two factors in one: no code follows.
      const tempToken = userVerified ? null : await deps.twoFactor.startLoginChallenge(user.id, PASSKEY_PROVIDER);
      if (tempToken) {
        return {
          user_id: user.id,
          email,
          username: user.username,
          provider: PASSKEY_PROVIDER,
          requires_2fa: true,
          temp_token: tempToken,
          preferred_locale: user.preferred_locale,
        };
      }
      const result = await deps.db.transaction().execute(async (trx) => {
        await deps.users.recordLogin(user.id, trx);
        return deps.sessions.issue(request, { user, email, provider: PASSKEY_PROVIDER, auditEvent: 'login' }, trx);
      });
      await deps.events.emit('user.signed_in', signInOf(request, user.id));
      return result;
    },
  };
}

export type PasskeysService = ReturnType<typeof createPasskeysService>;
