import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  preValidationHookHandler,
  RouteOptions,
} from 'fastify';
import { type AppError, AuthErrors } from '../http/errors.js';
import { withErrorResponses } from '../http/envelopes.js';
import { hasPermission, type Caller } from './caller.js';
import type { BeforeDatabaseLookup, CredentialResolver } from './credentials.js';
import { systemKeyAllowed } from './system-allowlist.js';
import { hashToken, sameTextConstantTime } from './tokens.js';

/** What a route demands of its caller; set as the route's `config.auth`. */
export interface RouteAuth {
  /** `resource:action` the caller must hold (wildcards and super admin honoured). */
  permission?: string;
  /** Path parameter holding a user id: a caller acting on their own user needs no permission. */
  orSelf?: string;
  /**
   * A permission that lets the caller in without `permission`, to act only on what is theirs (self-service
   * tracking: `gps:read_own` for `gps:read`); the route's service narrows what it answers to that. Needs a user.
   */
  ownScope?: string;
  /** Any valid credential will do (OAuth access tokens only where `oauthTokens` says so). */
  authenticated?: true;
  /**
   * The route reads or changes the caller's own account (their OAuth clients, activity log, data export,
   * integrations, sign-outs): a session, the person themselves, may; an API key or OAuth access token acts
   * for its owner only with this permission among what it holds, so a key made for a device cannot reach
   * the account it belongs to. (An OAuth token passes without it where `oauthTokens` says so.)
   */
  ownAccount?: string;
  /**
   * An OAuth access token may call this route although it names no permission: routes an app needs
   * for the user it acts for (who they are, signing them out). Elsewhere a token needs a permission scope.
   */
  oauthTokens?: true;
  /** Only the system API key (internal endpoints): 401 without a credential, 403 with any other. */
  systemKey?: true;
  /**
   * Where a client that cannot send `Authorization: Bearer` puts its credential (a tracker app: a URL
   * parameter, HTTP Basic): read from the request line and headers, before anything else, when there is no
   * bearer token. The token is resolved through the credential cache like a bearer token.
   */
  credentialFrom?: (request: FastifyRequest) => string | null;
  /** The same for a credential in the body (a form post): read once the body is parsed, before validation. */
  credentialInBody?: (request: FastifyRequest) => string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The resolved credential, or null for an anonymous request. */
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** The route reads Authorization itself (/metrics): it is not resolved as a credential. */
    ownAuthorization?: true;
  }
}

export const requirePermission = (permission: string, options: { orSelf?: string } = {}): RouteAuth => ({
  permission,
  ...options,
});
/**
 * A tracking route: `permission` (e.g. `gps:read`) reaches every device; its own-scope twin (`gps:read_own`)
 * only the caller's own devices and those shared with them (docs/access.md, "Self-service tracking").
 */
export const requireTracking = (permission: string): RouteAuth => ({ permission, ownScope: `${permission}_own` });
export const requireAuthenticated = (options: { oauthTokens?: true } = {}): RouteAuth => ({
  authenticated: true,
  ...options,
});
/** A route on the caller's own account: any session; an API key or OAuth token holding `permission` (see `ownAccount`). */
export const requireOwnAccount = (permission: string, options: { oauthTokens?: true } = {}): RouteAuth => ({
  authenticated: true,
  ownAccount: permission,
  ...options,
});
export const requireSystemKey = (): RouteAuth => ({ systemKey: true });

/** The caller of a route that declared `config.auth` (its onRequest check guarantees one). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw AuthErrors.unauthorized();
  return request.caller;
}

/**
 * Resolves `Authorization: Bearer` on every request (public routes too: rate
 * limits and the system-key allowlist need the identity), confines system keys
 * to their allowlist, and enforces each route's `config.auth`. Must be
 * registered before the routes. The X-User-Id header is never read. (The hook is `authHooks` below.)
 */

/** The user a caller acts for; a credential without one (an ownerless key) gets 403 `auth.user_required`. */
export function userIdOf(caller: Caller): string {
  if (!caller.userId) throw AuthErrors.user_required();
  return caller.userId;
}

