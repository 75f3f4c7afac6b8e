import type { SecurityChange } from '../../platform/events.js';
import { paragraphsMail, type MailMessage } from '../../platform/mail/messages.js';

type Change = SecurityChange extends infer C ? (C extends SecurityChange ? Omit<C, 'userId'> : never) : never;

/** What a security notice tells; `kind` is also what its rate limit counts. */
export type Notice =
  | Change
  | { kind: 'new_sign_in'; device: string; place: string | null; ip: string | null; at: Date; sessionsUrl: string }
  | { kind: 'banned'; reason: string | null; expiresAt: Date | null }
  | { kind: 'deletion_scheduled'; purgeAt: Date };

export type NoticeKind = Notice['kind'];

/** Times in mails: minutes in UTC, the same in every locale (the reader's time zone is not known). */
const when = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

interface Texts {
  greeting: (username: string) => string;
  notYou: string;
  subject: (notice: Notice) => string;
  body: (notice: Notice) => string[];
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
  body: (n) => {
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

const DE: Texts = {
  greeting: (username) => `Hallo ${username},`,
  notYou: 'Wenn du das nicht warst, setze sofort dein Passwort zurück und wende dich an deinen Administrator.',
  subject: (n) =>
    ({
      new_sign_in: 'Neue Anmeldung bei deinem Waygate-Konto',
      password_changed: 'Dein Waygate-Passwort wurde geändert',
      email_changed: 'Die E-Mail-Adresse deines Waygate-Kontos wurde geändert',
      two_factor_enabled: 'Zwei-Faktor-Authentifizierung für dein Waygate-Konto eingeschaltet',
      two_factor_disabled: 'Zwei-Faktor-Authentifizierung für dein Waygate-Konto ausgeschaltet',
      passkey_added: 'Deinem Waygate-Konto wurde ein Passkey hinzugefügt',
      passkey_removed: 'Von deinem Waygate-Konto wurde ein Passkey entfernt',
      api_key_created: 'Für dein Waygate-Konto wurde ein neuer API-Schlüssel erstellt',
      banned: 'Dein Waygate-Konto wurde gesperrt',
      deletion_scheduled: 'Dein Waygate-Konto wird gelöscht',
    })[n.kind],
  body: (n) => {
    switch (n.kind) {
      case 'new_sign_in':
        return [
          `bei deinem Konto hat sich jemand aus einem bisher unbekannten Browser und Netz angemeldet: ${n.device}${n.place ? `, in der Nähe von ${n.place}` : ''}${n.ip ? ` (${n.ip})` : ''}, am ${when(n.at)}.`,
          `Wenn du das warst, ist nichts zu tun. Wenn nicht, beende diese Sitzung unter ${n.sessionsUrl} und ändere dein Passwort.`,
        ];
      case 'password_changed':
        return [
          'das Passwort deines Kontos wurde geändert; deine anderen Sitzungen wurden beendet.',
          ...(n.removed
            ? [
                `Wie gewünscht wurden auch alle Passkeys (${n.removed.passkeys}) und API-Schlüssel (${n.removed.api_keys}) deines Kontos entfernt; Systemschlüssel bleiben. Füge die, die du brauchst, neu hinzu.`,
              ]
            : []),
        ];
      case 'email_changed':
        return [
          `die E-Mail-Adresse deines Kontos wurde in ${n.newEmail} geändert. An diese Adresse geht keine Post des Kontos mehr.`,
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
        return [`der Passkey „${n.name}“ wurde hinzugefügt: Mit ihm kann man sich jetzt bei deinem Konto anmelden.`];
      case 'passkey_removed':
        return [`der Passkey „${n.name}“ wurde von deinem Konto entfernt.`];
      case 'api_key_created':
        return [`für dein Konto wurde der API-Schlüssel „${n.name}“ erstellt.`];
      case 'banned':
        return [
          `dein Konto wurde gesperrt${n.expiresAt ? ` bis ${when(n.expiresAt)}` : ''}. Solange die Sperre gilt, kannst du dich nicht anmelden.`,
          ...(n.reason ? [`Grund: ${n.reason}`] : []),
        ];
      case 'deletion_scheduled':
        return [
          `dein Konto wurde gelöscht und wird am ${when(n.purgeAt)} endgültig entfernt. Bis dahin kann ein Administrator es wiederherstellen.`,
        ];
    }
  },
};

/** The notice in the user's locale (`de…` German, anything else English). */
export function securityNoticeMail(locale: string | null, username: string, notice: Notice): MailMessage {
  const texts = locale?.toLowerCase().startsWith('de') ? DE : EN;
  // A ban and a deletion are an administrator's doing and the new sign-in says what to do itself; the rest could be an intruder's.
  const warn = !['banned', 'deletion_scheduled', 'new_sign_in'].includes(notice.kind);
  return paragraphsMail(texts.subject(notice), [
    texts.greeting(username),
    ...texts.body(notice),
    ...(warn ? [texts.notYou] : []),
  ]);
}
