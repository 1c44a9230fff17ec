// Owner notifications survive a worker killed in the middle of sending and an SMTP relay
// that is down for a minute: each email arrives exactly once. The relay is a Mailpit of
// this file's own (its SMTP port held by a stopped process, then the process gone and
// started again on the same ports and data), the worker a child process SIGKILLed while
// it talks to the relay, the API in this process.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { startTestApp, TestApp } from '../helpers/app';
import { deleteSchedulesOf, ROOT, ServiceProcess, stackEnv, startWorkerProcess } from './children';
import { until } from './ledger';
import { freePort, portOpen, startMailpit } from '../../scripts/stack';
import { messagesTo, waitForMail } from '../helpers/mailpit';
import { letterForm, letterPdf, newSender, sendLetter } from '../integration/mail-helpers';

jest.setTimeout(420_000);

describe('notifications through a worker kill and an SMTP outage', () => {
  let app: TestApp;
  let taskQueue: string;
  let mailpit: ChildProcess;
  const workers: ServiceProcess[] = [];
  const dataDir = path.join(ROOT, '.data', 'test', `mailpit-faults-${randomBytes(4).toString('hex')}`);
  let ports: { smtp: number; ui: number };
  let mailpitApi: string;

  const startRelay = async () => {
    mailpit = startMailpit(dataDir, ports, false, { maxMessages: 0 });
    await until('Mailpit to answer', async () => (await portOpen(ports.smtp)) && (await portOpen(ports.ui)), 30000);
  };
  const stopRelay = async () => {
    const exited = new Promise((r) => mailpit.once('exit', r));
    mailpit.kill('SIGTERM');
    await exited;
  };
  const startWorker = async () => {
    const w = await startWorkerProcess(app.deps.temporal, {
      env: stackEnv({ SMTP_URL: `smtp://127.0.0.1:${ports.smtp}` }),
      taskQueue,
      capture: true,
    });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    mkdirSync(dataDir, { recursive: true });
    ports = { smtp: await freePort(), ui: await freePort() };
    mailpitApi = `http://127.0.0.1:${ports.ui}`;
    await startRelay();
    app = await startTestApp({ worker: false });
    taskQueue = app.deps.config.taskQueue;
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    if (app) {
      await deleteSchedulesOf(app.deps.temporal, taskQueue);
      await app.close();
    }
    if (mailpit?.exitCode === null) {
      mailpit.kill('SIGCONT');
      await stopRelay();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function approvalWaiting(): Promise<{ email: string; eventKey: string }> {
    const s = await newSender(app, { creditsCents: 50_000, credential: { force_approval: true } });
    const res = await sendLetter(app, s, letterForm(await letterPdf(1)));
    expect(res.body.status).toBe('pending_approval');
    const [{ email }] = await app.deps.db.query(`SELECT email FROM members WHERE id = $1`, [s.memberId]);
    return { email, eventKey: `mail:${res.body.id}:mail.pending_approval` };
  }

  const row = async (eventKey: string) =>
    (
      await app.deps.db.query(`SELECT status, attempts, message_id FROM notifications WHERE event_key = $1`, [eventKey])
    )[0] as { status: string; attempts: number; message_id: string } | undefined;

  it('sends once when the worker is killed in the middle of talking to the relay', async () => {
    const first = await startWorker();
    // The relay accepts the connection but never greets: the send hangs mid-conversation.
    mailpit.kill('SIGSTOP');
    const { email, eventKey } = await approvalWaiting();
    await until(
      'the email to be in the middle of sending',
      async () => (await row(eventKey))?.status === 'sending',
      60000,
    );
    await first.kill9();
    mailpit.kill('SIGCONT');

    await startWorker();
    const [mail] = await waitForMail(email, { base: mailpitApi, timeoutMs: 180_000 });
    const sent = await row(eventKey);
    expect(sent).toMatchObject({ status: 'sent' });
    expect(sent!.attempts).toBeGreaterThanOrEqual(2);
    expect(`<${mail.MessageID}>`).toBe(sent!.message_id);
    // Time for a second copy to show up, if one were coming.
    await new Promise((r) => setTimeout(r, 5000));
    expect(await messagesTo(email, mailpitApi)).toHaveLength(1);
  });

  it('delays an email while the relay is down for a minute, then sends it once', async () => {
    if (!workers.some((w) => w.running)) await startWorker();
    await stopRelay();
    const { email, eventKey } = await approvalWaiting();
    await until('a refused attempt', async () => ((await row(eventKey))?.attempts ?? 0) >= 1, 60000);
    await new Promise((r) => setTimeout(r, 60_000));
    const during = await row(eventKey);
    expect(during!.status).not.toBe('sent');
    expect(during!.attempts).toBeGreaterThanOrEqual(2);

    await startRelay();
    const [mail] = await waitForMail(email, { base: mailpitApi, timeoutMs: 120_000 });
    expect(`<${mail.MessageID}>`).toBe((await row(eventKey))!.message_id);
    expect(await row(eventKey)).toMatchObject({ status: 'sent' });
    await new Promise((r) => setTimeout(r, 5000));
    expect(await messagesTo(email, mailpitApi)).toHaveLength(1);
  });
});
