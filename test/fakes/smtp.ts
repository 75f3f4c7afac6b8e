import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * A real SMTP server on loopback that keeps every message it receives, parsed.
 * The service under test sends to it through SMTP_URL like to any mail relay.
 */
export async function startFakeSmtp() {
  const received: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail: ParsedMail) => {
          for (const recipient of session.envelope.rcptTo) {
            received.push({
              to: recipient.address,
              subject: mail.subject ?? '',
              text: mail.text ?? '',
              html: typeof mail.html === 'string' ? mail.html : '',
            });
          }
          for (const wake of waiters) wake();
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    /** The newest mail to this address, waiting up to 5 s for it to arrive. */
    async waitFor(to: string, match: (mail: ReceivedMail) => boolean = () => true): Promise<ReceivedMail> {
      const deadline = Date.now() + 5000;
      for (;;) {
        const mail = received.findLast((m) => m.to === to && match(m));
        if (mail) return mail;
        if (Date.now() > deadline) throw new Error(`no mail to ${to} within 5 s`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
          setTimeout(wake, 100);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type FakeSmtp = Awaited<ReturnType<typeof startFakeSmtp>>;

/** The token of the link in a mail's plain-text part (`…?token=<token>`). */
export function tokenFromMail(mail: ReceivedMail): string {
  const match = /[?&]token=([^&\s]+)/.exec(mail.text);
  if (!match) throw new Error(`no token link in mail "${mail.subject}"`);
  return decodeURIComponent(match[1]!);
}
