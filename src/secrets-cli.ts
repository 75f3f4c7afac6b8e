import { createInterface } from 'node:readline/promises';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { Schema } from './platform/db/schema/index.js';
import { createSecretBox, keyFilePath, resealKeyCheck, stageNewKey } from './platform/secret-box.js';
import type { Services } from './services.js';

/** What `waygate secrets reset` forgot, by kind (also the metadata of its `secrets_reset` audit event). */
export interface Forgotten {
  two_factor_enrolments: number;
  two_factor_setups: number;
  oauth_signing_keys: number;
  integration_tokens: number;
}

export const RESET_WARNING =
  "secrets reset forgets every secret sealed with the key of secrets at rest: users' 2FA (TOTP and backup codes), " +
  'the OAuth signing keys (new ones are made on the next start) and integration tokens (users connect again). ' +
  'Points, devices, accounts and passwords stay.';

/** The operator's answer on a terminal: true for RESET; undefined when there is no terminal to ask on. */
export async function confirmedOnTerminal(): Promise<boolean | undefined> {
  if (!process.stdin.isTTY) return undefined;
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await terminal.question(`${RESET_WARNING}\nType RESET to confirm: `)).trim() === 'RESET';
  } finally {
    terminal.close();
  }
}

/**
 * `waygate secrets reset`, for a lost `secret.key` (or `SECRET_KEY`): what the lost key sealed is forgotten
 * and the key check is sealed with the new key, in one transaction with the audit event. A generated key is
 * written beside the old one first and put in place only after the commit, so a failed reset changes nothing
 * and an interrupted one never leaves a key in place that the database does not match. With `SECRET_KEY`
 * set, the new key is that value.
 */
export async function resetSecrets(
  config: Pick<Config, 'secretKey' | 'dataDir'>,
  services: Pick<Services, 'twoFactor' | 'oauth' | 'integrations' | 'audit' | 'clock'>,
  db: Kysely<Schema>,
): Promise<{ forgotten: Forgotten; key: string; replacedKeptAt: string | undefined }> {
  const staged = config.secretKey ? undefined : stageNewKey(config.dataDir);
  const box = staged?.box ?? createSecretBox(config.secretKey, config.dataDir);
  let forgotten: Forgotten;
  try {
    forgotten = await db.transaction().execute(async (trx) => {
      const twoFactor = await services.twoFactor.forgetAllSecrets(trx);
      const counts: Forgotten = {
        two_factor_enrolments: twoFactor.enrolments,
        two_factor_setups: twoFactor.setups,
        oauth_signing_keys: await services.oauth.forgetSigningKeys(trx),
        integration_tokens: await services.integrations.forgetAllTokens(trx),
      };
      await resealKeyCheck(trx, box);
      await services.audit.record(
        null,
        {
          eventType: 'secrets_reset',
          resourceType: 'secret_key',
          description:
            'The key of secrets at rest was replaced (waygate secrets reset); what the old key sealed was forgotten',
          metadata: { ...counts, key: config.secretKey ? 'SECRET_KEY' : 'DATA_DIR/secret.key' },
        },
        trx,
      );
      return counts;
    });
  } catch (err) {
    staged?.discard();
    throw err;
  }
  const replacedKeptAt = staged?.install(services.clock.now());
  return { forgotten, key: config.secretKey ? 'SECRET_KEY' : keyFilePath(config.dataDir), replacedKeptAt };
}

/** The report on stdout: what was forgotten, and where the key now is. */
export function resetReport({ forgotten, key, replacedKeptAt }: Awaited<ReturnType<typeof resetSecrets>>): string[] {
  return [
    `Forgot: ${forgotten.two_factor_enrolments} 2FA enrolments (and ${forgotten.two_factor_setups} setups under way), ` +
      `${forgotten.oauth_signing_keys} OAuth signing keys, ${forgotten.integration_tokens} integration tokens.`,
    `Secrets are now sealed with ${key}${replacedKeptAt ? `; the key it replaced is kept at ${replacedKeptAt}` : ''}.`,
    'Users with 2FA sign in with their password and enrol again; integrations ask to be connected again.',
    ...(key === 'SECRET_KEY'
      ? []
      : ['Keep a copy of the new key apart from the backups: it is not in them. Nodes sharing it need the new file.']),
  ];
}
