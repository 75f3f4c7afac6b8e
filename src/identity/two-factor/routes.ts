import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, requireOwnAccount, requireSystemKey } from '../../platform/auth/hooks.js';
import { errorResponses, SuccessMessage } from '../../platform/http/envelopes.js';
import { AuthResponse } from '../sign-in/schemas.js';
import {
  AnyCodeBody,
  BackupCodesIssued,
  CheckBody,
  CheckResult,
  SetupBody,
  TotpBody,
  TwoFactorRequirement,
  TwoFactorSetup,
  TwoFactorStatus,
  UserIdQuery,
  VerifyLoginBody,
} from './schemas.js';
import { MANAGE_PERMISSION, type TwoFactorService } from './service.js';
import { TwoFactorErrors } from './errors.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { UserErrors } from '../users/errors.js';
import { SignInErrors } from '../sign-in-throttle/service.js';
import { BannedErrors } from '../bans/errors.js';

const tags = ['Two-factor authentication'];
const whom =
  'Acts on yourself, or on `user_id` (query or body), which needs `two_factor:manage` or super admin; ' +
  "a system key must name `user_id`. Changing another user's 2FA is only for users who hold nothing beyond your own permissions.";

/** `user_id` may come in the query or the body; both at once must agree. */
function userIdOf(query: { user_id?: string }, body: { user_id?: string }): string | undefined {
  if (query.user_id && body.user_id && query.user_id !== body.user_id) {
    throw TwoFactorErrors.user_id_mismatch();
  }
  return body.user_id ?? query.user_id;
}

/** What choosing the user to act on can answer (see `whom`). */
const targetErrors = [
  TwoFactorErrors.user_id_required,
  TwoFactorErrors.user_id_required_for_system_key,
  AuthErrors.forbidden,
  UserErrors.not_found,
];
/** The changes (setup, verify, disable, new backup codes) also refuse a user who holds what the caller does not (a super admin). */
const bodyTargetErrors = [...targetErrors, TwoFactorErrors.user_id_mismatch, UserErrors.sign_in_beyond_caller];

export async function twoFactorRoutes(
  fastify: FastifyInstance,
  { twoFactor }: { twoFactor: TwoFactorService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Your own 2FA with your session; a key (or app token) needs two_factor:manage, for its owner as for anyone (see targetOf).
  const auth = requireOwnAccount(MANAGE_PERMISSION);

  app.get(
    '/v1/users/me/2fa/status',
    {
      config: { auth },
      schema: {
        tags,
        summary: 'Whether two-factor authentication is on',
        description: whom,
        querystring: UserIdQuery,
        response: { 200: TwoFactorStatus, ...errorResponses(...targetErrors) },
      },
    },
    async (request) => twoFactor.status(callerOf(request), request.query.user_id),
  );

  app.get(
    '/v1/users/me/2fa/requirement',
    {
      config: { auth },
      schema: {
        tags,
        summary: 'Whether two-factor authentication is required, and why',
        description: `Required when a role of the user has requires_two_factor, or a platform the user has an account on has two_factor_required. ${whom}`,
        querystring: UserIdQuery,
        response: { 200: TwoFactorRequirement, ...errorResponses(...targetErrors) },
      },
    },
    async (request) => twoFactor.requirement(callerOf(request), request.query.user_id),
  );

  app.post(
    '/v1/users/me/2fa/setup',
    {
      config: { auth },
      schema: {
        tags,
        summary: 'Start setting up TOTP: a new secret and its QR code, valid 10 minutes',
        description: `Confirm with POST /v1/users/me/2fa/verify. 409 when already enabled. ${whom}`,
        querystring: UserIdQuery,
        body: SetupBody,
        response: {
          200: TwoFactorSetup,
          ...errorResponses(
            ...bodyTargetErrors,
            TwoFactorErrors.unknown_platform,
            TwoFactorErrors.platform_unsupported,
            TwoFactorErrors.already_enabled,
          ),
        },
      },
    },
    async (request) =>
      twoFactor.setup(callerOf(request), { ...request.body, user_id: userIdOf(request.query, request.body) }),
  );

  app.post(
    '/v1/users/me/2fa/verify',
    {
      config: { auth },
      schema: {
        tags,
        summary: 'Confirm the setup with a code: enables 2FA and returns 8 backup codes (shown once)',
        description: `400 when no setup is pending, it expired, or the code is wrong. ${whom}`,
        querystring: UserIdQuery,
        body: TotpBody,
        response: {
          200: BackupCodesIssued,
          ...errorResponses(
            ...bodyTargetErrors,
            TwoFactorErrors.invalid_code,
            TwoFactorErrors.no_setup_pending,
            TwoFactorErrors.setup_expired,
            TwoFactorErrors.already_enabled,
            TwoFactorErrors.setup_changed,
          ),
        },
      },
    },
    async (request) =>
      twoFactor.enable(request, callerOf(request), {
        code: request.body.code,
        user_id: userIdOf(request.query, request.body),
      }),
  );

  app.delete(
    '/v1/users/me/2fa',
    {
      config: { auth },
      schema: {
        tags,
        summary: 'Turn two-factor authentication off (TOTP or backup code); deletes the backup codes',
        description: whom,
        querystring: UserIdQuery,
        body: AnyCodeBody,
        response: {
          200: SuccessMessage,
          ...errorResponses(...bodyTargetErrors, TwoFactorErrors.invalid_code, TwoFactorErrors.not_enabled),
        },
      },
    },
    async (request) =>
      twoFactor.disable(request, callerOf(request), {
        code: request.body.code,
        user_id: userIdOf(request.query, request.body),
      }),
  );

  app.post(
    '/v1/users/me/2fa/backup-codes/regenerate',
    {
      config: { auth },
      schema: {
        tags,
        summary: 'Replace all backup codes (TOTP code required); the previous ones stop working',
        description: whom,
        querystring: UserIdQuery,
        body: TotpBody,
        response: {
          200: BackupCodesIssued,
          ...errorResponses(...bodyTargetErrors, TwoFactorErrors.invalid_code, TwoFactorErrors.not_enabled),
        },
      },
    },
    async (request) =>
      twoFactor.regenerateBackupCodes(request, callerOf(request), {
        code: request.body.code,
        user_id: userIdOf(request.query, request.body),
      }),
  );

  app.post(
    '/v1/auth/2fa/verify',
    {
      schema: {
        tags,
        summary: 'Finish a sign-in: the temporary 2fa_ token plus a TOTP or backup code give a session',
        description:
          'The temporary token (valid 10 minutes, 5 wrong codes at most) is the credential. The session keeps the provider of the original sign-in. ' +
          'When a backup code leaves 3 or fewer, a reminder mail is sent.',
        body: VerifyLoginBody,
        response: {
          200: AuthResponse,
          ...errorResponses(
            TwoFactorErrors.invalid_challenge,
            TwoFactorErrors.wrong_sign_in_code,
            BannedErrors.banned,
            SignInErrors.locked_out,
          ),
        },
      },
    },
    async (request) => twoFactor.verifyLogin(request, request.body),
  );

  app.post(
    '/v1/auth/2fa/check',
    {
      config: { auth: requireSystemKey() },
      schema: {
        tags,
        summary: 'For a sign-in done elsewhere (OAuth): whether the user needs a 2FA code; if so, a temporary token',
        description: 'System key only (403 for any other credential).',
        body: CheckBody,
        response: {
          200: CheckResult,
          ...errorResponses(TwoFactorErrors.unknown_oauth_provider, TwoFactorErrors.unknown_user),
        },
      },
    },
    async (request) => twoFactor.check(callerOf(request), request.body),
  );
}
