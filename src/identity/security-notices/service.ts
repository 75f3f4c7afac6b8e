import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Caller } from '../../platform/auth/caller.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { DomainEvents, SecurityChange } from '../../platform/events.js';
import type { Locate } from '../../platform/geoip.js';
import { parseUserAgent } from '../../platform/http/user-agent.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { MailContact } from '../../platform/mail/messages.js';
import { SessionErrors } from '../sessions/errors.js';
import { securityNoticeMail, type Notice } from './mails.js';
import { createSecurityNoticesRepo } from './repo.js';
import type { NoticeSettingsBody } from './schemas.js';

/** At most one notice of a kind per user in this many seconds: a burst of changes is one mail, not a flood. */
export const NOTICE_INTERVAL_SECS = 600;

/**
 * Notices of a way into the account added (or of all of them removed) are never held back by the interval:
 * an intruder's second passkey or key must be heard of as the first was. Each is one mail; the rate limits,
 * and the re-authentication a session needs to add either, keep them few.
 */
const neverHeldBack = (notice: Notice) =>
  notice.kind === 'passkey_added' ||
  notice.kind === 'api_key_created' ||
  (notice.kind === 'password_changed' && notice.removed !== undefined);
/** A browser and network not used for a year counts as new again. */
export const DEVICE_RETENTION_MS = 365 * 24 * 3600 * 1000;

interface Deps {
  db: Kysely<Schema>;
  kv: Pick<KeyValueStore, 'setIfAbsent' | 'get' | 'set'>;
  clock: Clock;
  mailer: Pick<Mailer, 'send'>;
  log: FastifyBaseLogger;
  locate?: Locate;
  /** The user's name, locale, time zone and email address, also while their deletion is pending. */
  contactOf: (userId: string) => Promise<MailContact | undefined>;
  /** Where a user sees and ends their sessions (linked from the new sign-in notice). */
  sessionsUrl: string;
}

/**
 * Mails a user when something happens to their account (issue 34): a sign-in from a browser and network not
 * seen before, a new password, email address, second factor, passkey or API key, a ban, a scheduled deletion.
 * It reacts to domain events after the change committed, and sends in the background: a request never waits
 * on SMTP, and a failed mail is logged, never the request's failure.
 */
