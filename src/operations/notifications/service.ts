import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { Caches } from '../../platform/kv/cache.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { MailContact } from '../../platform/mail/messages.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { RequestErrors } from '../../platform/http/errors.js';
import type { SharingService } from '../../tracking/sharing/service.js';
import type { GeofencesService } from '../../tracking/geofences/service.js';
import { NotificationErrors } from './errors.js';
import { createNotificationsRepo, type ChannelRow, type RuleRow } from './repo.js';
import { channelView, checkConfig, secretsOf, splitConfig } from './channels.js';
import { privateTargetProblem } from './targets.js';
import {
  newVapidKeys,
  newWebhookSecret,
  sendEmail,
  sendGotify,
  sendNtfy,
  sendTelegram,
  sendWebhook,
  sendWebPush,
  type GotifyConfig,
  type Notification,
  type NtfyConfig,
  type PushSubscriptionConfig,
  type SendResult,
  type TelegramConfig,
  type WebhookConfig,
} from './index.js';

/** A channel's configuration with its secrets, read as its type's (the type's schema checked it when stored). */
type AnyConfig = WebhookConfig & NtfyConfig & GotifyConfig & TelegramConfig & PushSubscriptionConfig;
import { TELEGRAM_API_URL } from './senders/telegram.js';
import type { CreateChannelBody, CreateRuleBody, UpdateChannelBody, UpdateRuleBody } from './schemas.js';

export const MAX_CHANNELS_PER_USER = 50;
export const MAX_RULES_PER_USER = 100;

export interface NotificationSettings {
  /** NOTIFY_ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets: boolean;
  /** The instance's ntfy server and Telegram bot, for channels that name none. */
  ntfyServer: string | undefined;
  telegramBotToken: string | undefined;
  /** Where the Telegram Bot API is (tests: a fake). */
  telegramApiUrl?: string;
  /** The VAPID subject (`mailto:` or https URL). */
  vapidSubject: string;
  /** Where a notification's link leads (the console), if anywhere. */
  consoleUrl: string | undefined;
}

export interface NotificationsDeps {
  db: Kysely<Schema>;
  clock: Clock;
  log: FastifyBaseLogger;
  caches: Caches;
  secretBox: Pick<SecretBox, 'seal' | 'open'>;
  mailer: Pick<Mailer, 'send'>;
  contactOf: (userId: string) => Promise<MailContact | undefined>;
  sharing: Pick<SharingService, 'accessOf'>;
  geofences: Pick<GeofencesService, 'get'>;
  settings: NotificationSettings;
}

/** A rule as the API shows it. */
const ruleView = ({ user_id: _user, quiet_from, quiet_to, ...rule }: RuleRow) => ({
  ...rule,
  quiet_hours: quiet_from && quiet_to ? { from: quiet_from, to: quiet_to } : null,
});

/**
 * Notification channels and rules of each user (docs/notifications.md), and sending to a channel. The outbox
 * (outbox.ts) matches events against the rules and sends through `send`.
 */
