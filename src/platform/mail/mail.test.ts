import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSmtp, tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { createMailer } from './mailer.js';
import { passwordResetMail, tokenLink } from './messages.js';

const log = pino({ level: 'silent' });
const message = passwordResetMail({
  link: tokenLink('https://waygate.example', '/reset-password', 'tok/en+1'),
  expiresAt: new Date('2026-01-01T00:00:00Z'),
});

describe('mailer', () => {
  let smtp: FakeSmtp;
  beforeAll(async () => {
    smtp = await startFakeSmtp();
  });
  afterAll(() => smtp.close());

  it('delivers text and HTML parts over SMTP with the token in the link query string', async () => {
    const mailer = createMailer(
      { smtpUrl: smtp.url, mailFrom: 'Waygate <no-reply@waygate.test>', dataDir: '/nonexistent' },
      log,
    );
    await mailer.send('someone@example.org', message);
    mailer.close();
    const mail = await smtp.waitFor('someone@example.org');
    expect(mail.subject).toBe('Reset your Waygate password');
    expect(mail.text).toContain('https://waygate.example/reset-password?token=tok%2Fen%2B1');
    expect(tokenFromMail(mail)).toBe('tok/en+1');
    expect(mail.html).toContain('<a href="https://waygate.example/reset-password?token=tok%2Fen%2B1">');
  });

  it('writes an .eml file under DATA_DIR/outbox without SMTP_URL', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'waygate-mail-'));
    const mailer = createMailer({ smtpUrl: undefined, mailFrom: 'Waygate <no-reply@localhost>', dataDir }, log);
    await mailer.send('someone@example.org', message);
    const files = readdirSync(join(dataDir, 'outbox'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.eml$/);
    const eml = readFileSync(join(dataDir, 'outbox', files[0]!), 'utf8');
    expect(eml).toContain('To: someone@example.org');
    expect(eml).toContain('Subject: Reset your Waygate password');
    expect(eml).toContain('Content-Type: text/html');
  });

  it('fails when the SMTP server cannot be reached', async () => {
    const mailer = createMailer(
      { smtpUrl: 'smtp://127.0.0.1:1', mailFrom: 'x@localhost', dataDir: '/nonexistent' },
      log,
    );
    await expect(mailer.send('someone@example.org', message)).rejects.toThrow();
  });
});
