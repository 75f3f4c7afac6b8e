import type { FastifyRequest } from 'fastify';
import { refusalFor, requireAuthenticated } from '../../platform/auth/hooks.js';
import { SessionErrors } from './errors.js';

/** `config.auth` of a route a person uses on their own account: any credential, then `sessionOnly` narrows it. */
export const SESSION_AUTH = requireAuthenticated();

/** Before validation, as the guard: an API key (or an app's token) learns nothing about the input. */
export async function sessionOnly(request: FastifyRequest): Promise<void> {
  const refused = refusalFor(request.caller, SESSION_AUTH);
  if (refused) throw refused;
  if (request.caller!.kind !== 'session') throw SessionErrors.session_required();
}
