// Outgoing e-mail through nodemailer. With an SMTP URL (SMTP_URL, e.g.
// `smtp://user:pass@mail.example.org:587` or `smtps://…:465`) messages go to that server;
// without one, each message is rendered as a complete RFC 822 message (nodemailer's stream
// transport) and written as a `.eml` file into an outbox folder (DATA_DIR/mail), which any mail
// client opens and tests read. Files are written to a temporary name and renamed into place,
// so a reader never sees half a message.
// nodemailer is loaded with the first message, not at start (most processes send none; it is
// ~16 MB of a process's memory: bench/README.md, "Memory").
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';

type TransportOptions = Parameters<(typeof import('nodemailer'))['createTransport']>[0];

/** A nodemailer transport created on first use. */
function lazyTransport(options: TransportOptions): { get(): Promise<Transporter>; close(): void } {
  let transport: Promise<Transporter> | undefined;
  return {
    get: () => (transport ??= import('nodemailer').then((m) => m.createTransport(options))),
    close: () => void transport?.then((t) => t.close(), () => undefined),
  };
}

/** Longest address RFC 5321 allows in a path. */
export const MAX_EMAIL_LENGTH = 254;

/**
 * Why `address` cannot be a recipient, or undefined: one `local@domain` with a dotted domain, no
 * spaces, no second address and no display name (the admin CLI's check; the server's answer decides
 * the rest).
 */
export function emailAddressProblem(address: string): string | undefined {
  if (address.length > MAX_EMAIL_LENGTH) return `An e-mail address has at most ${MAX_EMAIL_LENGTH} characters.`;
  if (!/^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;".]+$/.test(address)) return `"${address}" is not an e-mail address (local@domain.tld).`;
  return undefined;
}

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
    this.transport = lazyTransport(smtpUrl);
  }

  async send(message: MailMessage): Promise<void> {
    const info = await (await this.transport.get()).sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
    this.logger.info({ messageId: info.messageId, subject: message.subject }, 'e-mail sent');
  }

  close(): void {
    this.transport.close();
  }
}

class OutboxMailer implements Mailer {
  readonly description: string;
  private readonly transport = lazyTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  constructor(
    private readonly dir: string,
    private readonly from: string,
    private readonly logger: Logger,
  ) {
    this.description = `outbox ${dir}`;
  }

  async send(message: MailMessage): Promise<void> {
    const info = await (await this.transport.get()).sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
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
