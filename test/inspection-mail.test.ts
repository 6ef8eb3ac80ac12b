// The mailer (src/infra/mail): without SMTP_URL each message is a complete .eml file in the
// outbox folder; with SMTP_URL it goes to that server (here a minimal fake SMTP server).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { createMailer } from '../src/infra/mail/mailer.ts';
import { tempDir } from './helpers/test-system.ts';

/** Accepts one SMTP session at a time and records each message's DATA. */
function fakeSmtpServer(): Promise<{ port: number; messages: string[]; close(): Promise<void> }> {
  const messages: string[] = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let inData = false;
    let data = '';
    socket.write('220 fake.smtp ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let index;
      while ((index = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, index);
        buffer = buffer.slice(index + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            messages.push(data);
            data = '';
            socket.write('250 OK queued\r\n');
          } else data += `${line.startsWith('..') ? line.slice(1) : line}\n`;
          continue;
        }
        const command = line.slice(0, 4).toUpperCase();
        if (command === 'EHLO' || command === 'HELO') socket.write('250-fake.smtp\r\n250 8BITMIME\r\n');
        else if (command === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (command === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 OK\r\n');
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({ port, messages, close: () => new Promise((done) => server.close(() => done())) });
    });
  });
}

describe('mailer', () => {
  let dir: string;
  before(() => {
    dir = tempDir('oi-mail-');
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes a complete .eml file into the outbox when no SMTP URL is set', async () => {
    const outbox = path.join(dir, 'mail');
    const mailer = createMailer({ smtpUrl: undefined, outboxDir: outbox, from: 'Open Inspection <noreply@example.test>', logger: pino({ level: 'silent' }) });
    await mailer.send({ to: 'someone@example.test', subject: 'Hello', text: 'Body text' });
    const files = fs.readdirSync(outbox);
    assert.equal(files.length, 1);
    assert.match(files[0], /\.eml$/);
    const raw = fs.readFileSync(path.join(outbox, files[0]), 'utf8');
    assert.match(raw, /^From: Open Inspection <noreply@example\.test>$/m);
    assert.match(raw, /^To: someone@example\.test$/m);
    assert.match(raw, /^Subject: Hello$/m);
    assert.match(raw, /^Message-ID: </m);
    assert.match(raw, /Body text/);
    assert.equal(fs.statSync(path.join(outbox, files[0])).mode & 0o777, 0o600, 'readable by the owner only');
    mailer.close();
  });

  it('sends through the SMTP server of SMTP_URL', async () => {
    const smtp = await fakeSmtpServer();
    try {
      const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, outboxDir: path.join(dir, 'unused'), from: 'noreply@example.test', logger: pino({ level: 'silent' }) });
      await mailer.send({ to: 'ops@example.test', subject: 'Inputs ready', text: 'Download them.' });
      mailer.close();
      assert.equal(smtp.messages.length, 1);
      assert.match(smtp.messages[0], /^Subject: Inputs ready$/m);
      assert.match(smtp.messages[0], /^To: ops@example\.test$/m);
      assert.ok(!fs.existsSync(path.join(dir, 'unused')), 'nothing written to the outbox');
    } finally {
      await smtp.close();
    }
  });
});
