// Outgoing e-mail through nodemailer. With an SMTP URL (SMTP_URL, e.g.
// `smtp://user:pass@mail.example.org:587` or `smtps://…:465`) messages go to that server;
// without one, each message is rendered as a complete RFC 822 message (nodemailer's stream
// transport) and written as a `.eml` file into an outbox folder (DATA_DIR/mail), which any mail
// client opens and tests read. Files are written to a temporary name and renamed into place,
// so a reader never sees half a message.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createTransport } from 'nodemailer';
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Where messages go: `smtp` or `outbox <folder>`. */
  readonly description: string;
  send(message: MailMessage): Promise<void>;
  close(): void;
}

export interface MailerOptions {
  /** SMTP connection URL; when empty, messages are written as .eml files into outboxDir. */
  smtpUrl: string | undefined;
  outboxDir: string;
  /** The From address, e.g. `Open Inspection <noreply@example.org>`. */
  from: string;
  logger: Logger;
}

export function createMailer(options: MailerOptions): Mailer {
  return options.smtpUrl ? new SmtpMailer(options.smtpUrl, options.from, options.logger) : new OutboxMailer(options.outboxDir, options.from, options.logger);
}

class SmtpMailer implements Mailer {
  readonly description = 'smtp';
  private readonly transport;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    private readonly logger: Logger,
  ) {
    this.transport = createTransport(smtpUrl);
  }

  async send(message: MailMessage): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
    this.logger.info({ messageId: info.messageId, subject: message.subject }, 'e-mail sent');
  }

  close(): void {
    this.transport.close();
  }
}

class OutboxMailer implements Mailer {
  readonly description: string;
  private readonly transport = createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  constructor(
    private readonly dir: string,
    private readonly from: string,
    private readonly logger: Logger,
  ) {
    this.description = `outbox ${dir}`;
  }

  async send(message: MailMessage): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${crypto.randomBytes(4).toString('hex')}.eml`;
    const tmp = path.join(this.dir, `.${name}.tmp`);
    await fs.writeFile(tmp, info.message as Buffer, { mode: 0o600 });
    await fs.rename(tmp, path.join(this.dir, name));
    this.logger.info({ file: name, subject: message.subject }, 'e-mail written to the outbox');
  }

  close(): void {
    this.transport.close();
  }
}
