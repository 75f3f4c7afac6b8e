/**
 * The only routes a system key may call (interface spec, Authentication 4), matched against the route
 * pattern (`/v1/sessions/:token`). A prefix matches the route itself and anything below it,
 * segment-wise: `/v1/sessions` matches `/v1/sessions/:token`, not `/v1/sessions-old`.
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

export function systemKeyAllowed(route: string): boolean {
  const normalised = route.length > 1 ? route.replace(/\/+$/, '') : route;
  return (
    EXACT.has(normalised) || PREFIXES.some((prefix) => normalised === prefix || normalised.startsWith(`${prefix}/`))
  );
}
