import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireSystemKey } from '../../platform/auth/hooks.js';
import { errorResponses, locateCreated, requestUrl } from '../../platform/http/envelopes.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { MessageBody } from '../../platform/http/schemas.js';
import {
  CreateSessionBody,
  CurrentSessionRefused,
  EndSessionQuery,
  InternalSession,
  LogoutAppBody,
  LogoutEverywhereBody,
  RevokedOtherSessions,
  RevokedSession,
  SessionIdParams,
  SessionList,
  SessionTokenParams,
} from './schemas.js';
import { SIGN_OUT_OF_APPS, type SessionsService } from './service.js';
import { SessionErrors } from './errors.js';
import { UserErrors } from '../users/errors.js';
import { BannedErrors } from '../bans/errors.js';

const userTags = ['Sessions'];
const internalTags = ['Sessions (internal)'];
const authTags = ['Authentication'];
const security = [{ bearer: [] }];

// Both checks run before the body or parameters are validated: a wrong caller learns nothing about its input.
async function sessionTokenOnly(request: FastifyRequest): Promise<void> {
  if (!request.caller) throw AuthErrors.unauthorized();
  if (request.caller.kind !== 'session') throw SessionErrors.session_required();
}

export async function sessionRoutes(
  fastify: FastifyInstance,
  { sessions }: { sessions: SessionsService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/users/me/sessions',
    {
      onRequest: sessionTokenOnly,
      schema: {
        tags: userTags,
        summary: 'Your active sessions',
        description: 'Unexpired sessions, most recent activity first. Needs a session token (API keys: 403).',
        security,
        response: { 200: SessionList, ...errorResponses(AuthErrors.unauthorized, SessionErrors.session_required) },
      },
    },
    async (request) => {
      const { sessions: list, currentSessionId } = await sessions.listMine(callerOf(request));
      return { sessions: list, current_session_id: currentSessionId, _links: { self: requestUrl(request) } };
    },
  );

  app.delete(
    '/v1/users/me/sessions/:session_id',
    {
      onRequest: sessionTokenOnly,
      schema: {
        tags: userTags,
        summary: 'Sign one of your other sessions out',
        description: 'The current session cannot be revoked here (400); end it with POST /v1/auth/logout.',
        security,
        params: SessionIdParams,
        response: {
          200: RevokedSession,
          400: {
            ...CurrentSessionRefused,
            'x-error-codes': [SessionErrors.current_session.code, 'request.validation'],
          },
          ...errorResponses(AuthErrors.unauthorized, SessionErrors.session_required, SessionErrors.not_found),
        },
      },
    },
    async (request, reply) => {
      const outcome = await sessions.revokeMine(request, callerOf(request), request.params.session_id);
      if (outcome === 'current') {
        const message = 'Cannot revoke the current session; use POST /v1/auth/logout instead';
        return reply
          .status(400)
          .send({ error: 'BadRequest', success: false, message, code: 'session.current_session' });
      }
      return { success: true, message: 'Session revoked' };
    },
  );

  app.delete(
    '/v1/users/me/sessions',
    {
      onRequest: sessionTokenOnly,
      schema: {
        tags: userTags,
        summary: 'Sign all your other sessions out',
        description: 'The session making the request stays signed in.',
        security,
        response: {
          200: RevokedOtherSessions,
          ...errorResponses(AuthErrors.unauthorized, SessionErrors.session_required),
        },
      },
    },
    async (request) => {
      const count = await sessions.revokeMyOthers(request, callerOf(request));
      return {
        success: true,
        revoked_count: count,
        message: `Revoked ${count} other session${count === 1 ? '' : 's'}`,
      };
    },
  );

  app.post(
    '/v1/sessions',
    {
      config: { auth: requireSystemKey() },
      schema: {
        tags: internalTags,
        summary: 'Create a session for a user (system key only)',
        description: 'For sign-in apps that authenticated the person themselves. The token is in this response only.',
        security,
        body: CreateSessionBody,
        response: {
          201: InternalSession,
          ...errorResponses(SessionErrors.expires_in_past, BannedErrors.banned, UserErrors.not_found),
        },
      },
    },
    async (request, reply) => {
      const session = await sessions.createForApp(request, request.body);
      // The interface addresses a session by its token (GET and DELETE /v1/sessions/{token}).
      locateCreated(request, reply, `/v1/sessions/${encodeURIComponent(session.sessionToken)}`);
      return session;
    },
  );

  app.get(
    '/v1/sessions/:token',
    {
      config: { auth: requireSystemKey() },
      schema: {
        tags: internalTags,
        summary: 'Look a session up by its token (system key only)',
        description: '404 when the token is unknown or the session expired.',
        security,
        params: SessionTokenParams,
        response: { 200: InternalSession, ...errorResponses(SessionErrors.not_found) },
      },
    },
    async (request) => sessions.getForApp(request.params.token),
  );

  app.delete(
    '/v1/sessions/:token',
    {
      config: { auth: requireSystemKey() },
      schema: {
        tags: internalTags,
        summary: 'End a session by its token (system key only)',
        description:
          'Idempotent: an unknown or already ended token also answers 204 (no audit event then). ' +
          'Writes a logout audit event with the reason and the app named by X-Source-Service.',
        security,
        params: SessionTokenParams,
        querystring: EndSessionQuery,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await sessions.endForApp(request, request.params.token, request.query.reason);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/auth/logout-everywhere',
    {
      config: { auth: SIGN_OUT_OF_APPS },
      // The body is optional: a request without one is validated as `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: authTags,
        summary: 'Sign out of every client app',
        description:
          'Revokes all your OAuth access and refresh tokens (consent is kept) and tells open apps to sign out ' +
          '(forceLogout). Your sessions with this service stay; see DELETE /v1/users/me/sessions. The body is optional.',
        body: LogoutEverywhereBody,
        response: { 200: MessageBody, ...errorResponses(SessionErrors.user_required) },
      },
    },
    async (request) => {
      await sessions.logoutEverywhere(request, callerOf(request), request.body?.reason);
      return { message: 'Signed out of all apps' };
    },
  );

  app.post(
    '/v1/auth/logout-app',
    {
      config: { auth: SIGN_OUT_OF_APPS },
      schema: {
        tags: authTags,
        summary: 'Sign out of one client app',
        description:
          'Revokes your OAuth tokens for that client (consent is kept) and tells it to sign out (appLogout).',
        body: LogoutAppBody,
        response: { 200: MessageBody, ...errorResponses(SessionErrors.user_required) },
      },
    },
    async (request) => {
      await sessions.logoutApp(request, callerOf(request), request.body.clientId);
      return { message: 'Signed out of the app' };
    },
  );
}
