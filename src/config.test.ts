import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, FILE_SECRETS, loadConfig } from './config.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: undefined,
      redisUrl: undefined,
      publicUrl: undefined,
      mailFrom: 'Waygate <no-reply@localhost>',
      bootstrapAdmin: undefined,
      idAppAssertionTtlSecs: 30,
      internalToken: '',
      openapiEnabled: true,
      swaggerUiEnabled: true,
      rateLimit: {
        enabled: true,
        windowSecs: 60,
        anonymous: 120,
        user: 600,
        apiKey: 1200,
        gpsWrite: 30,
        headers: 'near-limit',
      },
      registrationEnabled: true,
      supportedLocales: ['en', 'de'],
      pwnedPasswords: { url: undefined, minCount: 1 },
      logLevel: 'info',
      embeddedDurability: 'durable',
    });
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it('takes EMBEDDED_DURABILITY=relaxed only when asked, and refuses another value', () => {
    expect(loadConfig({ EMBEDDED_DURABILITY: 'relaxed' }).embeddedDurability).toBe('relaxed');
    expect(() => loadConfig({ EMBEDDED_DURABILITY: 'off' })).toThrow(/^EMBEDDED_DURABILITY/);
  });

  it('requires PUBLIC_URL with SMTP_URL, so mail links never come from the Host header', () => {
    expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.org:25' })).toThrow(
      new ConfigError(
        'PUBLIC_URL must be set when SMTP_URL is set (links in mails must not depend on the Host header)',
      ),
    );
    expect(loadConfig({ SMTP_URL: 'smtp://mail.example.org:25', PUBLIC_URL: 'https://gps.example.org' }).smtpUrl).toBe(
      'smtp://mail.example.org:25',
    );
  });

  it('reads FRONTEND_URL without its trailing slash and refuses one that is not http(s)', () => {
    expect(loadConfig({}).frontendUrl).toBeUndefined();
    expect(loadConfig({ FRONTEND_URL: 'https://app.example.org/' }).frontendUrl).toBe('https://app.example.org');
    expect(() => loadConfig({ FRONTEND_URL: 'ftp://app.example.org' })).toThrow(/^FRONTEND_URL/);
  });

  it('reads PWNED_PASSWORDS_URL without its trailing slash, and a minimum count of at least 1', () => {
    expect(
      loadConfig({ PWNED_PASSWORDS_URL: 'https://api.pwnedpasswords.com/', PWNED_PASSWORDS_MIN_COUNT: '10' })
        .pwnedPasswords,
    ).toEqual({ url: 'https://api.pwnedpasswords.com', minCount: 10 });
    expect(() => loadConfig({ PWNED_PASSWORDS_URL: 'ftp://example.org' })).toThrow(ConfigError);
    expect(() => loadConfig({ PWNED_PASSWORDS_MIN_COUNT: '0' })).toThrow(ConfigError);
  });

  it('reads OAUTH_LOGIN_URL as given and refuses one that is not http(s)', () => {
    expect(loadConfig({}).oauthLoginUrl).toBeUndefined();
    expect(loadConfig({ OAUTH_LOGIN_URL: 'https://app.example.org/signin?from=oauth' }).oauthLoginUrl).toBe(
      'https://app.example.org/signin?from=oauth',
    );
    expect(() => loadConfig({ OAUTH_LOGIN_URL: 'javascript:alert(1)' })).toThrow(/^OAUTH_LOGIN_URL/);
  });

  it('takes an empty or blank setting as unset, as a .env line without a value means', () => {
    const config = loadConfig({ HOST: '', DATA_DIR: ' ', MAIL_FROM: '', REDIS_PREFIX: '' });
    expect({ host: config.host, mailFrom: config.mailFrom, redisPrefix: config.redisPrefix }).toEqual({
      host: '0.0.0.0',
      mailFrom: 'Waygate <no-reply@localhost>',
      redisPrefix: 'waygate:',
    });
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it('reads every secret from the file <NAME>_FILE names, without its final line break, and refuses both or an unreadable file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'waygate-secrets-'));
    try {
      const file = (name: string, content: string) => {
        writeFileSync(join(dir, name), content);
        return join(dir, name);
      };
      const config = loadConfig({
        SECRET_KEY_FILE: file('key', 'a-secret-key-of-some-length\n'),
        DATABASE_URL_FILE: file('db', 'postgres://waygate:pw@db:5432/waygate\n'),
        BOOTSTRAP_ADMIN_EMAIL: 'admin@example.org',
        BOOTSTRAP_ADMIN_USERNAME: 'admin',
        BOOTSTRAP_ADMIN_PASSWORD_FILE: file('admin', 'admin password'),
        SMTP_URL_FILE: file('smtp', 'smtp://user:pw@mail:25'),
        PUBLIC_URL: 'https://gps.example.org',
        METRICS_TOKEN_FILE: file('metrics', 'metrics-token-0123456789\r\n'),
        SYSTEM_API_KEY_FILE: file('system', 'k'.repeat(40)),
      });
      expect(config).toMatchObject({
        secretKey: 'a-secret-key-of-some-length',
        databaseUrl: 'postgres://waygate:pw@db:5432/waygate',
        bootstrapAdmin: { password: 'admin password' },
        smtpUrl: 'smtp://user:pw@mail:25',
        metricsToken: 'metrics-token-0123456789',
        systemApiKey: 'k'.repeat(40),
      });
      for (const name of FILE_SECRETS) {
        expect(() => loadConfig({ [name]: 'inline', [`${name}_FILE`]: file('x', 'from a file') })).toThrow(
          new ConfigError(`${name} and ${name}_FILE are both set: set one of them`),
        );
      }
      expect(() => loadConfig({ SECRET_KEY_FILE: join(dir, 'missing') })).toThrow(
        new ConfigError(`SECRET_KEY_FILE: cannot read ${join(dir, 'missing')} (ENOENT)`),
      );
      // The file's value is checked as the variable's would be.
      expect(() => loadConfig({ METRICS_TOKEN_FILE: file('short', 'short') })).toThrow(
        /^METRICS_TOKEN must be at least 16 characters/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('GRAPHQL_INTROSPECTION follows OPENAPI_ENABLED unless set', () => {
    expect(loadConfig({}).graphqlIntrospection).toBe(true);
    expect(loadConfig({ OPENAPI_ENABLED: 'false' }).graphqlIntrospection).toBe(false);
    expect(loadConfig({ OPENAPI_ENABLED: 'false', GRAPHQL_INTROSPECTION: 'true' }).graphqlIntrospection).toBe(true);
    expect(loadConfig({ GRAPHQL_INTROSPECTION: 'off' }).graphqlIntrospection).toBe(false);
  });

  it('trims INTERNAL_TOKEN; blank disables it', () => {
    expect(loadConfig({ INTERNAL_TOKEN: '  secret-token ' }).internalToken).toBe('secret-token');
    expect(loadConfig({ INTERNAL_TOKEN: '   ' }).internalToken).toBe('');
  });

  it('reads values and normalises URLs', () => {
    const config = loadConfig({
      PORT: '0',
      PUBLIC_URL: 'https://gps.example.org/',
      OPENAPI_ENABLED: 'false',
      SUPPORTED_LOCALES: 'en, fr ,de',
      BOOTSTRAP_ADMIN_EMAIL: 'a@example.org',
      BOOTSTRAP_ADMIN_USERNAME: 'admin',
      BOOTSTRAP_ADMIN_PASSWORD: 'long-password',
    });
    expect(config.port).toBe(0);
    expect(config.publicUrl).toBe('https://gps.example.org');
    expect(config.openapiEnabled).toBe(false);
    expect(config.supportedLocales).toEqual(['en', 'fr', 'de']);
    expect(config.bootstrapAdmin).toEqual({ email: 'a@example.org', username: 'admin', password: 'long-password' });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer from 0 to 65535, got "eighty"'],
    [{ PORT: '70000' }, 'PORT must be an integer from 0 to 65535, got "70000"'],
    [{ RATE_LIMIT_USER: '0' }, /^RATE_LIMIT_USER must be an integer/],
    [{ OPENAPI_ENABLED: 'maybe' }, 'OPENAPI_ENABLED must be true or false, got "maybe"'],
    [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL must use postgres: or postgresql:, got mysql:'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL must be a URL (redis: or rediss://...)'],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of/],
    [{ RATE_LIMIT_HEADERS: 'sometimes' }, /^RATE_LIMIT_HEADERS must be one of/],
    [{ OAUTH_PLATFORMS: 'GitLab Inc:GitLab' }, 'OAUTH_PLATFORMS: "GitLab Inc" is not a platform slug'],
  ])('stops on %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads CORS_ORIGINS as origins, refusing anything with a path', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.org, http://localhost:5173/' }).corsOrigins).toEqual([
      'https://app.example.org',
      'http://localhost:5173',
    ]);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.org/admin' })).toThrow(ConfigError);
  });

  it('configures Twitch integrations only with both client id and secret', () => {
    expect(loadConfig({}).integrations).toEqual({ twitch: undefined });
    const twitch = { INTEGRATION_TWITCH_CLIENT_ID: 'id', INTEGRATION_TWITCH_CLIENT_SECRET: 'secret' };
    expect(() => loadConfig(twitch)).toThrow('PUBLIC_URL must be set when INTEGRATION_TWITCH_* is set');
    expect(
      loadConfig({
        ...twitch,
        PUBLIC_URL: 'https://tracking.example.org',
        INTEGRATION_TWITCH_API_URL: 'http://127.0.0.1:9/helix/',
      }).integrations,
    ).toEqual({
      twitch: {
        clientId: 'id',
        clientSecret: 'secret',
        authUrl: 'https://id.twitch.tv/oauth2',
        apiUrl: 'http://127.0.0.1:9/helix',
      },
    });
    expect(() => loadConfig({ INTEGRATION_TWITCH_CLIENT_ID: 'id' })).toThrow(
      'INTEGRATION_TWITCH_CLIENT_ID and INTEGRATION_TWITCH_CLIENT_SECRET must be set together',
    );
  });

  it('reads OAUTH_PLATFORMS as slug:Name pairs, the name defaulting to the slug', () => {
    expect(loadConfig({}).oauthPlatforms).toEqual([]);
    expect(loadConfig({ OAUTH_PLATFORMS: 'gitlab:GitLab, forgejo , keycloak:Acme: Staff' }).oauthPlatforms).toEqual([
      { slug: 'gitlab', name: 'GitLab' },
      { slug: 'forgejo', name: 'forgejo' },
      { slug: 'keycloak', name: 'Acme: Staff' },
    ]);
  });

  it('never echoes a database URL, which may hold a password', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://user:hunter2@db/x' })).toThrow(/^(?!.*hunter2)/);
  });
});