export function createNotificationsService(deps: NotificationsDeps) {
  const repo = createNotificationsRepo(deps.db);
  const { settings } = deps;
  const ruleListeners: (() => void)[] = [];
  // Holds no values: its invalidations tell every node that rules changed (their matchers read them again).
  const ruleChanges = deps.caches.define<never>('notification_rules_changed', {
    sharedTtlSecs: 1,
    localTtlMs: 1,
    onInvalidated: () => ruleListeners.forEach((listener) => listener()),
  });
  const rulesChanged = () => ruleChanges.invalidate(['all']);

  async function ownChannel(userId: string, id: string) {
    const row = await repo.channel(id, userId);
    if (!row) throw NotificationErrors.channel_not_found();
    return row;
  }

  let vapid: Promise<{ publicKey: string; privateKey: string }> | undefined;
  async function loadVapid() {
    let stored = await repo.vapidKeys();
    if (!stored) {
      const keys = await newVapidKeys();
      await repo.insertVapidKeys(keys.publicKey, deps.secretBox.seal(keys.privateKey));
      stored = await repo.vapidKeys();
    }
    return { publicKey: stored!.public_key, privateKey: deps.secretBox.open(stored!.private_key_sealed) };
  }
  /** The instance's VAPID key pair, made by the first node that needs it. */
  function vapidKeys() {
    vapid ??= loadVapid();
    vapid.catch(() => (vapid = undefined));
    return vapid;
  }

  /** Refused before sending: a server of the channel's that resolves to a private address (unless allowed). */
  async function targetRefused(url: string): Promise<SendResult | undefined> {
    if (settings.allowPrivateTargets) return undefined;
    const problem = await privateTargetProblem(url);
    if (!problem) return undefined;
    return { ok: false, status: null, detail: problem.detail, retryable: problem.retryable };
  }

  const failed = (detail: string): SendResult => ({ ok: false, status: null, detail, retryable: false });

  /** Sends once through the channel's type; never throws. */
  async function send(channel: ChannelRow, notification: Notification): Promise<SendResult> {
    const options = { clock: deps.clock };
    let config: AnyConfig;
    try {
      config = { ...channel.config, ...secretsOf(channel, deps.secretBox) } as unknown as AnyConfig;
    } catch {
      return failed("the channel's secrets cannot be opened with this SECRET_KEY: save its configuration again");
    }
    try {
      switch (channel.type) {
        case 'email': {
          const contact = await deps.contactOf(channel.user_id);
          return contact ? await sendEmail(deps.mailer, contact, notification) : failed('the user is gone');
        }
        case 'webhook':
          return (await targetRefused(config.url)) ?? (await sendWebhook(config, notification, options));
        case 'ntfy': {
          const server = (config.server as string | undefined) ?? settings.ntfyServer;
          if (!server) return failed('no ntfy server: the channel names none and the instance has no default');
          return (await targetRefused(server)) ?? (await sendNtfy({ ...config, server }, notification, options));
        }
        case 'gotify':
          return (await targetRefused(config.server)) ?? (await sendGotify(config, notification, options));
        case 'telegram': {
          const botToken = (config.bot_token as string | undefined) ?? settings.telegramBotToken;
          if (!botToken) return failed('no Telegram bot: the channel names none and the instance has no token');
          return await sendTelegram({ ...config, bot_token: botToken }, notification, {
            ...options,
            apiUrl: settings.telegramApiUrl ?? TELEGRAM_API_URL,
          });
        }
        case 'web_push': {
          const refused = await targetRefused(config.endpoint);
          if (refused) return refused;
          const keys = await vapidKeys();
          return await sendWebPush(config, notification, {
            ...options,
            vapid: { subject: settings.vapidSubject, ...keys },
          });
        }
      }
    } catch (err) {
      deps.log.warn({ err, channel: channel.id }, 'sending a notification failed');
      return { ok: false, status: null, detail: 'the notification could not be sent', retryable: true };
    }
  }

  /** The devices, geofences and channels a rule names must be the user's to use: 400 naming the field. */
  async function checkRule(userId: string, fields: Partial<Static<typeof CreateRuleBody>>) {
    if (fields.channel_ids) {
      const own = await repo.ownChannelIds(userId, fields.channel_ids);
      const other = fields.channel_ids.find((id) => !own.has(id));
      if (other) throw RequestErrors.validation(`Body field 'channel_ids' names a channel that is not yours: ${other}`);
    }
    if (fields.device_ids || fields.geofence_ids) {
      const access = await deps.sharing.accessOf(userId);
      const unseen = fields.device_ids?.find((id) => !access.seesLive(id));
      if (unseen) throw RequestErrors.validation(`Body field 'device_ids' names a device you cannot see: ${unseen}`);
      for (const id of fields.geofence_ids ?? []) {
        try {
          await deps.geofences.get({ all: false, userId, access }, id);
        } catch {
          throw RequestErrors.validation(`Body field 'geofence_ids' names a geofence you cannot see: ${id}`);
        }
      }
    }
  }

  const quietFields = (quiet: { from: string; to: string } | null | undefined) =>
    quiet === undefined ? {} : { quiet_from: quiet?.from ?? null, quiet_to: quiet?.to ?? null };

  return {
    async channels(userId: string, limit: number, offset: number) {
      const [rows, total] = await Promise.all([repo.channels(userId, limit, offset), repo.countChannels(userId)]);
      return { rows: rows.map(channelView), total };
    },

    channel: async (userId: string, id: string) => channelView(await ownChannel(userId, id)),

    /** A webhook's signing secret is made here and answered this once. */
    async createChannel(userId: string, body: Static<typeof CreateChannelBody>) {
      checkConfig(body.type, body.config);
      if ((await repo.countChannels(userId)) >= MAX_CHANNELS_PER_USER) throw NotificationErrors.too_many_channels();
      const secret = body.type === 'webhook' ? newWebhookSecret() : undefined;
      const split = splitConfig(body.type, secret ? { ...body.config, secret } : body.config, deps.secretBox);
      const row = await repo.insertChannel(userId, body.type, {
        name: body.name,
        ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
        ...split,
      });
      return { ...channelView(row), ...(secret ? { secret } : {}) };
    },

    /** A new config replaces the old; secrets it leaves out (a token, the webhook's secret) are kept. */
    async updateChannel(userId: string, id: string, body: Static<typeof UpdateChannelBody>) {
      const current = await ownChannel(userId, id);
      let split = {};
      if (body.config) {
        let kept: Record<string, unknown> = {};
        try {
          kept = secretsOf(current, deps.secretBox);
        } catch {
          // Sealed with a key no longer in use (`waygate secrets reset`): the config sent must hold them again.
        }
        // A webhook's secret is the service's to make, never the client's; fields the type does not name are
        // dropped by the check (from the merged copy: only what survives it is stored).
        const sent = Object.keys(body.config).filter((name) => !(current.type === 'webhook' && name === 'secret'));
        const checked: Record<string, unknown> = { ...kept };
        for (const name of sent) checked[name] = body.config[name];
        checkConfig(current.type, checked);
        const stored = Object.fromEntries(sent.filter((name) => name in checked).map((name) => [name, checked[name]]));
        split = splitConfig(current.type, stored, deps.secretBox, kept);
      }
      const row = await repo.updateChannel(id, userId, {
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
        ...split,
      });
      if (!row) throw NotificationErrors.channel_not_found();
      return channelView(row);
    },

    /** Its deliveries go with it, and it leaves the owner's rules. */
    async deleteChannel(userId: string, id: string) {
      if (!(await repo.deleteChannel(id, userId))) throw NotificationErrors.channel_not_found();
      await rulesChanged();
    },

    /** Sends a test notification now: what the far side said. */
    async testChannel(userId: string, id: string, testId: string) {
      const channel = await ownChannel(userId, id);
      const result = await send(channel, {
        id: testId,
        type: 'test',
        title: 'Waygate test notification',
        body: `This is a test of the channel "${channel.name}".`,
        at: deps.clock.now(),
        data: { test: true, channel_id: channel.id },
        ...(settings.consoleUrl ? { url: settings.consoleUrl } : {}),
      });
      const { retryAfterMs, ...rest } = result;
      return { ...rest, ...(retryAfterMs === undefined ? {} : { retry_after_ms: Math.round(retryAfterMs) }) };
    },

    webPushKey: async () => ({ public_key: (await vapidKeys()).publicKey }),

    async rules(userId: string, limit: number, offset: number) {
      const [rows, total] = await Promise.all([repo.rules(userId, limit, offset), repo.countRules(userId)]);
      return { rows: rows.map(ruleView), total };
    },

    async rule(userId: string, id: string) {
      const row = await repo.rule(id, userId);
      if (!row) throw NotificationErrors.rule_not_found();
      return ruleView(row);
    },

    async createRule(userId: string, body: Static<typeof CreateRuleBody>) {
      await checkRule(userId, body);
      if ((await repo.countRules(userId)) >= MAX_RULES_PER_USER) throw NotificationErrors.too_many_rules();
      const { quiet_hours, ...fields } = body;
      const row = await repo.insertRule(userId, { ...fields, ...quietFields(quiet_hours) });
      await rulesChanged();
      return ruleView(row);
    },

    async updateRule(userId: string, id: string, body: Static<typeof UpdateRuleBody>) {
      if (!(await repo.rule(id, userId))) throw NotificationErrors.rule_not_found();
      await checkRule(userId, body);
      const { quiet_hours, ...fields } = body;
      const row = await repo.updateRule(id, userId, { ...fields, ...quietFields(quiet_hours) });
      if (!row) throw NotificationErrors.rule_not_found();
      await rulesChanged();
      return ruleView(row);
    },

    async deleteRule(userId: string, id: string) {
      if (!(await repo.deleteRule(id, userId))) throw NotificationErrors.rule_not_found();
      await rulesChanged();
    },

    /** Every enabled rule (the outbox's matcher keeps them per node, read again after `onRulesChanged`). */
    enabledRules: () => repo.enabledRules(),
    onRulesChanged(listener: () => void): void {
      ruleListeners.push(listener);
    },
    send,
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
