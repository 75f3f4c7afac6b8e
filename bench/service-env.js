/** How the bench starts the service: a bootstrap admin to create keys with, and limits out of the way. */
export const BENCH_ADMIN = { email: 'bench@example.org', username: 'bench', password: 'bench-password-1' };

/** The id app's assertion secret: the OAuth refresh scenario signs its users in through the handoff. */
export const BENCH_ID_APP_SECRET = 'bench-id-app-secret-0123456789abcdef';

export const serviceEnv = {
  LOG_LEVEL: 'warn',
  // The OAuth provider needs an issuer; nothing fetches it.
  PUBLIC_URL: 'http://127.0.0.1',
  INTERNAL_APP_ID_SECRET: BENCH_ID_APP_SECRET,
  BOOTSTRAP_ADMIN_EMAIL: BENCH_ADMIN.email,
  BOOTSTRAP_ADMIN_USERNAME: BENCH_ADMIN.username,
  BOOTSTRAP_ADMIN_PASSWORD: BENCH_ADMIN.password,
  RATE_LIMIT_ANONYMOUS: '1000000000',
  RATE_LIMIT_USER: '1000000000',
  RATE_LIMIT_API_KEY: '1000000000',
  RATE_LIMIT_GPS_WRITE: '1000000000',
};
