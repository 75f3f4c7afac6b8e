import type { FastifyRequest } from 'fastify';
import { signInOf, type DomainEventBus } from '../../platform/events.js';
import type { Kysely } from 'kysely';
import type { AuditWriter } from '../../platform/audit.js';
import { hasPermission, type Caller } from '../../platform/auth/caller.js';
import { hashToken, newToken } from '../../platform/auth/tokens.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { AuthErrors } from '../../platform/http/errors.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { lowBackupCodesMail } from '../../platform/mail/messages.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { AccessService } from '../access/service.js';
import type { AuthResult, SessionStore } from '../sessions/service.js';
import type { LoginProvidersService } from '../login-providers/service.js';
import { EMAIL_PLATFORM } from '../login-providers/service.js';
import type { UsersService } from '../users/service.js';
import { BACKUP_CODE_COUNT, hashBackupCode, LOW_BACKUP_CODES, newBackupCode } from './backup-codes.js';
import { createTwoFactorRepo } from './repo.js';
import type { SignInThrottle } from '../sign-in-throttle/service.js';
import { newTotpSecret, totpStepOf, totpUrl } from './totp.js';
import { TwoFactorErrors } from './errors.js';
import { UserErrors } from '../users/errors.js';
import type { Clock } from '../../platform/clock.js';
import type { Static } from 'typebox';
import type { CheckBody, SetupBody, VerifyLoginBody } from './schemas.js';

export const TWO_FACTOR_TOKEN_PREFIX = '2fa_';
export const SETUP_LIFETIME_MS = 10 * 60 * 1000;
export const CHALLENGE_LIFETIME_MS = 10 * 60 * 1000;
export const MANAGE_PERMISSION = 'two_factor:manage';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  secretBox: SecretBox;
  audit: AuditWriter;
  mailer: Mailer;
  users: Pick<UsersService, 'accountsOf' | 'findById' | 'findEmailAccountOfUser' | 'recordLogin' | 'assertMayManage'>;
  access: Pick<AccessService, 'accessOfUser' | 'listRoles'>;
  loginProviders: Pick<LoginProvidersService, 'find' | 'list'>;
  sessions: Pick<SessionStore, 'issue'>;
  /** Wrong sign-in codes count like wrong passwords, per user across all their challenges. */
  signInThrottle: Pick<SignInThrottle, 'ensureAllowed' | 'recordFailure'>;
  /** Sign-ins and changes the user is told of by mail (the security notices react). */
  events: Pick<DomainEventBus, 'emit'>;
}

type CodeKind = 'totp' | 'backup';

/**
 * Wrong sign-in codes count on a count of their own (which a password reset does not clear: a mailbox
 * is not a second factor) and on the account's, which password failures share.
 */
const codeGuessesOf = (userId: string) => ({ identifier: `2fa:${userId}`, userId });

