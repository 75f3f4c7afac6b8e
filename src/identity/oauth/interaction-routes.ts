import formBody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { default as Provider, InteractionResults } from 'oidc-provider';
import { Type } from 'typebox';
import { AppError } from '../../platform/http/errors.js';
import { callerOf, requireAuthenticated } from '../../platform/auth/hooks.js';
import type { KeyValueStore } from '../../platform/kv/kv.js';
import { singleUseTickets } from '../../platform/kv/tickets.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { sendPage } from '../../platform/http/html-page.js';
import { OAuthErrors } from './errors.js';
import { consentPage, loginPage, messagePage, pageCsp, twoFactorPage } from './pages.js';
import { OAUTH_PREFIX } from './provider.js';
import type { OAuthService } from './service.js';

/** What a sign-in step answers: the user, or a second-factor challenge (as POST /v1/auth/login does). */
interface SignInResult {
  user_id: string;
  requires_2fa: boolean;
  temp_token?: string | null;
}

export interface InteractionDeps {
  oauth: OAuthService;
  publicUrl: string;
  /** With bot protection on, the sign-in page shows Turnstile with this site key. */
  turnstileSiteKey: string | undefined;
  /** The API's own sign-in, with its throttle, bot check, ban and 2FA rules and audit events; no session is made. */
  signIn(
    request: FastifyRequest,
    input: { identifier: string; password: string; turnstile_token?: string },
  ): Promise<SignInResult>;
  verifyTwoFactor(request: FastifyRequest, input: { temp_token: string; code: string }): Promise<SignInResult>;
  /** OAUTH_LOGIN_URL: the front end that signs people in for an authorization, instead of the page here. */
  loginUrl: string | undefined;
  kv: Pick<KeyValueStore, 'get' | 'set' | 'setIfAbsent' | 'delete'>;
}

/** How long the browser has to come back from the front end with its handoff ticket. */
const HANDOFF_TTL_SECS = 60;
const HANDOFF_TICKET_PREFIX = 'wgho_';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

const tags = ['OAuth / OpenID Connect'];
const Html = { description: 'An HTML page', content: { 'text/html': { schema: Type.String() } } };
/** The pages' 400: a page saying what went wrong, or the usual error body for a request no form sends (a malformed uid or field). */
const BadRequestPage = {
  description: 'An HTML page; a request no form would send gets `{ error, message, code }` (request.validation)',
  content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: Type.Ref('ErrorBody') } },
  'x-error-codes': ['request.validation'],
};
const Redirect = { description: 'On to the next step of the authorization (Location)', type: 'null' };
const Uid = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 64 }) });
const LoginForm = Type.Object(
  {
    identifier: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    turnstile_token: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { examples: [{ identifier: 'skipper@example.org', password: 'correct horse battery staple' }] },
);
const TwoFactorForm = Type.Object(
  { temp_token: Type.String({ minLength: 1, maxLength: 200 }), code: Type.String({ minLength: 1, maxLength: 32 }) },
  { examples: [{ temp_token: 'tf_8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f', code: '123456' }] },
);
const ConsentForm = Type.Object(
  { decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]) },
  { examples: [{ decision: 'allow' }] },
);
const HandoffTicket = Type.Object({ ticket: Type.String({ minLength: 1, maxLength: 100 }) });
const Handoff = Type.Object({
  redirect_to: Type.String({
    description: 'Send the browser here (a top-level navigation) within 60 seconds; it works once',
  }),
});

/**
 * The pages of an authorization in progress (oidc-provider's "interactions"): sign-in, the second
 * factor, and consent for third-party clients. Each step ends by handing the result back to the
 * provider, which redirects on to the authorize endpoint. The interaction cookie (SameSite=Lax, scoped
 * to the page's path) binds each form to the browser that started it; a cross-origin post is refused.
 */
