import formBody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { default as Provider, InteractionResults } from 'oidc-provider';
import { Type } from 'typebox';
import { AppError } from '../../platform/http/errors.js';
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
  signIn(request: FastifyRequest, input: { identifier: string; password: string; turnstile_token?: string }): Promise<SignInResult>;
  verifyTwoFactor(request: FastifyRequest, input: { temp_token: string; code: string }): Promise<SignInResult>;
}

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
const LoginForm = Type.Object({
  identifier: Type.String({ minLength: 1, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  turnstile_token: Type.Optional(Type.String({ maxLength: 4096 })),
});
const TwoFactorForm = Type.Object({ temp_token: Type.String({ minLength: 1, maxLength: 200 }), code: Type.String({ minLength: 1, maxLength: 32 }) });
const ConsentForm = Type.Object({ decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]) });

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
    sendPage(reply, status, body, pageCsp(typeof redirectUri === 'string' ? redirectUri : undefined, Boolean(turnstileSiteKey)));

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
  const expired = (reply: FastifyReply) => html(reply, 400, messagePage('This page has expired', OAuthErrors.interaction_expired().message));
  const clientNameOf = async (details: Interaction) => (await oauth.activeClient(String(details.params.client_id)))?.name ?? 'the app';

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
    if (origin && origin !== 'null' && origin !== ownOrigin) return html(reply, 403, messagePage('Refused', OAuthErrors.cross_origin_form().message));
  };

  app.get<{ Params: { uid: string } }>(base, {
    schema: { tags, summary: 'The sign-in or consent page of an authorization in progress', params: Uid, response: { 200: Html, 400: BadRequestPage } },
  }, async (request, reply) => {
    const current = await interactionOf(request, reply);
    if (!current) return expired(reply);
    const { details } = current;
    const clientName = await clientNameOf(details);
    if (details.prompt.name === 'login') return html(reply, 200, loginPage({ action: pathOf(details.uid, 'login'), clientName, turnstileSiteKey }), details.params.redirect_uri);
    const client = await oauth.activeClient(String(details.params.client_id));
    const user = await oauth.claimsOf(String(details.session?.accountId));
    if (!client || !user) return expired(reply);
    const missing = (details.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
    return html(reply, 200, consentPage({ action: pathOf(details.uid, 'consent'), clientName, homepage: client.homepage_url, scopes: missing, username: user.preferred_username }), details.params.redirect_uri);
  });

  /** A sign-in step's outcome: on to the provider, the 2FA page, or the same page with the error. */
  async function signedIn(request: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply, step: (clientName: string) => Promise<SignInResult>, retry: (clientName: string, error: string) => string) {
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
    if (result.requires_2fa) return html(reply, 200, twoFactorPage({ action: pathOf(current.details.uid, 'two-factor'), clientName, tempToken: result.temp_token! }), current.details.params.redirect_uri);
    return finish(current.provider, request, reply, { login: { accountId: result.user_id } });
  }

  app.post<{ Params: { uid: string }; Body: { identifier: string; password: string; turnstile_token?: string } }>(`${base}/login`, {
    onRequest: sameOrigin,
    schema: { tags, summary: 'Sign-in form of an authorization', consumes: ['application/x-www-form-urlencoded'], params: Uid, body: LoginForm, response: { 200: Html, 303: Redirect, 400: BadRequestPage, 401: Html, 403: Html, 429: Html } },
  }, (request, reply) =>
    signedIn(request, reply, () => deps.signIn(request, request.body), (clientName, error) =>
      loginPage({ action: pathOf(request.params.uid, 'login'), clientName, error, identifier: request.body.identifier, turnstileSiteKey })));

  app.post<{ Params: { uid: string }; Body: { temp_token: string; code: string } }>(`${base}/two-factor`, {
    onRequest: sameOrigin,
    schema: { tags, summary: 'Second-factor form of an authorization', consumes: ['application/x-www-form-urlencoded'], params: Uid, body: TwoFactorForm, response: { 200: Html, 303: Redirect, 400: BadRequestPage, 401: Html, 429: Html } },
  }, (request, reply) =>
    signedIn(request, reply, () => deps.verifyTwoFactor(request, request.body), (clientName, error) =>
      twoFactorPage({ action: pathOf(request.params.uid, 'two-factor'), clientName, tempToken: request.body.temp_token, error })));

  app.post<{ Params: { uid: string }; Body: { decision: 'allow' | 'deny' } }>(`${base}/consent`, {
    onRequest: sameOrigin,
    schema: { tags, summary: 'Consent form of an authorization (third-party clients)', consumes: ['application/x-www-form-urlencoded'], params: Uid, body: ConsentForm, response: { 303: Redirect, 400: BadRequestPage } },
  }, async (request, reply) => {
    const current = await interactionOf(request, reply);
    if (!current || current.details.prompt.name !== 'consent' || !current.details.session?.accountId) return expired(reply);
    const { provider, details } = current;
    if (request.body.decision === 'deny') return finish(provider, request, reply, { error: 'access_denied', error_description: 'The user denied access' });
    const accountId = details.session!.accountId;
    const clientId = String(details.params.client_id);
    const missing = (details.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
    const grant = (details.grantId && (await provider.Grant.find(details.grantId))) || new provider.Grant({ accountId, clientId });
    grant.addOIDCScope(missing.join(' '));
    await oauth.recordConsent(request, accountId, clientId, missing);
    return finish(provider, request, reply, { consent: { grantId: await grant.save() } });
  });
}