/** TOTP two-factor authentication: setup, backup codes, and the login challenge. */
export function createTwoFactorService(deps: Deps) {
  const repo = createTwoFactorRepo(deps.db, deps.clock);
  // Passkeys are built after this module (they open its challenges): their count comes through `usePasskeys`.
  let verifyingPasskeysOf: (userId: string) => Promise<number> = async () => 0;

  /**
   * The user a /users/me/2fa request acts on: `user_id` (required for the system key) or the caller.
   * Acting on oneself takes a session; anyone else takes two_factor:manage (or super admin).
   */
  async function targetOf(caller: Caller, userId: string | undefined) {
    if (!userId && caller.isSystem) throw TwoFactorErrors.user_id_required_for_system_key();
    const target = userId ?? caller.userId;
    if (!target) throw TwoFactorErrors.user_id_required();
    const self = caller.kind === 'session' && caller.userId === target;
    if (!self && !hasPermission(caller, MANAGE_PERMISSION)) throw AuthErrors.forbidden();
    const user = await deps.users.findById(target);
    if (!user) throw UserErrors.not_found();
    return user;
  }

  /** The user a change of 2FA acts on: as `targetOf`, and another user only if the caller may manage them (never a super admin for a lesser admin). */
  async function managedTargetOf(caller: Caller, userId: string | undefined) {
    const user = await targetOf(caller, userId);
    await deps.users.assertMayManage(caller, user.id);
    return user;
  }

  /** The acting user for audit events, when it is not the user acted on. */
  const actorOf = (caller: Caller, userId: string) =>
    caller.userId === userId ? null : (caller.userId ?? caller.apiKeyId);

  async function enabledState(userId: string, executor: Kysely<Schema> = deps.db) {
    const state = await repo.state(userId, executor);
    return state?.secret_sealed ? { ...state, secret_sealed: state.secret_sealed } : undefined;
  }

  /**
   * Accepts a code for the user's active secret inside `executor`'s transaction: a TOTP code whose
   * time step is later than the last one used, or (when allowed) an unused backup code, which is
   * then used up. Returns what was accepted, or null.
   */
  async function acceptCode(
    userId: string,
    sealedSecret: string,
    code: string,
    allowBackup: boolean,
    executor: Kysely<Schema>,
  ): Promise<CodeKind | null> {
    const trimmed = code.trim();
    if (/^\d{6}$/.test(trimmed)) {
      const step = totpStepOf(deps.secretBox.open(sealedSecret), trimmed, deps.clock.nowMs());
      return step !== null && (await repo.claimStep(userId, step, executor)) ? 'totp' : null;
    }
    if (!allowBackup) return null;
    return (await repo.useBackupCode(userId, hashBackupCode(trimmed), executor)) ? 'backup' : null;
  }

  async function issueBackupCodes(userId: string, trx: Kysely<Schema>): Promise<string[]> {
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
    await repo.replaceBackupCodes(userId, codes.map(hashBackupCode), trx);
    return codes;
  }

  async function platformSlugOf(platformId: string): Promise<string | null> {
    return (await deps.loginProviders.find(platformId))?.slug ?? null;
  }

  /** A login challenge for the user; returns its temporary token (stored only hashed). */
  async function openChallenge(userId: string, provider: string): Promise<string> {
    const token = newToken(TWO_FACTOR_TOKEN_PREFIX);
    await repo.createChallenge({
      token_hash: hashToken(token),
      user_id: userId,
      provider,
      expires_at: new Date(deps.clock.now().getTime() + CHALLENGE_LIFETIME_MS),
    });
    return token;
  }

  /** The open challenge of a temporary token and its user, using one of its attempts; 401 when unknown, used up or expired. */
  async function claimChallenge(request: FastifyRequest, tempToken: string) {
    if (!tempToken.startsWith(TWO_FACTOR_TOKEN_PREFIX)) throw TwoFactorErrors.invalid_challenge();
    // A locked-out user's token keeps its attempts: the lockout is checked before one is used up.
    const open = await repo.openChallenge(hashToken(tempToken));
    if (open) await deps.signInThrottle.ensureAllowed(codeGuessesOf(open.user_id), request.ip);
    const challenge = open && (await repo.claimAttempt(hashToken(tempToken)));
    const user = challenge ? await deps.users.findById(challenge.user_id) : undefined;
    if (!challenge || !user) throw TwoFactorErrors.invalid_challenge();
    return { challenge, user };
  }

  type Challenge = Awaited<ReturnType<typeof claimChallenge>>['challenge'];
  type SignInUser = Awaited<ReturnType<typeof claimChallenge>>['user'];

  /**
   * Closes the challenge with the session when `accept` takes the second factor (in the same transaction);
   * null when it does not. The sign-in is then told to the security notices.
   */
  async function finishChallenge(
    request: FastifyRequest,
    { challenge, user, email }: { challenge: Challenge; user: SignInUser; email: string },
    accept: (trx: Kysely<Schema>) => Promise<CodeKind | 'passkey' | null>,
    options: { withoutSession?: boolean } = {},
  ) {
    const outcome = await deps.db.transaction().execute(async (trx) => {
      const accepted = await accept(trx);
      if (!accepted) return null;
      if (!(await repo.consumeChallenge(challenge.id, trx))) throw TwoFactorErrors.invalid_challenge();
      await deps.users.recordLogin(user.id, trx);
      const result = await deps.sessions.issue(
        request,
        { user, email, provider: challenge.provider, auditEvent: 'login', withoutSession: options.withoutSession },
        trx,
      );
      await deps.audit.record(
        request,
        {
          eventType: '2fa_verified',
          userId: user.id,
          resourceType: 'session',
          resourceId: result.session_id ?? undefined,
          metadata: { provider: challenge.provider, code_type: accepted },
        },
        trx,
      );
      return { result, remaining: accepted === 'backup' ? await repo.unusedBackupCodes(user.id, trx) : null };
    });
    if (outcome) await deps.events.emit('user.signed_in', signInOf(request, user.id));
    return outcome;
  }

  /** Opens a login challenge when the user has 2FA on; returns its temporary token, or null. */
  async function startLoginChallenge(userId: string, provider: string): Promise<string | null> {
    return (await enabledState(userId)) ? openChallenge(userId, provider) : null;
  }

  return {
    startLoginChallenge,

    /** How many passkeys of a user verify the user (PIN, biometrics): each is two factors in one. */
    usePasskeys(count: (userId: string) => Promise<number>): void {
      verifyingPasskeysOf = count;
    },

    /** Whether the user has 2FA on, since when, and how many backup codes are left. */
    async summaryOf(userId: string) {
      const state = await repo.state(userId);
      const enabled = Boolean(state?.enabled_at);
      return {
        enabled,
        enabledAt: state?.enabled_at ?? null,
        backupCodesRemaining: enabled ? await repo.unusedBackupCodes(userId) : 0,
      };
    },

    async status(caller: Caller, userId: string | undefined) {
      const user = await targetOf(caller, userId);
      const state = await repo.state(user.id);
      const enabled = Boolean(state?.enabled_at);
      return {
        enabled,
        enabled_at: state?.enabled_at ?? null,
        backup_codes_remaining: enabled ? await repo.unusedBackupCodes(user.id) : 0,
        platform_slug: state ? await platformSlugOf(state.platform_id) : null,
      };
    },

    /** Required when a role of the user, or a platform the user signs in with, demands it. */
    async requirement(caller: Caller, userId: string | undefined) {
      const user = await targetOf(caller, userId);
      const [passkeys, state] = await Promise.all([verifyingPasskeysOf(user.id), repo.state(user.id)]);
      const enabled = Boolean(state?.enabled_at);
      const ways = { passkeys, satisfied: enabled || passkeys > 0 };
      const held = new Set((await deps.access.accessOfUser(user.id)).roles);
      const role = (await deps.access.listRoles()).find((r) => held.has(r.id) && r.requires_two_factor);
      if (role)
        return { required: true, enabled, reason: `Role '${role.name}' requires two-factor authentication`, ...ways };
      // One read of the platforms (a handful of rows), not one per account of the user.
      const slugs = new Set((await deps.users.accountsOf(user.id)).map((account) => account.platform));
      const platform = (await deps.loginProviders.list()).find((p) => slugs.has(p.slug) && p.two_factor_required);
      if (platform)
        return {
          required: true,
          enabled,
          reason: `Platform '${platform.name}' requires two-factor authentication`,
          ...ways,
        };
      return { required: false, enabled, reason: null, ...ways };
    },

    async setup(caller: Caller, input: Static<typeof SetupBody>) {
      const user = await managedTargetOf(caller, input.user_id);
      const platform = await deps.loginProviders.find(input.platform_id ?? EMAIL_PLATFORM);
      if (!platform) throw TwoFactorErrors.unknown_platform();
      if (!platform.two_factor_supported)
        throw TwoFactorErrors.platform_unsupported(
          `Platform '${platform.slug}' does not support two-factor authentication`,
        );
      if (await enabledState(user.id)) throw TwoFactorErrors.already_enabled();
      const secret = newTotpSecret();
      const expiresAt = new Date(deps.clock.now().getTime() + SETUP_LIFETIME_MS);
      await repo.savePending(user.id, platform.id, deps.secretBox.seal(secret), expiresAt);
      const url = totpUrl(secret, user.username);
      return {
        secret,
        qr_code_url: url,
        qr_code_image: await qrCodeDataUrl(url),
        expires_at: expiresAt,
        platform_slug: platform.slug,
      };
    },

    /** Confirms a setup with its first code: 2FA is on and the backup codes are issued. */
    async enable(request: FastifyRequest, caller: Caller, input: { user_id?: string; code: string }) {
      const user = await managedTargetOf(caller, input.user_id);
      const state = await repo.state(user.id);
      if (state?.enabled_at) throw TwoFactorErrors.already_enabled();
      if (!state?.pending_secret_sealed || !state.pending_expires_at) throw TwoFactorErrors.no_setup_pending();
      if (state.pending_expires_at.getTime() <= deps.clock.now().getTime()) throw TwoFactorErrors.setup_expired();
      const step = totpStepOf(deps.secretBox.open(state.pending_secret_sealed), input.code, deps.clock.nowMs());
      if (step === null) throw TwoFactorErrors.invalid_code();
      const backupCodes = await deps.db.transaction().execute(async (trx) => {
        if (!(await repo.enable(user.id, state.pending_secret_sealed!, step, trx)))
          throw TwoFactorErrors.setup_changed();
        await deps.audit.record(
          request,
          {
            eventType: '2fa_enabled',
            userId: user.id,
            actorId: actorOf(caller, user.id),
            resourceType: 'user',
            resourceId: user.id,
          },
          trx,
        );
        return issueBackupCodes(user.id, trx);
      });
      await deps.events.emit('user.security_changed', { userId: user.id, kind: 'two_factor_enabled' });
      return {
        success: true,
        backup_codes: backupCodes,
        message: 'Two-factor authentication enabled. Keep the backup codes somewhere safe: they are shown only once.',
      };
    },

    async disable(request: FastifyRequest, caller: Caller, input: { user_id?: string; code: string }) {
      const user = await managedTargetOf(caller, input.user_id);
      const state = await enabledState(user.id);
      if (!state) throw TwoFactorErrors.not_enabled();
      await deps.db.transaction().execute(async (trx) => {
        const accepted = await acceptCode(user.id, state.secret_sealed, input.code, true, trx);
        if (!accepted) throw TwoFactorErrors.invalid_code();
        await repo.removeAll(user.id, trx);
        await deps.audit.record(
          request,
          {
            eventType: '2fa_disabled',
            userId: user.id,
            actorId: actorOf(caller, user.id),
            resourceType: 'user',
            resourceId: user.id,
            metadata: { code_type: accepted },
          },
          trx,
        );
      });
      await deps.events.emit('user.security_changed', { userId: user.id, kind: 'two_factor_disabled' });
      return { success: true, message: 'Two-factor authentication disabled' };
    },

    async regenerateBackupCodes(request: FastifyRequest, caller: Caller, input: { user_id?: string; code: string }) {
      const user = await managedTargetOf(caller, input.user_id);
      const state = await enabledState(user.id);
      if (!state) throw TwoFactorErrors.not_enabled();
      const backupCodes = await deps.db.transaction().execute(async (trx) => {
        if (!(await acceptCode(user.id, state.secret_sealed, input.code, false, trx)))
          throw TwoFactorErrors.invalid_code();
        await deps.audit.record(
          request,
          {
            eventType: '2fa_backup_codes_regenerated',
            userId: user.id,
            actorId: actorOf(caller, user.id),
            resourceType: 'user',
            resourceId: user.id,
          },
          trx,
        );
        return issueBackupCodes(user.id, trx);
      });
      return {
        success: true,
        backup_codes: backupCodes,
        message: 'New backup codes generated; the previous ones no longer work',
      };
    },

    /** POST /v1/auth/2fa/check: for a sign-in done elsewhere (OAuth), whether a code is needed. */
    purgeFinishedChallenges: () => repo.deleteFinishedChallenges(),

    /**
     * `waygate secrets reset`: the key of every TOTP secret is lost, so every user's 2FA goes (setups under
     * way too), with its backup codes and open sign-in challenges; each user whose 2FA was on finds a
     * `2fa_disabled` event in their activity and enrols again. Returns how many had it on, and how many setups.
     */
    async forgetAllSecrets(trx: Kysely<Schema>): Promise<{ enrolments: number; setups: number }> {
      const removed = await repo.removeEveryone(trx);
      const enrolled = removed.filter((state) => state.enabled_at !== null);
      for (const { user_id } of enrolled) {
        await deps.audit.record(
          null,
          {
            eventType: '2fa_disabled',
            userId: user_id,
            resourceType: 'user',
            resourceId: user_id,
            metadata: { reason: 'secrets_reset' },
          },
          trx,
        );
      }
      return { enrolments: enrolled.length, setups: removed.length - enrolled.length };
    },

    /** Ends every pending sign-in challenge of the user (their password was reset). */
    closeChallengesOf: (userId: string, trx: Kysely<Schema>) => repo.closeChallengesOf(userId, trx),

    async check(caller: Caller, input: Static<typeof CheckBody>) {
      const user = await deps.users.findById(input.user_id);
      if (!user) throw TwoFactorErrors.unknown_user();
      const state = await enabledState(user.id);
      if (!state) return { requires_2fa: false };
      let provider = await platformSlugOf(state.platform_id);
      if (input.oauth_provider !== undefined) {
        provider = (await deps.loginProviders.find(input.oauth_provider))?.slug ?? null;
        if (!provider) throw TwoFactorErrors.unknown_oauth_provider();
      }
      return { requires_2fa: true, temp_token: await openChallenge(user.id, provider ?? EMAIL_PLATFORM) };
    },

    /** POST /v1/auth/2fa/verify: a correct code turns the temporary token into a session. */
    async verifyLogin(
      request: FastifyRequest,
      input: Static<typeof VerifyLoginBody>,
      options: { withoutSession?: boolean } = {},
    ): Promise<AuthResult> {
      const { challenge, user } = await claimChallenge(request, input.temp_token);
      const state = await enabledState(user.id);
      if (!state) throw TwoFactorErrors.invalid_challenge();
      const email = (await deps.users.findEmailAccountOfUser(user.id))?.email ?? '';
      const outcome = await finishChallenge(
        request,
        { challenge, user, email },
        (trx) => acceptCode(user.id, state.secret_sealed, input.code, true, trx),
        options,
      );
      if (!outcome) {
        await deps.signInThrottle.recordFailure(codeGuessesOf(user.id), request.ip);
        await deps.audit.record(request, {
          eventType: '2fa_verified',
          userId: user.id,
          resourceType: 'user',
          resourceId: user.id,
          status: 'failure',
          errorMessage: 'invalid two-factor code',
          metadata: { provider: challenge.provider },
        });
        throw TwoFactorErrors.wrong_sign_in_code();
      }
      if (outcome.remaining !== null && outcome.remaining <= LOW_BACKUP_CODES) {
        // A reminder, not part of the sign-in: a mail failure is logged, the session stands.
        const to = email;
        if (!to) request.log.warn({ user_id: user.id }, 'low backup codes: the user has no email address to remind');
        else {
          deps.mailer
            .send(to, lowBackupCodesMail(user.username, outcome.remaining))
            .catch((err: unknown) =>
              request.log.warn({ err, user_id: user.id }, 'could not send the low backup codes reminder'),
            );
        }
      }
      return outcome.result;
    },

    /** The user a temporary token stands for, without using one of its attempts (a passkey's options need it). */
    async userOfChallenge(tempToken: string): Promise<string> {
      const open = tempToken.startsWith(TWO_FACTOR_TOKEN_PREFIX)
        ? await repo.openChallenge(hashToken(tempToken))
        : undefined;
      if (!open) throw TwoFactorErrors.invalid_challenge();
      return open.user_id;
    },

    /**
     * The second step answered with a passkey of the challenge's user (the passkeys module verified it): the
     * temporary token gives its session, as a code would.
     */
    async completeWithPasskey(request: FastifyRequest, tempToken: string, userId: string): Promise<AuthResult> {
      const { challenge, user } = await claimChallenge(request, tempToken);
      if (user.id !== userId) throw TwoFactorErrors.invalid_challenge();
      const email = (await deps.users.findEmailAccountOfUser(user.id))?.email ?? '';
      const outcome = await finishChallenge(request, { challenge, user, email }, async () => 'passkey' as const);
      return outcome!.result;
    },
  };
}

export type TwoFactorService = ReturnType<typeof createTwoFactorService>;

/** The QR code library is loaded on the first setup, not at start (it is only needed there). */
async function qrCodeDataUrl(text: string): Promise<string> {
  const { default: QRCode } = await import('qrcode');
  return QRCode.toDataURL(text);
}
