/**
 * The only routes a system key may call (interface spec, Authentication 4).
 * A prefix matches the path itself and anything below it, segment-wise:
 * `/v1/sessions` matches `/v1/sessions/abc`, not `/v1/sessions-old`.
 */
const EXACT = new Set([
  '/v1/users/oauth',
  '/v1/auth/login',
  '/v1/auth/2fa/check',
  '/v1/auth/verify-email',
  '/v1/auth/register/verify',
  '/v1/internal/audit',
  '/v1/gql',
  '/v1/ws',
]);
const PREFIXES = ['/v1/users/email', '/v1/sessions', '/v1/auth/reset-password'];

export function systemKeyAllowed(path: string): boolean {
  const normalised = path.length > 1 ? path.replace(/\/+$/, '') : path;
  return EXACT.has(normalised) || PREFIXES.some((prefix) => normalised === prefix || normalised.startsWith(`${prefix}/`));
}
