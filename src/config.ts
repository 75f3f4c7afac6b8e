import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Every setting comes from the environment (plus `.env`). A bad value stops the
 * start with one line naming the variable. The configuration table in docs/configuration.md
 * lists the same names and defaults.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  embeddedSharedBuffers: string;
  /** `durable`: every commit is flushed to the disk before it is answered; `relaxed`: left to the OS cache. */
  embeddedDurability: 'durable' | 'relaxed';
  redisUrl: string | undefined;
  redisPrefix: string;
  publicUrl: string | undefined;
  /** FRONTEND_URL: where mailed links lead (`/verify-email`, `/reset-password`) instead of this service's own pages. */
  frontendUrl: string | undefined;
  /** OAUTH_LOGIN_URL: a front end's sign-in page that authorizations send the browser to instead of this service's own. */
  oauthLoginUrl: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  bootstrapAdmin: { email: string; username: string; password: string } | undefined;
  systemApiKey: string | undefined;
  internalAppSecrets: { id?: string; backend?: string; policies?: string };
  idAppAssertionTtlSecs: number;
  internalToken: string;
  openapiEnabled: boolean;
  swaggerUiEnabled: boolean;
  /** GRAPHQL_INTROSPECTION: schema introspection on /v1/gql and the SDL at /v1/schema; defaults to OPENAPI_ENABLED. */
  graphqlIntrospection: boolean;
  rateLimit: {
    enabled: boolean;
    windowSecs: number;
    anonymous: number;
    user: number;
    apiKey: number;
    gpsWrite: number;
    /** When responses other than 429 carry the X-RateLimit-* headers (429 always does). */
    headers: 'near-limit' | 'always';
  };
  registrationEnabled: boolean;
  supportedLocales: string[];
  botProtection: { secret: string | undefined; verifyUrl: string; siteKey?: string };
  waterLevelApiUrl: string | undefined;
  geoipDb: string | undefined;
  /** PWNED_PASSWORDS_URL (the range API's base; unset: no check) and PWNED_PASSWORDS_MIN_COUNT. */
  pwnedPasswords: { url: string | undefined; minCount: number };
  /** OAUTH_PLATFORMS: login providers beyond the shipped ones, made sure of at start (disabled when new). */
  oauthPlatforms: { slug: string; name: string }[];
  /** METRICS_TOKEN: the bearer token Prometheus sends to GET /metrics; unset: no metrics. */
  metricsToken?: string;
  /** CORS_ORIGINS: origins whose pages may call the API from a browser; empty: no CORS headers at all. */
  corsOrigins: string[];
  /** INTEGRATION_TWITCH_*: streaming-platform integrations; a platform left out is listed as disabled. */
  integrations: { twitch?: { clientId: string; clientSecret: string; authUrl: string; apiUrl: string } };
  /** The web console at /console/ (CONSOLE_ENABLED), its map tiles (MAP_TILE_URL, MAP_TILE_ATTRIBUTION) and when a device counts as stale. */
  console: { enabled: boolean; tileUrl: string; tileAttribution: string; staleAfterSecs: number };
  /**
   * Notifications (docs/notifications.md): NOTIFY_ALLOW_PRIVATE_TARGETS lets webhooks, ntfy and Gotify reach
   * loopback, private and link-local addresses; NOTIFY_NTFY_SERVER and NOTIFY_TELEGRAM_BOT_TOKEN are the
   * instance's, used by channels that name none.
   */
  notifications: {
    allowPrivateTargets: boolean;
    ntfyServer: string | undefined;
    telegramBotToken: string | undefined;
    /** NOTIFY_TELEGRAM_API_URL: the Bot API's base (a local Bot API server); default https://api.telegram.org. */
    telegramApiUrl: string | undefined;
  };
  secretKey: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  bodyLimitBytes: number;
  /** The largest file POST /v1/gps/import takes (spooled to disk, never held in memory). */
  importMaxBytes: number;
  /** Imports one user may have uploading or running on a node at once. */
  importMaxPerUser: number;
  /** Imports a node runs at once. */
  importMaxConcurrent: number;
  /** Bytes a node's spooled uploads may take on disk together. */
  importSpoolMaxBytes: number;
  /** An import upload slower than this over a window is cut off (408). */
  importMinBytesPerSecond: number;
  /** The window over which an upload's rate is measured (IMPORT_RATE_WINDOW_SECS, in ms). */
  importRateWindowMs: number;
  shutdownTimeoutSecs: number;
  trustProxy: boolean | number | string;
}

