import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { NotificationDeliveryStatus } from '../../platform/db/schema/operations.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { paragraphsMail, type MailContact } from '../../platform/mail/messages.js';
import type { DevicesService } from '../../tracking/devices/service.js';
import type { SharingService } from '../../tracking/sharing/service.js';
import type { DeviceAccess } from '../../tracking/sharing/index.js';
import { createDeliveriesRepo, type DeliveryFilter, type DeliveryRow, type NewDelivery } from './deliveries-repo.js';
import { createNotificationsRepo, type ChannelRow, type RuleRow } from './repo.js';
import { quietUntil } from './quiet-hours.js';
import { notificationOf, type DeliveryPayload } from './texts.js';
import type { NotificationsService } from './service.js';

/** How long after its event a delivery is tried: then it has failed. */
export const GIVE_UP_AFTER_MS = 24 * 3600_000;
/** The first retry's wait; each next one doubles it (with up to a fifth more or less, so retries spread). */
export const FIRST_RETRY_MS = 30_000;
/** A claimed delivery is another node's to claim again when its sender has not recorded an outcome by then. */
export const LEASE_MS = 2 * 60_000;
/** Failures in a row after which a channel is marked failing (and its owner mailed, once). */
export const FAILING_AFTER = 5;
/** Rules are read again this often even when no change was heard (a lost pub/sub message heals). */
const RULES_MAX_AGE_MS = 5 * 60_000;
const BATCH = 20;
const LOOP_MS = 2_000;

/** An event as the events module stored it (its `RecordedEvent`). */
export interface OutboxEvent {
  id: string;
  type: string;
  device_id: string;
  geofence_id: string | null;
  /** The geofence's owner (null: instance-wide, or none): a user's geofence notifies only who may read it. */
  geofence_owner_id: string | null;
  occurred_at: Date;
  latitude: number | null;
  longitude: number | null;
  details: Record<string, unknown>;
}

/** Writes the deliveries of events stored in `trx` (see `prepare`); answers how many it wrote. */
export interface DeliveryWriter {
  write(trx: Kysely<Schema>, events: readonly OutboxEvent[]): Promise<number>;
}

interface Rules {
  byType: Map<string, RuleRow[]>;
  /** The time zone of each owner of a rule with quiet hours. */
  timeZones: Map<string, string | null>;
  loadedAt: number;
}

/**
 * The notification outbox (docs/notifications.md, "Delivery"): `prepare(...).write(trx, events)` writes an event's
 * deliveries in the transaction that stores the event; `sendDue` (run by every node in a loop, or by hand) claims due ones and sends.
 */
