import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Transporter } from 'nodemailer';
import type { Config } from '../../config.js';
import type { MailMessage } from './messages.js';

export interface Mailer {
  /** Delivers the message or throws; callers decide whether a failed mail undoes their change. */
  send(to: string, message: MailMessage): Promise<void>;
  close(): void;
}

/**
 * Mail through nodemailer: to the SMTP server of SMTP_URL, or, without one, as
 * `.eml` files under DATA_DIR/outbox so a single-machine install still gets
 * its verification links. The log names recipient and subject, never the body
 * (it carries tokens). nodemailer is loaded with the first mail, not at start.
 */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'dataDir'>, log: FastifyBaseLogger): Mailer {
  let transport: Promise<Transporter> | undefined;
  const transportFor = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      config.smtpUrl
        ? nodemailer.createTransport(config.smtpUrl)
        : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }),
    ));
  const outbox = join(config.dataDir, 'outbox');

  return {
    async send(to, message) {
      const info = await (await transportFor()).sendMail({ from: config.mailFrom, to, ...message });
      if (config.smtpUrl) {
        log.info({ to, subject: message.subject }, 'mail sent');
        return;
      }
      await mkdir(outbox, { recursive: true, mode: 0o700 });
      const file = join(outbox, `${new Date().toISOString().replaceAll(':', '-')}-${randomUUID()}.eml`);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      log.info({ to, subject: message.subject, file }, 'mail written to the outbox');
    },
    close: () => void transport?.then((t) => t.close()),
  };
}
