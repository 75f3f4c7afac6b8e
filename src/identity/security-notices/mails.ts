import type { SecurityChange } from '../../platform/events.js';
import { mailTime, paragraphsMail, type MailMessage } from '../../platform/mail/messages.js';

type Change = SecurityChange extends infer C ? (C extends SecurityChange ? Omit<C, 'userId'> : never) : never;

/** What a security notice tells; `kind` is also what its rate limit counts. */
export type Notice =
  | Change
  | { kind: 'new_sign_in'; device: string; place: string | null; ip: string | null; at: Date; sessionsUrl: string }
  | { kind: 'banned'; reason: string | null; expiresAt: Date | null }
  | { kind: 'deletion_scheduled'; purgeAt: Date };

export type NoticeKind = Notice['kind'];

/** How a notice writes a time: `mailTime` in the reader's time zone. */
type When = (at: Date) => string;

interface Texts {
  greeting: (username: string) => string;
  notYou: string;
  subject: (notice: Notice) => string;
  body: (notice: Notice, when: When) => string[];
}

const EN: Texts = {
  greeting: (username) => `Hello ${username},`,
  notYou: 'If this was not you, reset your password at once and contact your administrator.',
  subject: (n) =>
    ({
      new_sign_in: 'New sign-in to your Waygate account',
      password_changed: 'Your Waygate password was changed',
      email_changed: 'The email address of your Waygate account was changed',
      two_factor_enabled: 'Two-factor authentication was turned on for your Waygate account',
      two_factor_disabled: 'Two-factor authentication was turned off for your Waygate account',
      passkey_added: 'A passkey was added to your Waygate account',
      passkey_removed: 'A passkey was removed from your Waygate account',
      api_key_created: 'A new API key was created for your Waygate account',
      banned: 'Your Waygate account was suspended',
      deletion_scheduled: 'Your Waygate account is scheduled for deletion',
    })[n.kind],
  body: (n, when) => {
    switch (n.kind) {
      case 'new_sign_in':
        return [
          `your account was signed in to from a browser and network not seen before: ${n.device}${n.place ? `, near ${n.place}` : ''}${n.ip ? ` (${n.ip})` : ''}, at ${when(n.at)}.`,
          `If this was you, there is nothing to do. If not, end that session on ${n.sessionsUrl} and change your password.`,
        ];
      case 'password_changed':
        return [
          'the password of your account was changed, and your other sessions were ended.',
          ...(n.removed
            ? [
                `As asked, every passkey (${n.removed.passkeys}) and API key (${n.removed.api_keys}) of your account was removed too; system keys stay. Add again those you need.`,
              ]
            : []),
        ];
      case 'email_changed':
        return [
          `the email address of your account was changed to ${n.newEmail}. This address no longer receives its mail.`,
        ];
      case 'two_factor_enabled':
        return ['two-factor authentication was turned on: signing in now also asks for a code.'];
      case 'two_factor_disabled':
        return ['two-factor authentication was turned off: signing in no longer asks for a code.'];
      case 'passkey_added':
        return [`the passkey "${n.name}" was added: it can now sign in to your account.`];
      case 'passkey_removed':
        return [`the passkey "${n.name}" was removed from your account.`];
      case 'api_key_created':
        return [`the API key "${n.name}" was created for your account.`];
      case 'banned':
        return [
          `your account was suspended${n.expiresAt ? ` until ${when(n.expiresAt)}` : ''}. You cannot sign in while it lasts.`,
          ...(n.reason ? [`Reason: ${n.reason}`] : []),
        ];
      case 'deletion_scheduled':
        return [
          `your account was deleted and will be removed for good on ${when(n.purgeAt)}. Until then an administrator can restore it.`,
        ];
    }
  },
};