export async function oauthInteractionRoutes(app: FastifyInstance, deps: InteractionDeps): Promise<void> {
  await app.register(formBody, { bodyLimit: 16 * 1024 });
  const { oauth } = deps;
  const base = `${OAUTH_PREFIX}/interaction/:uid`;
  const pathOf = (uid: string, step: string) => `${OAUTH_PREFIX}/interaction/${encodeURIComponent(uid)}/${step}`;

  const turnstileSiteKey = deps.turnstileSiteKey;
  const html = (reply: FastifyReply, status: number, body: string, redirectUri?: unknown) =>
    sendPage(
      reply,
      status,
      body,
      pageCsp(typeof redirectUri === 'string' ? redirectUri : undefined, Boolean(turnstileSiteKey)),
    );

  /** The interaction this browser is in, or undefined when its cookie is missing, stale or for another page. */
  async function interactionOf(request: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply) {
    const provider = await oauth.provider();
    try {
      const details = await provider.interactionDetails(request.raw, reply.raw);
      return details.uid === request.params.uid ? { provider, details } : undefined;
    } catch {
      return undefined;
    }
  }
  const expired = (reply: FastifyReply) =>
    html(reply, 400, messagePage('This page has expired', OAuthErrors.interaction_expired().message));
  const clientNameOf = async (details: Interaction) =>
    (await oauth.activeClient(String(details.params.client_id)))?.name ?? 'the app';

  /** Hands the step's result to the provider and follows its redirect (303: the browser GETs it). */
  async function finish(provider: Provider, request: FastifyRequest, reply: FastifyReply, result: InteractionResults) {
    const to = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: true });
    return reply.status(303).header('location', to).header('cache-control', 'no-store').send(null);
  }

  // Form posts from another site are refused outright (the cookie would not come with them either).
  const ownOrigin = new URL(deps.publicUrl).origin;
  const sameOrigin = async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    // ("null" is what a browser sends from these pages: they set no-referrer.)
    if (origin && origin !== 'null' && origin !== ownOrigin)
      return html(reply, 403, messagePage('Refused', OAuthErrors.cross_origin_form().message));
  };

  const handoffs = singleUseTickets<{ uid: string; userId: string }>(deps.kv, {
    prefix: HANDOFF_TICKET_PREFIX,
    namespace: 'oauth:handoff',
    ttlSecs: HANDOFF_TTL_SECS,
  });
  const frontEndLogin = (uid: string, clientName: string) => {
    const url = new URL(deps.loginUrl!);
    url.searchParams.set('interaction', uid);
    url.searchParams.set('client_name', clientName);
    return url.toString();
  };

  app.get<{ Params: { uid: string } }>(
    base,
    {
      schema: {
        tags,
        summary:
          'The sign-in or consent page of an authorization in progress (with OAUTH_LOGIN_URL, sign-in redirects there)',
        params: Uid,
        response: { 200: Html, 303: Redirect, 400: BadRequestPage },
      },
    },
    async (request, reply) => {
      const current = await interactionOf(request, reply);
      if (!current) return expired(reply);
      const { details } = current;
      const clientName = await clientNameOf(details);
      if (details.prompt.name === 'login') {
        if (deps.loginUrl)
          return reply
            .status(303)
            .header('location', frontEndLogin(details.uid, clientName))
            .header('cache-control', 'no-store')
            .send(null);
        return html(
          reply,
          200,
          loginPage({ action: pathOf(details.uid, 'login'), clientName, turnstileSiteKey }),
          details.params.redirect_uri,
        );
      }
      const client = await oauth.activeClient(String(details.params.client_id));
      const user = await oauth.claimsOf(String(details.session?.accountId));
      if (!client || !user) return expired(reply);
      const missing = (details.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
      return html(
        reply,
        200,
        consentPage({
          action: pathOf(details.uid, 'consent'),
          clientName,
          homepage: client.homepage_url,
          scopes: missing,
          username: user.preferred_username,
        }),
        details.params.redirect_uri,
      );
    },
  );

  /** A sign-in step's outcome: on to the provider, the 2FA page, or the same page with the error. */
  async function signedIn(
    request: FastifyRequest<{ Params: { uid: string } }>,
    reply: FastifyReply,
    step: (clientName: string) => Promise<SignInResult>,
    retry: (clientName: string, error: string) => string,
  ) {
    const current = await interactionOf(request, reply);
    if (!current || current.details.prompt.name !== 'login') return expired(reply);
    const clientName = await clientNameOf(current.details);
    let result: SignInResult;
    try {
      result = await step(clientName);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      reply.headers(err.headers);
      return html(reply, err.status, retry(clientName, err.message), current.details.params.redirect_uri);
    }
    if (result.requires_2fa)
      return html(
        reply,
        200,
        twoFactorPage({ action: pathOf(current.details.uid, 'two-factor'), clientName, tempToken: result.temp_token! }),
        current.details.params.redirect_uri,
      );
    return finish(current.provider, request, reply, { login: { accountId: result.user_id } });
  }

  app.post<{ Params: { uid: string }; Body: { identifier: string; password: string; turnstile_token?: string } }>(
    `${base}/login`,
    {
      onRequest: sameOrigin,
      schema: {
        tags,
        summary: 'Sign-in form of an authorization',
        consumes: ['application/x-www-form-urlencoded'],
        params: Uid,
        body: LoginForm,
        response: { 200: Html, 303: Redirect, 400: BadRequestPage, 401: Html, 403: Html, 429: Html },
      },
    },
    (request, reply) =>
      signedIn(
        request,
        reply,
        () => deps.signIn(request, request.body),
        (clientName, error) =>
          loginPage({
            action: pathOf(request.params.uid, 'login'),
            clientName,
            error,
            identifier: request.body.identifier,
            turnstileSiteKey,
          }),
      ),
  );

  app.post<{ Params: { uid: string }; Body: { temp_token: string; code: string } }>(
    `${base}/two-factor`,
    {
      onRequest: sameOrigin,
      schema: {
        tags,
        summary: 'Second-factor form of an authorization',
        consumes: ['application/x-www-form-urlencoded'],
        params: Uid,
        body: TwoFactorForm,
        response: { 200: Html, 303: Redirect, 400: BadRequestPage, 401: Html, 429: Html },
      },
    },
    (request, reply) =>
      signedIn(
        request,
        reply,
        () => deps.verifyTwoFactor(request, request.body),
        (clientName, error) =>
          twoFactorPage({
            action: pathOf(request.params.uid, 'two-factor'),
            clientName,
            tempToken: request.body.temp_token,
            error,
          }),
      ),
  );

  app.post<{ Params: { uid: string }; Body: { decision: 'allow' | 'deny' } }>(
    `${base}/consent`,
    {
      onRequest: sameOrigin,
      schema: {
        tags,
        summary: 'Consent form of an authorization (third-party clients)',
        consumes: ['application/x-www-form-urlencoded'],
        params: Uid,
        body: ConsentForm,
        response: { 303: Redirect, 400: BadRequestPage },
      },
    },
    async (request, reply) => {
      const current = await interactionOf(request, reply);
      if (!current || current.details.prompt.name !== 'consent' || !current.details.session?.accountId)
        return expired(reply);
      const { provider, details } = current;
      if (request.body.decision === 'deny')
        return finish(provider, request, reply, {
          error: 'access_denied',
          error_description: 'The user denied access',
        });
      const accountId = details.session!.accountId;
      const clientId = String(details.params.client_id);
      const missing = (details.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
      const grant =
        (details.grantId && (await provider.Grant.find(details.grantId))) ||
        new provider.Grant({ accountId, clientId });
      grant.addOIDCScope(missing.join(' '));
      await oauth.recordConsent(request, accountId, clientId, missing);
      return finish(provider, request, reply, { consent: { grantId: await grant.save() } });
    },
  );

  /*
   * Sign-in on a front end (OAUTH_LOGIN_URL): the authorization sends the browser there with
   * `?interaction=<uid>`; the front end signs the person in through the API as it always does, asks for
   * a handoff with that session, and sends the browser to the `redirect_to` it gets. Its ticket works
   * once, for 60 seconds, and only in the browser that started the authorization (the interaction
   * cookie), so a ticket for one's own account cannot be slipped into someone else's authorization.
   */
  app.post<{ Params: { uid: string } }>(
    `${base}/handoff`,
    {
      config: { auth: requireAuthenticated() },
      schema: {
        tags,
        summary: "Hand a front end's sign-in to an authorization in progress (OAUTH_LOGIN_URL)",
        description:
          'With the session the front end just signed in with (not an API key). The front end sends the browser to `redirect_to`.',
        params: Uid,
        response: {
          200: Handoff,
          ...errorResponses(OAuthErrors.handoff_needs_session, OAuthErrors.interaction_not_found),
        },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      if (caller.kind !== 'session' || !caller.userId) throw OAuthErrors.handoff_needs_session();
      const interaction = await (await oauth.provider()).Interaction.find(request.params.uid);
      if (interaction?.prompt.name !== 'login') throw OAuthErrors.interaction_not_found();
      const ticket = await handoffs.issue({ uid: interaction.uid, userId: caller.userId });
      return {
        redirect_to: `${deps.publicUrl}${pathOf(interaction.uid, 'complete')}?ticket=${encodeURIComponent(ticket)}`,
      };
    },
  );

  app.get<{ Params: { uid: string }; Querystring: { ticket: string } }>(
    `${base}/complete`,
    {
      schema: {
        tags,
        summary: 'Where a front end sends the browser after a handoff: the authorization goes on as signed in',
        params: Uid,
        querystring: HandoffTicket,
        response: { 303: Redirect, 400: BadRequestPage },
      },
    },
    async (request, reply) => {
      const grant = await handoffs.redeem(request.query.ticket);
      const current = await interactionOf(request, reply);
      if (!grant || !current || grant.uid !== current.details.uid || current.details.prompt.name !== 'login')
        return expired(reply);
      return finish(current.provider, request, reply, { login: { accountId: grant.userId } });
    },
  );
}