export class ConfigError extends Error {}

/**
 * The OAuth issuer's base: PUBLIC_URL, or this machine's own address (`http://localhost:PORT`, what
 * `npm start` serves) so a fresh install works locally. Never the request's Host header: the issuer is
 * signed into every ID token and must be the same for all clients.
 */
export const oauthIssuerBase = (config: Pick<Config, 'publicUrl' | 'port'>): string =>
  config.publicUrl ?? `http://localhost:${config.port}`;

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const config = readConfig(env);
  // Mail links are built from PUBLIC_URL; without it they would take their host from the request's
  // Host header, which a client chooses (a reset link pointing at an attacker's site).
  if (config.smtpUrl && !config.publicUrl) {
    throw new ConfigError(
      'PUBLIC_URL must be set when SMTP_URL is set (links in mails must not depend on the Host header)',
    );
  }
  // The same for the OAuth callback an integration registers with the platform, and the origins its
  // browser may be sent back to.
  if (config.integrations.twitch && !config.publicUrl) {
    throw new ConfigError(
      'PUBLIC_URL must be set when INTEGRATION_TWITCH_* is set (the callback URL must not depend on the Host header)',
    );
  }
  return config;
}

/** The settings that are secrets: each may come from a file named by `<NAME>_FILE` (Docker and Kubernetes secrets). */
export const FILE_SECRETS = [
  'SECRET_KEY',
  'DATABASE_URL',
  'BOOTSTRAP_ADMIN_PASSWORD',
  'SMTP_URL',
  'METRICS_TOKEN',
  'SYSTEM_API_KEY',
] as const;

/**
 * The one rule for secrets in files: `<NAME>_FILE` names a file whose content (without its final line
 * break) is the value of `<NAME>`. Both set is a mistake (which one would win is a guess); a file that
 * cannot be read stops the start naming the variable, never echoing the content.
 */