// German in the formal address (Sie), as every German text of Waygate.
const DE: Texts = {
  greeting: (username) => `Guten Tag ${username},`,
  notYou: 'Wenn Sie das nicht waren, setzen Sie sofort Ihr Passwort zurück und wenden Sie sich an Ihren Administrator.',
  subject: (n) =>
    ({
      new_sign_in: 'Neue Anmeldung bei Ihrem Waygate-Konto',
      password_changed: 'Ihr Waygate-Passwort wurde geändert',
      email_changed: 'Die E-Mail-Adresse Ihres Waygate-Kontos wurde geändert',
      two_factor_enabled: 'Zwei-Faktor-Authentifizierung für Ihr Waygate-Konto eingeschaltet',
      two_factor_disabled: 'Zwei-Faktor-Authentifizierung für Ihr Waygate-Konto ausgeschaltet',
      passkey_added: 'Ihrem Waygate-Konto wurde ein Passkey hinzugefügt',
      passkey_removed: 'Von Ihrem Waygate-Konto wurde ein Passkey entfernt',
      api_key_created: 'Für Ihr Waygate-Konto wurde ein neuer API-Schlüssel erstellt',
      banned: 'Ihr Waygate-Konto wurde gesperrt',
      deletion_scheduled: 'Ihr Waygate-Konto wird gelöscht',
    })[n.kind],
  body: (n, when) => {
    switch (n.kind) {
      case 'new_sign_in':
        return [
          `bei Ihrem Konto hat sich jemand aus einem bisher unbekannten Browser und Netz angemeldet: ${n.device}${n.place ? `, in der Nähe von ${n.place}` : ''}${n.ip ? ` (${n.ip})` : ''}, am ${when(n.at)}.`,
          `Wenn Sie das waren, ist nichts zu tun. Wenn nicht, beenden Sie diese Sitzung unter ${n.sessionsUrl} und ändern Sie Ihr Passwort.`,
        ];
      case 'password_changed':
        return [
          'das Passwort Ihres Kontos wurde geändert; Ihre anderen Sitzungen wurden beendet.',
          ...(n.removed
            ? [
                `Wie gewünscht wurden auch alle Passkeys (${n.removed.passkeys}) und API-Schlüssel (${n.removed.api_keys}) Ihres Kontos entfernt; Systemschlüssel bleiben. Fügen Sie die, die Sie brauchen, neu hinzu.`,
              ]
            : []),
        ];
      case 'email_changed':
        return [
          `die E-Mail-Adresse Ihres Kontos wurde in ${n.newEmail} geändert. An diese Adresse geht keine Post des Kontos mehr.`,
        ];
      case 'two_factor_enabled':
        return [
          'die Zwei-Faktor-Authentifizierung wurde eingeschaltet: Bei der Anmeldung wird jetzt auch ein Code abgefragt.',
        ];
      case 'two_factor_disabled':
        return [
          'die Zwei-Faktor-Authentifizierung wurde ausgeschaltet: Bei der Anmeldung wird kein Code mehr abgefragt.',
        ];
      case 'passkey_added':
        return [`der Passkey „${n.name}“ wurde hinzugefügt: Mit ihm kann man sich jetzt bei Ihrem Konto anmelden.`];
      case 'passkey_removed':
        return [`der Passkey „${n.name}“ wurde von Ihrem Konto entfernt.`];
      case 'api_key_created':
        return [`für Ihr Konto wurde der API-Schlüssel „${n.name}“ erstellt.`];
      case 'banned':
        return [
          `Ihr Konto wurde gesperrt${n.expiresAt ? ` bis ${when(n.expiresAt)}` : ''}. Solange die Sperre gilt, können Sie sich nicht anmelden.`,
          ...(n.reason ? [`Grund: ${n.reason}`] : []),
        ];
      case 'deletion_scheduled':
        return [
          `Ihr Konto wurde gelöscht und wird am ${when(n.purgeAt)} endgültig entfernt. Bis dahin kann ein Administrator es wiederherstellen.`,
        ];
    }
  },
};

/** The notice in the user's locale (`de…` German, anything else English), its times in their time zone. */
export function securityNoticeMail(
  locale: string | null,
  username: string,
  notice: Notice,
  timeZone: string | null = null,
): MailMessage {
  const texts = locale?.toLowerCase().startsWith('de') ? DE : EN;
  // A ban and a deletion are an administrator's doing and the new sign-in says what to do itself; the rest could be an intruder's.
  const warn = !['banned', 'deletion_scheduled', 'new_sign_in'].includes(notice.kind);
  return paragraphsMail(texts.subject(notice), [
    texts.greeting(username),
    ...texts.body(notice, (at) => mailTime(at, timeZone)),
    ...(warn ? [texts.notYou] : []),
  ]);
}
