import type { FastifyRequest } from 'fastify';
import type { AuditWriter } from '../../platform/audit.js';
import type { Caller } from '../../platform/auth/caller.js';
import { verifyPassword } from '../../platform/auth/passwords.js';
import type { Clock } from '../../platform/clock.js';
import type { SessionStore } from '../sessions/service.js';
import type { SignInThrottle } from '../sign-in-throttle/service.js';
import type { UsersService } from '../users/service.js';
import { CurrentPasswordErrors, ReauthenticationErrors } from './errors.js';

/** How recent a session's sign-in (password, passkey, two-factor code) must be to stand for the user showing who they are again. */
export const RECENT_SIGN_IN_MS = 15 * 60_000;

interface Deps {
  clock: Clock;
  users: Pick<UsersService, 'findById' | 'findEmailAccountOfUser'>;
  /** A wrong current password counts towards the account's sign-in lockout, as a failed sign-in does. */
  signInThrottle: Pick<SignInThrottle, 'claim'>;
  audit: AuditWriter;
  sessions: Pick<SessionStore, 'signedInAt'>;
}

/**
 * A user showing who they are again before a change a stolen session must not make on its own (a password
 * change, their account's deletion, a new passkey or API key): the current password, checked as a sign-in
 * checks it, or a sign-in of this session within the last 15 minutes.
 */
export function createReauthentication(deps: Deps) {
  /**
   * The account's current password, checked as a sign-in checks it: a wrong one is audited as a failed
   * sign-in and counts towards the account's lockout (a locked account is refused with 429). False when
   * the account has no password; `via` names the route in the audit event.
   */
  async function checkCurrentPassword(
    request: FastifyRequest,
    userId: string,
    given: string,
    via: string,
  ): Promise<boolean> {
    const [user, account] = await Promise.all([deps.users.findById(userId), deps.users.findEmailAccountOfUser(userId)]);
    if (!user || !account?.password_hash) return false;
    // Counted on the account, whichever of its names a sign-in would type.
    const attempt = await deps.signInThrottle.claim({ identifier: user.username, userId }, request.ip);
    if (!(await verifyPassword(account.password_hash, given))) {
      await deps.audit.record(request, {
        eventType: 'login_failed',
        userId,
        resourceType: 'user',
        resourceId: userId,
        status: 'failure',
        errorMessage: 'wrong password',
        metadata: { via },
      });
      await attempt.failed();
      throw CurrentPasswordErrors.wrong_current_password();
    }
    await attempt.succeeded();
    return true;
  }

  /** Whether the session was signed in (password, passkey, two-factor code) within RECENT_SIGN_IN_MS. */
  async function signedInRecently(sessionId: string): Promise<boolean> {
    const at = await deps.sessions.signedInAt(sessionId);
    return at !== undefined && deps.clock.nowMs() - at.getTime() <= RECENT_SIGN_IN_MS;
  }

  return {
    checkCurrentPassword,
    signedInRecently,

    /**
     * For a session: `currentPassword` (when given; a wrong one is 400 and counts towards the lockout) or a
     * recent sign-in, else 403 `auth.reauthentication_required`. Other callers (API keys, the system key)
     * pass: what they may do is the spec's, and they have no sign-in to repeat.
     */
    async confirm(
      request: FastifyRequest,
      caller: Caller,
      currentPassword: string | undefined,
      via: string,
    ): Promise<void> {
      if (caller.kind !== 'session' || !caller.userId || !caller.sessionId) return;
      if (currentPassword !== undefined && (await checkCurrentPassword(request, caller.userId, currentPassword, via)))
        return;
      if (!(await signedInRecently(caller.sessionId))) throw ReauthenticationErrors.reauthentication_required();
    },
  };
}

export type Reauthentication = ReturnType<typeof createReauthentication>;