export function createNotificationOutbox(deps: {
  db: Kysely<Schema>;
  clock: Clock;
  log: FastifyBaseLogger;
  notifications: Pick<NotificationsService, 'enabledRules' | 'onRulesChanged' | 'send'>;
  sharing: Pick<SharingService, 'accessOf'>;
  devices: Pick<DevicesService, 'byIds'>;
  timeZoneOf: (userId: string) => Promise<string | null>;
  mailer: Pick<Mailer, 'send'>;
  contactOf: (userId: string) => Promise<MailContact | undefined>;
  consoleUrl: string | undefined;
}) {
  const deliveries = createDeliveriesRepo(deps.db);
  const channels = createNotificationsRepo(deps.db);
  let rules: Promise<Rules> | undefined;
  deps.notifications.onRulesChanged(() => {
    rules = undefined;
  });

  async function loadRules(): Promise<Rules> {
    const loadedAt = deps.clock.nowMs();
    const rows = await deps.notifications.enabledRules();
    const byType = new Map<string, RuleRow[]>();
    for (const rule of rows) for (const type of rule.event_types) byType.set(type, [...(byType.get(type) ?? []), rule]);
    const quietOwners = [...new Set(rows.filter((rule) => rule.quiet_from).map((rule) => rule.user_id))];
    const zones = await Promise.all(quietOwners.map((owner) => deps.timeZoneOf(owner)));
    return { byType, timeZones: new Map(quietOwners.map((owner, i) => [owner, zones[i] ?? null])), loadedAt };
  }

  async function currentRules(): Promise<Rules> {
    const held = rules && (await rules.catch(() => undefined));
    if (held && deps.clock.nowMs() - held.loadedAt < RULES_MAX_AGE_MS) return held;
    const loading = loadRules();
    rules = loading;
    loading.catch(() => {
      if (rules === loading) rules = undefined;
    });
    return loading;
  }

  /**
   * Matching in two steps, so that nothing is read outside the events' transaction while it is open (the embedded
   * database has one connection): `prepare`, before the transaction, reads what matching needs for events of these
   * devices (the rules from memory, the rule owners' grants from the sharing module's cache, their time zones with
   * the rules); the answer's `write`, inside it, writes the deliveries of the events stored, reading only the
   * channels named (one query, locking them against deletion). Undefined when no rule could match (nothing to do).
   */
  async function prepare(deviceIds: readonly string[]): Promise<DeliveryWriter | undefined> {
    const { byType, timeZones } = await currentRules();
    if (byType.size === 0) return undefined;
    const devices = new Set(deviceIds);
    const owners = new Set<string>();
    for (const list of byType.values())
      for (const rule of list)
        if (!rule.device_ids || rule.device_ids.some((id) => devices.has(id))) owners.add(rule.user_id);
    if (owners.size === 0) return undefined;
    const ownerList = [...owners];
    const grants = await Promise.all(ownerList.map((owner) => deps.sharing.accessOf(owner)));
    const access = new Map(ownerList.map((owner, i) => [owner, grants[i]!]));
    return { write: (trx, events) => write(trx, events, { byType, timeZones, access }) };
  }

  /**
   * For each event, every enabled rule of its type whose owner may see the device now and whose devices and
   * geofences hold it names channels; one delivery per event and channel (the earliest due of the rules naming
   * it). A historical event (an import's, a late point's, or one older than the give-up time) makes none.
   */
  async function write(
    trx: Kysely<Schema>,
    events: readonly OutboxEvent[],
    known: Pick<Rules, 'byType' | 'timeZones'> & { access: Map<string, DeviceAccess> },
  ): Promise<number> {
    const now = deps.clock.now();
    const wanted = new Map<string, NewDelivery>();
    for (const event of events) {
      if (event.details.historical === true || now.getTime() - event.occurred_at.getTime() >= GIVE_UP_AFTER_MS)
        continue;
      for (const rule of known.byType.get(event.type) ?? []) {
        if (rule.device_ids && !rule.device_ids.includes(event.device_id)) continue;
        if (rule.geofence_ids && (event.geofence_id === null || !rule.geofence_ids.includes(event.geofence_id)))
          continue;
        const access = known.access.get(rule.user_id);
        if (!access?.seesLive(event.device_id)) continue;
        // Another user's geofence is theirs: its events notify them and their full grantees, no one else.
        const fenceOwner = event.geofence_owner_id;
        if (fenceOwner && fenceOwner !== rule.user_id && !access.sharersAtLeast('full').includes(fenceOwner)) continue;
        const quiet =
          rule.quiet_from && rule.quiet_to
            ? quietUntil(now, { from: rule.quiet_from, to: rule.quiet_to }, known.timeZones.get(rule.user_id) ?? null)
            : null;
        const due = quiet ?? now;
        for (const channelId of rule.channel_ids) {
          const key = `${event.id} ${channelId}`;
          const held = wanted.get(key);
          if (held && held.next_attempt_at <= due) continue;
          wanted.set(key, {
            event_id: event.id,
            channel_id: channelId,
            rule_id: rule.id,
            user_id: rule.user_id,
            payload: payloadOf(event),
            next_attempt_at: due,
            // 24 hours after the event, or an hour after quiet hours end when that is later: held, not dropped.
            give_up_at: new Date(Math.max(event.occurred_at.getTime() + GIVE_UP_AFTER_MS, due.getTime() + 3600_000)),
          });
        }
      }
    }
    if (wanted.size === 0) return 0;
    const ids = [...new Set([...wanted.values()].map((row) => row.channel_id))];
    const owners = new Map((await deliveries.enabledChannels(trx, ids)).map((row) => [row.id, row.user_id]));
    const rows = [...wanted.values()].filter((row) => owners.get(row.channel_id) === row.user_id);
    return rows.length > 0 ? deliveries.insert(trx, rows) : 0;
  }

  /** The wait before attempt `attempts + 1`: 30 s doubling, a fifth either way, at least what the far side asked. */
  function backoffMs(attempts: number, retryAfterMs: number | undefined): number {
    const base = FIRST_RETRY_MS * 2 ** Math.min(attempts - 1, 20);
    const jittered = base * (0.8 + Math.random() * 0.4);
    return Math.max(jittered, retryAfterMs ?? 0);
  }

  async function tellOwnerOnce(channel: ChannelRow, at: Date): Promise<void> {
    const marked = await channels.markFailing(channel.id, at);
    if (!marked) return;
    const contact = await deps.contactOf(marked.user_id);
    if (!contact?.email) return;
    const german = contact.locale?.startsWith('de');
    const subject = german
      ? `Benachrichtigungskanal „${marked.name}“ schlägt fehl`
      : `Notification channel "${marked.name}" keeps failing`;
    const paragraphs = german
      ? [
          `Guten Tag ${contact.username},`,
          `Benachrichtigungen an Ihren Kanal „${marked.name}“ schlagen wiederholt fehl. Zuletzt: ${marked.last_error ?? 'unbekannt'}.`,
          'Prüfen Sie den Kanal in der Konsole und senden Sie eine Testbenachrichtigung. Sie erhalten diese Nachricht erst wieder, nachdem der Kanal einmal funktioniert hat.',
        ]
      : [
          `Hello ${contact.username},`,
          `Notifications to your channel "${marked.name}" keep failing. The last error: ${marked.last_error ?? 'unknown'}.`,
          'Check the channel in the console and send a test. You will not be told again until the channel has worked once.',
        ];
    try {
      await deps.mailer.send(contact.email, paragraphsMail(subject, paragraphs));
    } catch (err) {
      deps.log.warn({ err, channel: channel.id }, 'could not mail the owner of a failing channel');
    }
  }

  async function attempt(delivery: DeliveryRow, channel: ChannelRow | undefined, deviceName: string | undefined) {
    const now = deps.clock.now();
    const fail = (status: NotificationDeliveryStatus, lastStatus: number | null, error: string, next?: Date) =>
      deliveries.record(delivery.id, delivery.attempts, {
        status,
        last_status: lastStatus,
        last_error: error,
        ...(next ? { next_attempt_at: next } : {}),
      });
    if (!channel || !channel.enabled) {
      await fail('failed', null, channel ? 'the channel is disabled' : 'the channel is gone');
      return;
    }
    // Claimed again after its lease ended past the give-up time (its senders kept being lost): not sent any more.
    if (now.getTime() > delivery.give_up_at.getTime()) {
      await fail('failed', delivery.last_status, delivery.last_error ?? 'not sent within 24 hours of the event');
      return;
    }
    const payload = delivery.payload as unknown as DeliveryPayload;
    // Sent hours later (quiet hours, retries): only while the channel's owner may still see the device (a share
    // that ended, a user banned or deleted, stops it; their grants come from the sharing module's cache).
    const access = await deps.sharing.accessOf(delivery.user_id).catch(() => undefined);
    if (!access?.seesLive(payload.device_id)) {
      await fail('failed', null, "the channel's owner no longer sees the device");
      return;
    }
    const notification = notificationOf(delivery.id, delivery.event_id, payload, deviceName, deps.consoleUrl);
    const result = await deps.notifications.send(channel, notification);
    if (result.ok) {
      await deliveries.record(delivery.id, delivery.attempts, {
        status: 'sent',
        last_status: result.status,
        last_error: null,
        sent_at: now,
      });
      await channels.noteSuccess(channel.id, result.status, now);
      return;
    }
    const failures = await channels.noteFailure(channel.id, result.status, result.detail, now);
    if (result.gone) {
      await fail('gone', result.status, result.detail);
      if (channel.type === 'web_push') await channels.disableGone(channel.id, `gone: ${result.detail}`);
      return;
    }
    const next = new Date(now.getTime() + backoffMs(delivery.attempts, result.retryAfterMs));
    const givingUp = !result.retryable || next.getTime() > delivery.give_up_at.getTime();
    await fail(givingUp ? 'failed' : 'pending', result.status, result.detail, givingUp ? undefined : next);
    if (failures >= FAILING_AFTER || (result.retryable && givingUp)) await tellOwnerOnce(channel, now);
  }

  /**
   * Claims due deliveries in batches and sends each once: a claimed row is marked sending with a lease and counted;
   * its outcome is written only while it is still that attempt's. Answers how many were attempted.
   */
  async function sendDue(maxBatches = 50): Promise<number> {
    let attempted = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const now = deps.clock.now();
      const claimed = await deliveries.claim(now, new Date(now.getTime() + LEASE_MS), BATCH);
      if (claimed.length === 0) break;
      const channelIds = [...new Set(claimed.map((row) => row.channel_id))];
      const deviceIds = [...new Set(claimed.map((row) => (row.payload as { device_id?: string }).device_id ?? ''))];
      const [channelRows, devices] = await Promise.all([
        channels.channelsByIds(channelIds),
        deps.devices.byIds(deviceIds.filter(Boolean)),
      ]);
      const byId = new Map(channelRows.map((row) => [row.id, row]));
      const names = new Map(devices.map((device) => [device.id, device.name]));
      await Promise.all(
        claimed.map((delivery) =>
          attempt(
            delivery,
            byId.get(delivery.channel_id),
            names.get((delivery.payload as { device_id?: string }).device_id ?? ''),
          ).catch((err: unknown) => deps.log.warn({ err, delivery: delivery.id }, 'a notification delivery failed')),
        ),
      );
      attempted += claimed.length;
      if (claimed.length < BATCH) break;
    }
    return attempted;
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  return {
    prepare,
    sendDue,

    /** The caller's deliveries, newest first. */
    async page(userId: string, filter: DeliveryFilter, limit: number, offset: number) {
      const { rows, total } = await deliveries.page(userId, filter, limit, offset);
      return {
        rows: rows.map(({ payload, user_id: _user, give_up_at: _giveUp, ...row }) => ({
          ...row,
          event_type: String((payload as { type?: unknown }).type ?? ''),
        })),
        total,
      };
    },

    /** Every node sends what is due every 2 s (a node's loop skips a round while its last is still sending). */
    start(): void {
      timer ??= setInterval(() => {
        if (running) return;
        running = sendDue()
          .catch((err: unknown) => deps.log.warn({ err }, 'the notification outbox could not send'))
          .finally(() => (running = undefined));
      }, LOOP_MS);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}

/** What a delivery keeps of its event. */
const payloadOf = (event: OutboxEvent): DeliveryPayload => ({
  type: event.type,
  device_id: event.device_id,
  geofence_id: event.geofence_id,
  occurred_at: event.occurred_at.toISOString(),
  latitude: event.latitude,
  longitude: event.longitude,
  details: event.details,
});

export type NotificationOutbox = ReturnType<typeof createNotificationOutbox>;
