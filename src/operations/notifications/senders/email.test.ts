import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSmtp, type FakeSmtp } from '../../../../test/fakes/smtp.js';
import { sampleNotification } from '../../../../test/notifications.js';
import { createMailer } from '../../../platform/mail/mailer.js';
import { sendEmail } from '../index.js';

describe('email sender', () => {
  let smtp: FakeSmtp;
  beforeAll(async () => {
    smtp = await startFakeSmtp();
  });
  afterAll(() => smtp.close());

  it('mails the notification in the reader’s language and time zone', async () => {
    const mailer = createMailer(
      { smtpUrl: smtp.url, mailFrom: 'Waygate <no-reply@waygate.test>', dataDir: '/nonexistent' },
      pino({ level: 'silent' }),
    );
    const contact = { username: 'kim', email: 'kim@example.org', locale: 'de-DE', timeZone: 'Europe/Berlin' };
    const result = await sendEmail(mailer, contact, sampleNotification({ title: 'Van 3 hat Depot betreten' }));
    mailer.close();
    expect(result).toEqual({ ok: true, status: null, detail: 'mail accepted', retryable: false });
    const mail = await smtp.waitFor('kim@example.org');
    expect(mail.subject).toBe('Van 3 hat Depot betreten');
    expect(mail.text).toBe(
      'Guten Tag kim,\n\nVan 3 entered the geofence Depot (Hamburg).\n\n' +
        'Zeitpunkt: 2026-11-29 15:02 (Europe/Berlin)\n\nÖffnen: https://waygate.example/events/3f1c\n',
    );
  });

  it('an address the server refuses (5xx) is final; a failed connection or a 4xx is worth a retry', async () => {
    const contact = { username: 'kim', email: 'kim@example.org', locale: null, timeZone: null };
    const refusing = {
      send: () => Promise.reject(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 })),
    };
    expect(await sendEmail(refusing, contact, sampleNotification())).toEqual({
      ok: false,
      status: null,
      detail: 'SMTP 550: Mailbox unavailable',
      retryable: false,
    });
    const busy = { send: () => Promise.reject(Object.assign(new Error('Try later'), { responseCode: 451 })) };
    expect(await sendEmail(busy, contact, sampleNotification())).toMatchObject({ ok: false, retryable: true });
    const down = { send: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:25')) };
    expect(await sendEmail(down, contact, sampleNotification())).toEqual({
      ok: false,
      status: null,
      detail: 'connect ECONNREFUSED 127.0.0.1:25',
      retryable: true,
    });
    expect(await sendEmail(down, { ...contact, email: null }, sampleNotification())).toEqual({
      ok: false,
      status: null,
      detail: 'the user has no email address',
      retryable: false,
    });
  });
});
