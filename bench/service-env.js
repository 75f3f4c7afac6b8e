/** How the bench starts the service: a bootstrap admin to create keys with, and limits out of the way. */
export const BENCH_ADMIN = { email: 'bench@example.org', username: 'bench', password: 'bench-password-1' };

export const serviceEnv = {
  LOG_LEVEL: 'warn',
  BOOTSTRAP_ADMIN_EMAIL: BENCH_ADMIN.email,
  BOOTSTRAP_ADMIN_USERNAME: BENCH_ADMIN.username,
  BOOTSTRAP_ADMIN_PASSWORD: BENCH_ADMIN.password,
  RATE_LIMIT_ANONYMOUS: '1000000000',
  RATE_LIMIT_USER: '1000000000',
  RATE_LIMIT_API_KEY: '1000000000',
  RATE_LIMIT_GPS_WRITE: '1000000000',
};
