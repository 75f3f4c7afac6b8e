import type { Mailer } from '../../../platform/mail/mailer.js';
import { mailTime, paragraphsMail, type MailContact, type MailMessage } from '../../../platform/mail/messages.js';
import { bounded } from './http.js';
import type { Notification, SendResult } from './types.js';

const TEXT = {
  en: { greeting: (name: string) => `Hello ${name},`, when: 'When:', open: 'Open:' },
  de: { greeting: (name: string) => `Guten Tag ${name},`, when: 'Zeitpunkt:', open: 'Öffnen:' },
};

/** The mail of a notification, in the reader's language (English unless German) and time zone. */
export function notificationMail(
  contact: Pick<MailContact, 'username' | 'locale' | 'timeZone'>,
  notification: Notification,
): MailMessage {
  const text = TEXT[(contact.locale?.slice(0, 2) ?? 'en') as keyof typeof TEXT] ?? TEXT.en;
  return paragraphsMail(notification.title, [
    text.greeting(contact.username),
    notification.body,
    `${text.when} ${mailTime(notification.at, contact.timeZone)}`,
    ...(notification.url ? [`${text.open} ${notification.url}`] : []),
  ]);
}

/**
 * Mails the notification through the instance's mailer (SMTP_URL, or the outbox folder without one). An SMTP
 * 5xx is final (the address is refused); a 4xx or a failed connection may succeed later.
 */
export async function sendEmail(
  mailer: Pick<Mailer, 'send'>,
  contact: MailContact,
  notification: Notification,
): Promise<SendResult> {
  if (!contact.email) return { ok: false, status: null, detail: 'the user has no email address', retryable: false };
  try {
    await mailer.send(contact.email, notificationMail(contact, notification));
    return { ok: true, status: null, detail: 'mail accepted', retryable: false };
  } catch (error) {
    const code = (error as { responseCode?: unknown }).responseCode;
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      status: null,
      detail: bounded(typeof code === 'number' ? `SMTP ${code}: ${message}` : message),
      retryable: !(typeof code === 'number' && code >= 500),
    };
  }
}
