/** One email: subject plus plain-text and HTML parts saying the same thing. */
export interface MailMessage {
  subject: string;
  text: string;
  html: string;
}

interface TokenMail {
  /** Absolute link carrying `token=<the token>` in its query string. */
  link: string;
  expiresAt: Date;
}

const PRODUCT = 'Waygate';

/** The link a mail carries: `<base><path>?token=<token>` (operations.md: the token sits in the query string). */
export function tokenLink(baseUrl: string, path: string, token: string): string {
  const url = new URL(baseUrl + path);
  url.searchParams.set('token', token);
  return url.toString();
}

export function registrationMail({ link, expiresAt }: TokenMail, username: string): MailMessage {
  return linkMail({
    subject: `Confirm your email address for ${PRODUCT}`,
    greeting: `Hello ${username},`,
    body: `please confirm your email address to finish creating your ${PRODUCT} account.`,
    action: 'Confirm email address',
    link,
    expiresAt,
    closing: 'If you did not sign up, ignore this email and no account will be created.',
  });
}

export function emailChangeMail({ link, expiresAt }: TokenMail, username: string): MailMessage {
  return linkMail({
    subject: `Confirm your new email address for ${PRODUCT}`,
    greeting: `Hello ${username},`,
    body: `please confirm that this is the new email address of your ${PRODUCT} account.`,
    action: 'Confirm new email address',
    link,
    expiresAt,
    closing: 'If you did not ask for this change, ignore this email and nothing changes.',
  });
}

export function emailLinkMail({ link, expiresAt }: TokenMail, username: string): MailMessage {
  return linkMail({
    subject: `Confirm adding email sign-in to your ${PRODUCT} account`,
    greeting: `Hello ${username},`,
    body: `please confirm this address to add email and password sign-in to your ${PRODUCT} account.`,
    action: 'Add email sign-in',
    link,
    expiresAt,
    closing: 'If you did not ask for this, ignore this email and nothing changes.',
  });
}

export function passwordResetMail({ link, expiresAt }: TokenMail): MailMessage {
  return linkMail({
    subject: `Reset your ${PRODUCT} password`,
    greeting: 'Hello,',
    body: `someone asked to reset the password of the ${PRODUCT} account with this email address.`,
    action: 'Choose a new password',
    link,
    expiresAt,
    closing: 'If it was not you, ignore this email: your password stays as it is.',
  });
}

export function lowBackupCodesMail(username: string, remaining: number): MailMessage {
  const codes = `backup code${remaining === 1 ? '' : 's'}`;
  return noticeMail(
    `Only ${remaining} ${PRODUCT} ${codes} left`,
    username,
    `you have ${remaining} two-factor ${codes} left for your ${PRODUCT} account. Sign in and generate new backup codes before you run out.`,
  );
}

/** A mail that only tells something: no link, no token. */
function noticeMail(subject: string, username: string, body: string): MailMessage {
  return {
    subject,
    text: `Hello ${username},\n\n${body}\n`,
    html: `<p>Hello ${escapeHtml(username)},</p><p>${escapeHtml(body)}</p>`,
  };
}

function linkMail(parts: {
  subject: string;
  greeting: string;
  body: string;
  action: string;
  link: string;
  expiresAt: Date;
  closing: string;
}): MailMessage {
  const expiry = `The link is valid until ${parts.expiresAt.toISOString()}.`;
  return {
    subject: parts.subject,
    text: `${parts.greeting}\n\n${parts.body}\n\n${parts.action}:\n${parts.link}\n\n${expiry}\n\n${parts.closing}\n`,
    html:
      `<p>${escapeHtml(parts.greeting)}</p><p>${escapeHtml(parts.body)}</p>` +
      `<p><a href="${escapeHtml(parts.link)}">${escapeHtml(parts.action)}</a></p>` +
      `<p>${escapeHtml(expiry)}</p><p>${escapeHtml(parts.closing)}</p>`,
  };
}

/** Whom a mail goes to, and how it speaks to them: their locale, and the time zone its times are in. */
export interface MailContact {
  username: string;
  email: string | null;
  locale: string | null;
  /** Chosen in the user's preferences; null: times in UTC. */
  timeZone: string | null;
}

/**
 * A time in a mail, to the minute: in the reader's time zone when they chose one (their preferences), named, else
 * in UTC. Written year first in every language ("2026-11-29 20:15 (Europe/Berlin)"), which no reader misreads.
 */
export function mailTime(at: Date, timeZone: string | null = null): string {
  if (!timeZone) return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const local = new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short', timeStyle: 'short' }).format(at);
  return `${local} (${timeZone})`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface ReportReview {
  eventType: string;
  eventAt: Date;
  /** The reporter's time zone (their preferences) for the event's time; none: UTC. */
  timeZone: string | null;
  status: string;
  resolutionNotes: string | null;
}

const REPORT_REVIEWED_TEXT = {
  en: {
    subject: `Your ${PRODUCT} activity report was reviewed`,
    greeting: (username: string) => `Hello ${username},`,
    body: (r: ReportReview) =>
      `an administrator reviewed your report about the "${r.eventType}" event of ${mailTime(r.eventAt, r.timeZone)}. Its status is now: ${r.status}.`,
    notes: 'Notes from the administrator:',
  },
  de: {
    subject: `Ihre ${PRODUCT}-Aktivitätsmeldung wurde geprüft`,
    greeting: (username: string) => `Guten Tag ${username},`,
    body: (r: ReportReview) =>
      `ein Administrator hat Ihre Meldung zum Ereignis „${r.eventType}“ vom ${mailTime(r.eventAt, r.timeZone)} geprüft. Ihr Status ist jetzt: ${r.status}.`,
    notes: 'Anmerkungen des Administrators:',
  },
};

/** To the user who reported an event, in their locale (English when it has no translation). */
export function reportReviewedMail(locale: string | null, username: string, review: ReportReview): MailMessage {
  const text =
    REPORT_REVIEWED_TEXT[(locale?.slice(0, 2) ?? 'en') as keyof typeof REPORT_REVIEWED_TEXT] ?? REPORT_REVIEWED_TEXT.en;
  const notes = review.resolutionNotes ? [text.notes, review.resolutionNotes] : [];
  return paragraphsMail(text.subject, [text.greeting(username), text.body(review), ...notes]);
}

/** A mail of plain paragraphs (no link to follow), the same in its text and HTML parts. */
export function paragraphsMail(subject: string, paragraphs: string[]): MailMessage {
  return {
    subject,
    text: `${paragraphs.join('\n\n')}\n`,
    html: paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join(''),
  };
}
