import formBody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../platform/http/errors.js';
import { messagePage, pageCsp, sendPage } from '../../platform/http/html-page.js';
import { RESET_PASSWORD_PATH, VERIFY_EMAIL_PATH } from '../../platform/mail/token-mail.js';
import { RESET_DONE_MESSAGE, type PasswordResetService } from '../passwords/service.js';
import type { EmailVerification } from '../registration/index.js';
import { resetPasswordPage, verifyEmailPage } from './pages.js';

interface Options {
  passwordReset: Pick<PasswordResetService, 'complete'>;
  verifyEmail: EmailVerification;
  /** With bot protection on, the reset form shows Turnstile with this site key. */
  turnstileSiteKey: string | undefined;
}

const TokenField = Type.Optional(Type.String({ maxLength: 512 }));
const TokenQuery = Type.Object({ token: TokenField });
const VerifyForm = Type.Object({ token: TokenField });
const ResetForm = Type.Object({
  token: TokenField,
  new_password: Type.String({ maxLength: 1024 }),
  password_again: Type.Optional(Type.String({ maxLength: 1024 })),
  turnstile_token: Type.Optional(Type.String({ maxLength: 4096 })),
  // A checked box sends its value; an unchecked one nothing.
  revoke_passkeys_and_keys: Type.Optional(Type.Literal('true')),
});
// Pages for people, not operations of the API: kept out of the OpenAPI document.
const hide = true;

/**
 * The pages behind mailed links (`/verify-email`, `/reset-password`): a form, then the same
 * services as POST /v1/auth/verify-email and /v1/auth/reset-password/complete. A form post
 * carries no ambient credential (the token in it is the credential), so no origin check is needed.
 */
export async function linkPageRoutes(
  fastify: FastifyInstance,
  { passwordReset, verifyEmail, turnstileSiteKey }: Options,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  await app.register(formBody, { bodyLimit: 16 * 1024 });
  const csp = pageCsp(undefined, Boolean(turnstileSiteKey));
  const html = (reply: FastifyReply, status: number, body: string) => sendPage(reply, status, body, csp);
  const incomplete = (reply: FastifyReply) =>
    html(
      reply,
      400,
      messagePage(
        'This link is incomplete',
        'Open the link from the email again, or copy all of it into the address bar: it ends with ?token= and a long code.',
      ),
    );

  /** Runs `step`; an error the service declares becomes `page(its message)` with its status. */
  async function attempt(reply: FastifyReply, step: () => Promise<string>, page: (error: string) => string) {
    try {
      return html(reply, 200, await step());
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      reply.headers(err.headers);
      return html(reply, err.status, page(err.message));
    }
  }

  app.get(VERIFY_EMAIL_PATH, { schema: { hide, querystring: TokenQuery } }, async (request, reply) =>
    request.query.token ? html(reply, 200, verifyEmailPage({ token: request.query.token })) : incomplete(reply),
  );

  app.post(VERIFY_EMAIL_PATH, { schema: { hide, body: VerifyForm } }, async (request, reply) => {
    const { token } = request.body;
    if (!token) return incomplete(reply);
    return attempt(
      reply,
      async () => {
        const { message } = await verifyEmail(request, token);
        return messagePage('Email address confirmed', message);
      },
      (error) => messagePage('This link cannot be used', error),
    );
  });

  app.get(RESET_PASSWORD_PATH, { schema: { hide, querystring: TokenQuery } }, async (request, reply) =>
    request.query.token
      ? html(reply, 200, resetPasswordPage({ token: request.query.token, turnstileSiteKey }))
      : incomplete(reply),
  );

  app.post(RESET_PASSWORD_PATH, { schema: { hide, body: ResetForm } }, async (request, reply) => {
    const { token, new_password, password_again, turnstile_token } = request.body;
    const revoke_passkeys_and_keys = request.body.revoke_passkeys_and_keys === 'true';
    if (!token) return incomplete(reply);
    const again = (error: string) =>
      resetPasswordPage({ token, error, turnstileSiteKey, revokePasskeysAndKeys: revoke_passkeys_and_keys });
    if (password_again !== undefined && password_again !== new_password)
      return html(reply, 400, again('The two passwords differ; type the same one twice.'));
    return attempt(
      reply,
      async () => {
        await passwordReset.complete(request, { token, new_password, turnstile_token, revoke_passkeys_and_keys });
        return messagePage(
          'Password changed',
          revoke_passkeys_and_keys
            ? `${RESET_DONE_MESSAGE}. Every passkey and API key of the account was removed too`
            : RESET_DONE_MESSAGE,
        );
      },
      again,
    );
  });
}
