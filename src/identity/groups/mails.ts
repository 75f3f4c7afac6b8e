import { mailTime, paragraphsMail, type MailMessage } from '../../platform/mail/messages.js';

/** The invitation's end, in the invitee's time zone when they chose one (an address of nobody: UTC). */
const when = (i: Invitation) => mailTime(i.expiresAt, i.timeZone ?? null);

interface Invitation {
  inviter: string;
  group: string;
  expiresAt: Date;
  /** The reader's time zone (their preferences), for the end of the invitation; none: UTC. */
  timeZone?: string | null;
  /** Where the invitation is answered (a registered invitee) or an account is made (an address of nobody). */
  link: string;
}

interface Texts {
  subject: (i: Invitation) => string;
  /** To a registered user: answer it where their invitations are. */
  toUser: (username: string, i: Invitation) => string[];
  /** To an address nobody has registered: sign up with it, and the invitation is accepted. */
  toAddress: (email: string, i: Invitation) => string[];
}

const EN: Texts = {
  subject: (i) => `${i.inviter} invited you to the group "${i.group}" on Waygate`,
  toUser: (username, i) => [
    `Hello ${username},`,
    `${i.inviter} invited you to join the group "${i.group}" on Waygate. Members of a group can share where their devices are with each other.`,
    `Accept or decline the invitation here: ${i.link}`,
    `The invitation is valid until ${when(i)}. If you do not want to join, decline it or ignore this email.`,
  ],
  toAddress: (email, i) => [
    'Hello,',
    `${i.inviter} invited you to join the group "${i.group}" on Waygate, where members share where their devices are with each other.`,
    `To join, create an account with this email address (${email}): ${i.link}`,
    `Once you have confirmed the address, you are a member of the group. The invitation is valid until ${when(i)}.`,
    `If you do not know ${i.inviter} or do not want to join, ignore this email: no account is created.`,
  ],
};

const DE: Texts = {
  subject: (i) => `${i.inviter} hat Sie in die Gruppe „${i.group}“ auf Waygate eingeladen`,
  toUser: (username, i) => [
    `Guten Tag ${username},`,
    `${i.inviter} hat Sie eingeladen, der Gruppe „${i.group}“ auf Waygate beizutreten. Die Mitglieder einer Gruppe können einander zeigen, wo ihre Geräte sind.`,
    `Hier können Sie die Einladung annehmen oder ablehnen: ${i.link}`,
    `Die Einladung gilt bis ${when(i)}. Wenn Sie nicht beitreten möchten, lehnen Sie sie ab oder ignorieren Sie diese E-Mail.`,
  ],
  toAddress: (email, i) => [
    'Guten Tag,',
    `${i.inviter} hat Sie eingeladen, der Gruppe „${i.group}“ auf Waygate beizutreten, deren Mitglieder einander zeigen, wo ihre Geräte sind.`,
    `Um beizutreten, legen Sie mit dieser E-Mail-Adresse (${email}) ein Konto an: ${i.link}`,
    `Sobald Sie die Adresse bestätigt haben, sind Sie Mitglied der Gruppe. Die Einladung gilt bis ${when(i)}.`,
    `Wenn Sie ${i.inviter} nicht kennen oder nicht beitreten möchten, ignorieren Sie diese E-Mail: Es wird kein Konto angelegt.`,
  ],
};

const textsOf = (locale: string | null) => (locale?.toLowerCase().startsWith('de') ? DE : EN);

/** To a registered invitee, in their locale (`de…` German, anything else English). */
export function invitationMail(locale: string | null, username: string, invitation: Invitation): MailMessage {
  const texts = textsOf(locale);
  return paragraphsMail(texts.subject(invitation), texts.toUser(username, invitation));
}

/** To an address nobody has registered, in the inviter's locale (the invitee's is not known). */
export function signUpInvitationMail(locale: string | null, email: string, invitation: Invitation): MailMessage {
  const texts = textsOf(locale);
  return paragraphsMail(texts.subject(invitation), texts.toAddress(email, invitation));
}