export function createSecurityNotices(deps: Deps) {
  const repo = createSecurityNoticesRepo(deps.db);
  const inFlight = new Set<Promise<void>>();

  function inBackground(work: () => Promise<void>): void {
    const run = work().catch((err: unknown) => deps.log.warn({ err }, 'could not send a security notice'));
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run));
  }

  /** Claims the kind's slot for the user across nodes; false while one was sent within the interval. */
  async function claimSlot(userId: string, kind: Notice['kind']): Promise<boolean> {
    const key = `security-notice:${userId}:${kind}`;
    const now = deps.clock.nowMs();
    if (await deps.kv.setIfAbsent(key, String(now), NOTICE_INTERVAL_SECS)) return true;
    // The store expires keys on real time; the stamp keeps the rule on the service's clock as well.
    if (now - Number(await deps.kv.get(key)) < NOTICE_INTERVAL_SECS * 1000) return false;
    await deps.kv.set(key, String(now), NOTICE_INTERVAL_SECS);
    return true;
  }

  async function send(userId: string, notice: Notice, to?: string): Promise<void> {
    const contact = await deps.contactOf(userId);
    const address = to ?? contact?.email;
    if (!contact || !address) return;
    // Only the non-critical notices can be turned off.
    if (notice.kind === 'new_sign_in' || notice.kind === 'api_key_created') {
      const settings = await repo.settingsOf(userId);
      if (!(notice.kind === 'new_sign_in' ? settings.new_sign_in : settings.new_api_key)) return;
    }
    if (!neverHeldBack(notice) && !(await claimSlot(userId, notice.kind))) return;
    await deps.mailer.send(address, securityNoticeMail(contact.locale, contact.username, notice, contact.timeZone));
  }

  async function signedIn({ userId, ipAddress, userAgent }: DomainEvents['user.signed_in']): Promise<void> {
    const agent = parseUserAgent(userAgent ?? '');
    const browser = [withoutVersion(agent.browser), withoutVersion(agent.os)];
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([...browser, networkOf(ipAddress)]))
      .digest('hex');
    const at = deps.clock.now();
    if ((await repo.recordDevice(userId, fingerprint, at)) !== 'new') return;
    const location = ipAddress && deps.locate ? deps.locate(ipAddress) : undefined;
    const place = [location?.city, location?.country_name].filter(Boolean).join(', ') || null;
    const device = [agent.browser, agent.os].filter(Boolean).join(' on ') || userAgent || '?';
    await send(userId, { kind: 'new_sign_in', device, place, ip: ipAddress, at, sessionsUrl: deps.sessionsUrl });
  }

  return {
    /** Reactions, registered in the composition root. */
    signedIn: (event: DomainEvents['user.signed_in']) => inBackground(() => signedIn(event)),
    changed(change: SecurityChange): void {
      const { userId, ...notice } = change;
      // The old address hears of an email change: a hijacked session cannot move the account away unnoticed.
      inBackground(() => send(userId, notice, change.kind === 'email_changed' ? change.oldEmail : undefined));
    },
    banned: (userId: string, ban: { reason: string | null; expiresAt: Date | null }) =>
      inBackground(() => send(userId, { kind: 'banned', ...ban })),
    deletionScheduled: (userId: string, purgeAt: Date) =>
      inBackground(() => send(userId, { kind: 'deletion_scheduled', purgeAt })),

    /** GET /v1/users/me/security-notifications: which of the optional notices the caller gets. */
    settingsOf: (caller: Caller) => repo.settingsOf(sessionUserOf(caller)),
    /** PATCH /v1/users/me/security-notifications. */
    updateSettings: (caller: Caller, input: Static<typeof NoticeSettingsBody>) =>
      repo.updateSettings(sessionUserOf(caller), input),

    /** For the personal data export: the optional notices the user gets, and the browsers and networks known as theirs. */
    async personalDataOf(userId: string) {
      const [settings, knownSignIns] = await Promise.all([repo.settingsOf(userId), repo.devicesOf(userId)]);
      return { ...settings, known_sign_ins: knownSignIns };
    },

    /** Hourly: browsers and networks unused for a year are forgotten. */
    purgeStaleDevices: () => repo.forgetDevicesNotSeenSince(new Date(deps.clock.nowMs() - DEVICE_RETENTION_MS)),
    /** Resolves once every notice started so far is sent or given up (tests, and a clean shutdown). */
    settled: async (): Promise<void> => void (await Promise.all([...inFlight])),
  };
}

function sessionUserOf(caller: Caller): string {
  if (caller.kind !== 'session' || !caller.userId) throw SessionErrors.session_required();
  return caller.userId;
}

/** "Firefox 128.0" → "Firefox": a browser update is not a new browser. */
function withoutVersion(name: string | null): string | null {
  if (name === null) return null;
  // The last word, found without a pattern (`\s+[\d.]+$` backtracks quadratically on a run of spaces).
  const cut = name.trimEnd().search(/\s\S*$/);
  return cut > 0 && /^[\d.]+$/.test(name.slice(cut).trim()) ? name.slice(0, cut).trimEnd() : name;
}

/** The network an address is in: its IPv4 /24 or IPv6 /48, so a new address from the same provider line is not news. */
export function networkOf(ip: string | null): string | null {
  if (!ip) return null;
  const v4 = ip.startsWith('::ffff:') && isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  if (isIPv4(v4)) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 3)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/48`;
}

export type SecurityNotices = ReturnType<typeof createSecurityNotices>;