export function registerAuth(
  app: FastifyInstance,
  resolver: CredentialResolver,
  hooks: {
    onResolved: (caller: Caller) => void;
    beforeDatabaseLookup?: (request: FastifyRequest) => ReturnType<BeforeDatabaseLookup>;
    /**
     * Counts a request whose credential may come in its body against its identity once that is read (the
     * rate limit's `countDeferred`): the caller the body named, or its address without one.
     */
    countBodyCaller?: (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;
  },
): void {
  app.decorateRequest('caller', null);
  const { onResolved, beforeDatabaseLookup, countBodyCaller } = hooks;

  // Callback-style hooks: a token this process already knows is resolved without a promise.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config?.ownAuthorization) return done();
    const hash = bearerTokenHash(request);
    if (!hash) {
      const token = request.routeOptions.config?.auth?.credentialFrom?.(request);
      return token ? resolveInto(request, token, hashToken(token), done) : done();
    }
    resolveInto(request, bearerToken(request.headers.authorization)!, hash, done);
  });

  /** Resolves a token (the local cache answers without a promise) and admits its caller. */
  function resolveInto(request: FastifyRequest, token: string, hash: string, done: (err?: Error) => void): void {
    const known = resolver.resolveLocally(hash);
    if (known !== undefined) return done(admit(request, known));
    resolver.resolve(token, beforeDatabaseLookup && (() => beforeDatabaseLookup(request)), hash).then(
      (caller) => done(admit(request, caller)),
      (err: Error) => done(err),
    );
  }

  /** Records the caller; a system key outside its allowlist is refused here (returned, for `done`). */
  function admit(request: FastifyRequest, caller: Caller | null): AppError | undefined {
    request.caller = caller;
    if (!caller) return undefined;
    onResolved(caller);
    // Matched against the route Fastify resolved, as the spec's table means, not the raw path: no
    // spelling of a URL reaches another route through an allowed prefix. No route: nothing to allow.
    const route = request.routeOptions.url;
    if (caller.isSystem && !(route !== undefined && systemKeyAllowed(route)))
      return AuthErrors.system_key_not_permitted();
    return undefined;
  }

  app.addHook('onRoute', (route: RouteOptions) => {
    const auth = route.config?.auth;
    if (!auth) return;
    documentRequirement(route, auth);
    // Before the body is even parsed: a caller without the right gets 401/403, never a hint about the input.
    const check: onRequestHookHandler = (request, _reply, done) => {
      // A credential that may come in the body is looked for there first (checked below, before validation).
      if (!request.caller && auth.credentialInBody) return done();
      done(refusalFor(request.caller, auth, request.params as Record<string, string> | undefined));
    };
    route.onRequest = [...(route.onRequest ? [route.onRequest].flat() : []), check];
    const fromBody = auth.credentialInBody;
    if (!fromBody) return;
    const checkBody: preValidationHookHandler = (request, reply, done) => {
      const refuse = (err?: Error) =>
        done(err ?? refusalFor(request.caller, auth, request.params as Record<string, string> | undefined));
      // A caller known from the request line or headers was counted when it was resolved.
      if (request.caller) return refuse();
      // Counted (by the key the body names, else by address) before a refusal, so failed tries count too.
      const counted = (err?: Error) =>
        err || !countBodyCaller ? refuse(err) : countBodyCaller(request, reply, refuse);
      const token = fromBody(request);
      if (!token) return counted();
      resolveInto(request, token, hashToken(token), counted);
    };
    route.preValidation = [...(route.preValidation ? [route.preValidation].flat() : []), checkBody];
  });
}

/**
 * Why this caller may not use a route demanding `auth`, or undefined when it may. `params` are the
 * route's path parameters (for `orSelf`). GraphQL resolvers gate themselves with the same rules.
 */
