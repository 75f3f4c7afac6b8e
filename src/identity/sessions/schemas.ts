import { Type } from 'typebox';
import { SelfLinks } from '../../platform/http/envelopes.js';
import { Body, DateTime, named, Uuid } from '../../platform/http/schemas.js';

/** Reasons a calling app may give when it ends a session through DELETE /v1/sessions/{token}. */
export const SESSION_END_REASONS = [
  'user_initiated',
  'token_deleted',
  'session_expired',
  'revoked',
  'no_access',
] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

export const ActiveSession = named(
  'Session',
  Type.Object({
    id: Type.String(),
    ip_address: Type.String({ description: 'Empty when unknown' }),
    user_agent: Type.String({ description: 'Empty when unknown' }),
    device_type: Type.String({ enum: ['desktop', 'mobile', 'tablet'] }),
    browser_name: Type.String({ description: 'Parsed from the user agent, with its version; empty when unknown' }),
    os_name: Type.String({ description: 'Parsed from the user agent, with its version; empty when unknown' }),
    provider: Type.String({ description: 'Slug of the platform the session was signed in with' }),
    provider_name: Type.String({ description: 'Display name of that platform (the slug when it no longer exists)' }),
    last_activity_at: DateTime,
    created_at: DateTime,
    expires_at: DateTime,
    is_current: Type.Boolean(),
  }),
);

export const SessionList = Type.Object({
  sessions: Type.Array(ActiveSession),
  current_session_id: Type.String(),
  _links: SelfLinks,
});

export const SessionIdParams = Type.Object({ session_id: Uuid });

export const RevokedSession = Type.Object({ success: Type.Boolean(), message: Type.String() });

/**
 * 400 of DELETE /v1/users/me/sessions/{id}: the spec's `{ success: false, message }` (plus the usual
 * `error`) for the current session; a malformed id answers the plain `{ error, message }`.
 */
export const CurrentSessionRefused = Type.Object({
  error: Type.String(),
  success: Type.Optional(Type.Boolean()),
  message: Type.String(),
  code: Type.String({ description: 'session.current_session, or request.validation for a malformed id' }),
});

export const RevokedOtherSessions = Type.Object({
  success: Type.Boolean(),
  revoked_count: Type.Integer(),
  message: Type.String(),
});

export const CreateSessionBody = Body(
  {
    userId: Uuid,
    expires: Type.String({ format: 'date-time', description: 'When the session ends; must be in the future' }),
  },
  { example: { userId: '3f1c2a9e-8b7d-4c5e-9a1f-2b3c4d5e6f70', expires: '2030-01-31T12:00:00Z' } },
);

/** The internal session shape (camelCase, as the calling apps' session adapters expect). */
export const InternalSession = Type.Object({
  id: Type.String(),
  sessionToken: Type.String(),
  userId: Type.String(),
  expires: DateTime,
  created_at: DateTime,
});

export const SessionTokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) });

export const EndSessionQuery = Type.Object({
  reason: Type.Unsafe<SessionEndReason>({ type: 'string', enum: [...SESSION_END_REASONS], default: 'user_initiated' }),
});

export const LogoutEverywhereBody = Body(
  {
    reason: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Recorded in the audit event; default sso_logout' }),
    ),
  },
  { example: { reason: 'Lost my phone' } },
);

export const LogoutAppBody = Body(
  { clientId: Uuid },
  { example: { clientId: '7a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d' } },
);
