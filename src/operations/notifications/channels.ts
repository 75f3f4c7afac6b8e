import type { Static } from 'typebox';
import type { SecretBox } from '../../platform/secret-box.js';
import { compileBodyCheck } from '../../platform/http/validation.js';
import { RequestErrors } from '../../platform/http/errors.js';
import type { NotificationChannelType } from '../../platform/db/schema/operations.js';
import { Type } from 'typebox';
import { ChannelConfigs, type NotificationChannel } from './schemas.js';
import type { ChannelRow } from './repo.js';

/** The fields of each type's configuration that are secrets: sealed at rest, never shown. */
const SECRET_FIELDS: Record<NotificationChannelType, readonly string[]> = {
  email: [],
  webhook: ['secret'],
  ntfy: ['token'],
  gotify: ['token'],
  telegram: ['bot_token'],
  web_push: ['keys'],
};

// Checked as `{ config }` so that a message names the body field (`config.topic`).
const checks = Object.fromEntries(
  Object.entries(ChannelConfigs).map(([type, schema]) => [
    type,
    compileBodyCheck(Type.Object({ config: schema }, { additionalProperties: false })),
  ]),
) as Record<NotificationChannelType, (data: unknown) => string | undefined>;

/** A channel's configuration checked against its type's schema: 400 naming the field. */
export function checkConfig(type: NotificationChannelType, config: Record<string, unknown>): void {
  const problem = checks[type]({ config });
  if (problem) throw RequestErrors.validation(problem);
}

/** The configuration split into what may be shown and the secrets (one sealed JSON object, or null for none). */
export function splitConfig(
  type: NotificationChannelType,
  config: Record<string, unknown>,
  box: Pick<SecretBox, 'seal'>,
  keptSecrets: Record<string, unknown> = {},
): { config: Record<string, unknown>; secrets_sealed: string | null } {
  const shown: Record<string, unknown> = {};
  const secrets: Record<string, unknown> = { ...keptSecrets };
  for (const [name, value] of Object.entries(config)) {
    if (SECRET_FIELDS[type].includes(name)) secrets[name] = value;
    else shown[name] = value;
  }
  return {
    config: shown,
    secrets_sealed: Object.keys(secrets).length > 0 ? box.seal(JSON.stringify(secrets)) : null,
  };
}

/** The secrets of a channel, opened. */
export function secretsOf(
  row: Pick<ChannelRow, 'secrets_sealed'>,
  box: Pick<SecretBox, 'open'>,
): Record<string, unknown> {
  return row.secrets_sealed ? (JSON.parse(box.open(row.secrets_sealed)) as Record<string, unknown>) : {};
}

/** A channel as the API shows it: no secrets, only whether it holds one. */
export function channelView(row: ChannelRow): Static<typeof NotificationChannel> {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    enabled: row.enabled,
    config: row.config,
    has_token: row.secrets_sealed !== null,
    last_status: row.last_status,
    last_error: row.last_error,
    last_success_at: row.last_success_at,
    last_failure_at: row.last_failure_at,
    failing: row.failing,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
