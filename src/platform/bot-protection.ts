import type { Config } from '../config.js';
import { defineErrors } from './http/errors.js';

export const BotCheckErrors = defineErrors('bot_check', {
  token_missing: [400, 'turnstile_token is required'],
  failed: [400, 'Bot check failed'],
  unavailable: [503, 'The bot check is unavailable; try again shortly'],
});

const VERIFY_TIMEOUT_MS = 5000;

/**
 * With BOT_PROTECTION_SECRET set, the credential endpoints require a
 * `turnstile_token`, verified by a form POST of secret, response and remoteip to
 * BOT_PROTECTION_VERIFY_URL (which answers `{ "success": true|false }`).
 * Without the secret the field is ignored.
 */
export function createBotProtection(config: Config['botProtection']) {
  return {
    async verify(token: string | undefined, remoteIp: string): Promise<void> {
      if (!config.secret) return;
      if (!token) throw BotCheckErrors.token_missing();
      let success: unknown;
      try {
        const response = await fetch(config.verifyUrl, {
          method: 'POST',
          body: new URLSearchParams({ secret: config.secret, response: token, remoteip: remoteIp }),
          signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
        });
        success = ((await response.json()) as { success?: unknown }).success;
      } catch {
        // Fail closed: without a verdict the request is not let through.
        throw BotCheckErrors.unavailable();
      }
      if (success !== true) throw BotCheckErrors.failed();
    },
  };
}

export type BotProtection = ReturnType<typeof createBotProtection>;