function withSecretFiles(env: Env): Env {
  const resolved: Env = { ...env };
  for (const name of FILE_SECRETS) {
    const path = env[`${name}_FILE`]?.trim();
    if (!path) continue;
    if (env[name]?.trim()) throw new ConfigError(`${name} and ${name}_FILE are both set: set one of them`);
    try {
      resolved[name] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new ConfigError(`${name}_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return resolved;
}

function readConfig(env: Env): Config {
  const read = new EnvReader(withSecretFiles(env));
  const adminParts = ['BOOTSTRAP_ADMIN_EMAIL', 'BOOTSTRAP_ADMIN_USERNAME', 'BOOTSTRAP_ADMIN_PASSWORD'] as const;
  const [adminEmail, adminUsername, adminPassword] = adminParts.map((name) => read.optional(name));
  return {
    port: read.integer('PORT', 8080, 0, 65535),
    host: read.string('HOST', '0.0.0.0'),
    dataDir: resolve(read.string('DATA_DIR', './data')),
    databaseUrl: read.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolSize: read.integer('DATABASE_POOL_SIZE', 10, 1, 1000),
    embeddedSharedBuffers: read.pattern('EMBEDDED_SHARED_BUFFERS', '16MB', /^\d+(kB|MB|GB)$/, 'a size such as 32MB'),
    embeddedDurability: read.pattern('EMBEDDED_DURABILITY', 'durable', /^(durable|relaxed)$/, 'durable or relaxed') as
      'durable' | 'relaxed',
    redisUrl: read.url('REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: read.string('REDIS_PREFIX', 'waygate:'),
    publicUrl: read.url('PUBLIC_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    frontendUrl: read.url('FRONTEND_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    oauthLoginUrl: read.url('OAUTH_LOGIN_URL', ['http:', 'https:']),
    smtpUrl: read.url('SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: read.string('MAIL_FROM', 'Waygate <no-reply@localhost>'),
    bootstrapAdmin:
      adminEmail && adminUsername && adminPassword
        ? { email: adminEmail, username: adminUsername, password: adminPassword }
        : undefined,
    systemApiKey: read.secret('SYSTEM_API_KEY', 32),
    internalAppSecrets: {
      id: read.optional('INTERNAL_APP_ID_SECRET'),
      backend: read.optional('INTERNAL_APP_BACKEND_SECRET'),
      policies: read.optional('INTERNAL_APP_POLICIES_SECRET'),
    },
    idAppAssertionTtlSecs: read.integer('ID_APP_ASSERTION_TTL_SECS', 30, 1, 3600),
    internalToken: read.optional('INTERNAL_TOKEN') ?? '',
    openapiEnabled: read.boolean('OPENAPI_ENABLED', true),
    swaggerUiEnabled: read.boolean('SWAGGER_UI_ENABLED', true),
    graphqlIntrospection: read.boolean('GRAPHQL_INTROSPECTION', read.boolean('OPENAPI_ENABLED', true)),
    rateLimit: {
      enabled: read.boolean('RATE_LIMIT_ENABLED', true),
      windowSecs: read.integer('RATE_LIMIT_WINDOW_SECS', 60, 1, 86_400),
      anonymous: read.integer('RATE_LIMIT_ANONYMOUS', 120, 1),
      user: read.integer('RATE_LIMIT_USER', 600, 1),
      apiKey: read.integer('RATE_LIMIT_API_KEY', 1200, 1),
      gpsWrite: read.integer('RATE_LIMIT_GPS_WRITE', 30, 1),
      headers: read.oneOf('RATE_LIMIT_HEADERS', 'near-limit', ['near-limit', 'always'] as const),
    },
    registrationEnabled: read.boolean('REGISTRATION_ENABLED', true),
    supportedLocales: read.list('SUPPORTED_LOCALES', ['en', 'de']),
    botProtection: {
      secret: read.optional('BOT_PROTECTION_SECRET'),
      siteKey: read.optional('BOT_PROTECTION_SITE_KEY'),
      verifyUrl:
        read.url('BOT_PROTECTION_VERIFY_URL', ['http:', 'https:']) ??
        'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    },
    waterLevelApiUrl: read.url('WATER_LEVEL_API_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    geoipDb: read.optional('GEOIP_DB'),
    pwnedPasswords: {
      url: read.url('PWNED_PASSWORDS_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
      minCount: read.integer('PWNED_PASSWORDS_MIN_COUNT', 1, 1),
    },
    oauthPlatforms: read.list('OAUTH_PLATFORMS', []).map((item) => oauthPlatformOf(item)),
    integrations: { twitch: twitchIntegrationOf(read) },
    corsOrigins: read.list('CORS_ORIGINS', []).map(corsOriginOf),
    metricsToken: metricsTokenOf(read.optional('METRICS_TOKEN')),
    console: {
      enabled: read.boolean('CONSOLE_ENABLED', true),
      tileUrl: tileUrlOf(read.optional('MAP_TILE_URL') ?? 'https://tile.openstreetmap.org/{z}/{x}/{y}.png'),
      tileAttribution: read.string('MAP_TILE_ATTRIBUTION', '© OpenStreetMap contributors'),
      staleAfterSecs: read.integer('CONSOLE_STALE_AFTER_SECS', 600, 10, 31_536_000),
    },
    notifications: {
      allowPrivateTargets: read.boolean('NOTIFY_ALLOW_PRIVATE_TARGETS', false),
      ntfyServer: read.url('NOTIFY_NTFY_SERVER', ['http:', 'https:'])?.replace(/\/+$/, ''),
      telegramBotToken: read.optional('NOTIFY_TELEGRAM_BOT_TOKEN'),
      telegramApiUrl: read.url('NOTIFY_TELEGRAM_API_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    },
    secretKey: read.optional('SECRET_KEY'),
    logLevel: read.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    bodyLimitBytes: read.integer('BODY_LIMIT_BYTES', 1_048_576, 1024),
    importMaxBytes: read.integer('IMPORT_MAX_BYTES', 1_073_741_824, 1024),
    importMaxPerUser: read.integer('IMPORT_MAX_PER_USER', 2, 1, 1000),
    importMaxConcurrent: read.integer('IMPORT_MAX_CONCURRENT', 8, 1, 1000),
    importSpoolMaxBytes: read.integer('IMPORT_SPOOL_MAX_BYTES', 4_294_967_296, 1024),
    importMinBytesPerSecond: read.integer('IMPORT_MIN_BYTES_PER_SECOND', 1024, 0),
    importRateWindowMs: read.integer('IMPORT_RATE_WINDOW_SECS', 30, 1, 3600) * 1000,
    shutdownTimeoutSecs: read.integer('SHUTDOWN_TIMEOUT_SECS', 10, 1, 600),
    trustProxy: read.trustProxy('TRUST_PROXY'),
  };
}

/** An http(s) tile template naming {z}, {x} and {y}. */
function tileUrlOf(template: string): string {
  if (!/^https?:\/\/[^/]+/.test(template) || !['{z}', '{x}', '{y}'].every((part) => template.includes(part))) {
    throw new ConfigError(`MAP_TILE_URL must be an http(s) URL template with {z}, {x} and {y}, got "${template}"`);
  }
  return template;
}

const PLATFORM_SLUG = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** `slug:Display Name` (the name defaults to the slug). */
function oauthPlatformOf(item: string): { slug: string; name: string } {
  const [slug = '', ...rest] = item.split(':');
  const name = rest.join(':').trim() || slug.trim();
  if (!PLATFORM_SLUG.test(slug.trim())) {
    throw new ConfigError(
      `OAUTH_PLATFORMS: "${slug}" is not a platform slug (lower-case letters, digits, - and _, at most 40)`,
    );
  }
  return { slug: slug.trim(), name: name.slice(0, 100) };
}

function metricsTokenOf(token: string | undefined): string | undefined {
  if (token !== undefined && token.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters');
  return token;
}

/** An origin as browsers send it (`https://app.example.org`, no path), or `*` for any. */
function corsOriginOf(item: string): string {
  if (item === '*') return item;
  let url: URL;
  try {
    url = new URL(item);
  } catch {
    throw new ConfigError(`CORS_ORIGINS: "${item}" is not an origin such as https://app.example.org`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.origin !== item.replace(/\/$/, '')) {
    throw new ConfigError(
      `CORS_ORIGINS: "${item}" is not an origin such as https://app.example.org (scheme, host and port only)`,
    );
  }
  return url.origin;
}

/** Twitch is configured when client id and secret are both set (one without the other is a mistake); the URLs are checked either way. */
function twitchIntegrationOf(read: EnvReader): Config['integrations']['twitch'] {
  const clientId = read.optional('INTEGRATION_TWITCH_CLIENT_ID');
  const clientSecret = read.optional('INTEGRATION_TWITCH_CLIENT_SECRET');
  const authUrl = read.url('INTEGRATION_TWITCH_AUTH_URL', ['http:', 'https:']) ?? 'https://id.twitch.tv/oauth2';
  const apiUrl = read.url('INTEGRATION_TWITCH_API_URL', ['http:', 'https:']) ?? 'https://api.twitch.tv/helix';
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret)
    throw new ConfigError('INTEGRATION_TWITCH_CLIENT_ID and INTEGRATION_TWITCH_CLIENT_SECRET must be set together');
  return { clientId, clientSecret, authUrl: authUrl.replace(/\/+$/, ''), apiUrl: apiUrl.replace(/\/+$/, '') };
}

/** Reads `.env` from the working directory without overriding variables already set. */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

class EnvReader {
  constructor(private readonly env: Env) {}

  optional(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  /** As every other setting, an empty (or blank) value means unset: `HOST=` in a .env file is the default, not ''. */
  string(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  integer(name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.optional(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(raw)) return true;
    if (['false', '0', 'no', 'off'].includes(raw)) return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.optional(name);
    if (raw === undefined) return undefined;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError(`${name} must be a URL (${protocols.join(' or ')}//...)`);
    }
    if (!protocols.includes(url.protocol)) {
      throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${url.protocol}`);
    }
    return raw;
  }

  list(name: string, fallback: string[]): string[] {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const items = raw
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    if (items.length === 0) throw new ConfigError(`${name} must list at least one value`);
    return items;
  }

  /** false (default), true, a hop count, or a comma-separated list of proxy addresses/CIDRs. */
  trustProxy(name: string): boolean | number | string {
    const raw = this.optional(name);
    if (raw === undefined || ['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
    if (['true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (/^\d+$/.test(raw)) return Number(raw);
    if (/^[0-9a-fA-F.:/, ]+$/.test(raw)) return raw;
    throw new ConfigError(`${name} must be true, false, a hop count or a list of addresses, got "${raw}"`);
  }

  /** A secret that must be long enough to resist guessing; the value is never echoed. */
  secret(name: string, minLength: number): string | undefined {
    const value = this.optional(name);
    if (value !== undefined && value.length < minLength)
      throw new ConfigError(`${name} must be at least ${minLength} characters`);
    return value;
  }

  pattern(name: string, fallback: string, format: RegExp, expected: string): string {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (!format.test(raw)) throw new ConfigError(`${name} must be ${expected}, got "${raw}"`);
    return raw;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (!allowed.includes(raw as T))
      throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
    return raw as T;
  }
}
