import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import type { Caller } from '../../platform/auth/caller.js';
import { SessionErrors } from '../sessions/errors.js';
import type { UsersService } from '../users/service.js';
import { AccountDeletionErrors } from './errors.js';
import type { Reauthentication } from '../sign-in/index.js';
import type { DeleteMyAccountBody } from './schemas.js';

export const ACCOUNT_DELETION_MESSAGE =
  'Your account is deleted; it is removed for good at scheduled_deletion_at, and until then an administrator can restore it';

interface Deps {
  users: Pick<UsersService, 'findEmailAccountOfUser' | 'remove'>;
  reauthentication: Pick<Reauthentication, 'checkCurrentPassword' | 'signedInRecently'>;
}

/**
 * A user deleting their own account: they show who they are again (the current password, checked as
 * the password change checks it, or a recent sign-in when the account has none), then it is the
 * administrators' deletion (`users.remove`): the same grace period, revocations, notice mail and audit event.
 */
export function createSelfDeletion(deps: Deps) {
  return {
    async deleteOwn(request: FastifyRequest, caller: Caller, input: Static<typeof DeleteMyAccountBody>) {
      if (caller.kind !== 'session' || !caller.userId || !caller.sessionId) throw SessionErrors.session_required();
      const { userId, sessionId } = caller;
      const hasPassword = Boolean((await deps.users.findEmailAccountOfUser(userId))?.password_hash);
      if (hasPassword && input.current_password === undefined) throw AccountDeletionErrors.current_password_required();
      const checked =
        hasPassword &&
        (await deps.reauthentication.checkCurrentPassword(
          request,
          userId,
          input.current_password!,
          'account_deletion',
        ));
      // The password went away in between (an unlinked email account): a recent sign-in is then the proof, as without one.
      if (!checked && !(await deps.reauthentication.signedInRecently(sessionId)))
        throw AccountDeletionErrors.sign_in_again();
      return deps.users.remove(request, caller, userId);
    },
  };
}

export type SelfDeletion = ReturnType<typeof createSelfDeletion>;