export function refusalFor(
  caller: Caller | null,
  auth: RouteAuth,
  params?: Record<string, string>,
): AppError | undefined {
  if (!caller) return AuthErrors.unauthorized();
  if (auth.systemKey && !caller.isSystem) return AuthErrors.system_key_required();
  if (auth.ownAccount) {
    if (caller.kind === 'session' || (caller.kind === 'oauth_token' && auth.oauthTokens)) return undefined;
    return hasPermission(caller, auth.ownAccount) ? undefined : missingPermission(auth.ownAccount);
  }
  // An app's token acts only within what the user granted it: a route open to any credential (account
  // management, data export) is not part of that unless it says so.
  if (!auth.permission)
    return caller.kind === 'oauth_token' && !auth.oauthTokens ? AuthErrors.oauth_token_not_permitted() : undefined;
  // (UUIDs are compared in lower case, as the database writes them.)
  // "Or self" is for the person: a session. An API key acts only within its permissions, so a
  // device key cannot reach its owner's account through it.
  if (
    auth.orSelf &&
    caller.kind === 'session' &&
    caller.userId &&
    params?.[auth.orSelf]?.toLowerCase() === caller.userId
  )
    return undefined;
  if (hasPermission(caller, auth.permission)) return undefined;
  if (auth.ownScope && caller.userId && hasPermission(caller, auth.ownScope)) return undefined;
  return missingPermission(auth.permission);
}

/** 403 naming the permission the caller lacks, so a client sees at once which scope its key needs. */
export const missingPermission = (permission: string): AppError =>
  AuthErrors.forbidden(`${AuthErrors.forbidden.message}: requires ${permission}`);

/** Schemas already documented: Fastify's HEAD twin of a GET route shares its schema object. */
const documented = new WeakSet<object>();

function documentRequirement(route: RouteOptions, auth: RouteAuth): void {
  const schema = (route.schema ??= {}) as Record<string, unknown>;
  if (documented.has(schema)) return;
  documented.add(schema);
  schema.security = [{ bearer: [] }];
  const requirement = auth.systemKey
    ? 'Requires the system API key.'
    : auth.permission
      ? auth.ownScope
        ? `Requires permission \`${auth.permission}\` (every device) or \`${auth.ownScope}\` (your own devices and those shared with you).`
        : `Requires permission \`${auth.permission}\`${auth.orSelf ? ' (or acting on your own user)' : ''}.`
      : auth.ownAccount
        ? `Acts on your own account: a session may; an API key${auth.oauthTokens ? '' : ' or OAuth access token'} needs permission \`${auth.ownAccount}\`.`
        : 'Requires any valid credential.';
  schema.description = [schema.description, requirement].filter(Boolean).join('\n\n');
  const permission = auth.permission ?? auth.ownAccount;
  if (permission) schema['x-permission'] = permission;
  const refusals = [AuthErrors.unauthorized];
  if (auth.systemKey) refusals.push(AuthErrors.system_key_required);
  if (permission) refusals.push(AuthErrors.forbidden);
  if (!permission && !auth.systemKey && !auth.oauthTokens) refusals.push(AuthErrors.oauth_token_not_permitted);
  schema.response = withErrorResponses((schema.response ?? {}) as Record<string, unknown>, refusals);
}

/** Per connection: the last bearer Authorization header and the hash of its token. */
const lastAuthorization = new WeakMap<object, { header: string; tokenHash: string }>();

/**
 * The SHA-256 hash of the request's bearer token. A keep-alive connection sends the same header with
 * every request, so the hash is worked out once per connection (hashing was about 3% of a cached
 * read). Behind a proxy one connection carries many clients' requests: the header is compared with
 * the previous one in constant time, and the memo goes with the connection (a WeakMap keyed by its socket).
 */
export function bearerTokenHash(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const socket = request.raw.socket as object | null;
  const last = socket && lastAuthorization.get(socket);
  if (last && sameTextConstantTime(last.header, header)) return last.tokenHash;
  const token = bearerToken(header);
  // Other schemes (Basic credentials) are never remembered.
  if (!token) return null;
  const tokenHash = hashToken(token);
  // (A request whose connection is already gone has no socket to remember it on.)
  if (socket) lastAuthorization.set(socket, { header, tokenHash });
  return tokenHash;
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match ? match[1]! : null;
}
