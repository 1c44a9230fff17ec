// Owner notifications by email through the real API, worker, Temporal, Postgres and
// Mailpit (read through its HTTP API): the approval email arrives once with both parts,
// unsubscribe headers and a link that lands on the approval after sign-in; a burst of
// approvals becomes the first email and one digest; a 500-piece batch failing is one
// email; unsubscribing switches a kind off for its recipient only; the low-balance,
// refused-for-credits (at most one an hour) and credits-bought emails; the approval
// reminder, mail arriving at the mailbox, a handling proposal, an endpoint paused (once);
// sign-up verification moves the lead's stage, once, and refuses an expired link.
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember, uniqueEmail } from '../helpers/factories';
import { headers, linkIn, message, messagesTo, waitForMail } from '../helpers/mailpit';
import { letterForm, letterPdf, newSender, sendLetter, waitFor, type Sender } from './mail-helpers';
import { batchForm, ensureFacility, facilityKeyFor, pdf, recipientsCsv, waitForStatus } from './batch-helpers';
import { deliver, newPurchase, processed, sessionEvent } from './payments-helpers';
import { loadMailRow, publishMailEvent } from '../../services/outbound-mail/record';
import { topUp } from '../../services/billing/credits';
import { publishEvent } from '../../services/webhooks/events';
import { recordApprovalReminders } from '../../services/notifications/reconciler';
import { notifyOwner, recordNotice } from '../../services/notifications/notices';
import { newWorld, receivePiece } from '../helpers/physical-inbound';
import { answerChallenges, startReceiver } from './webhook-helpers';

jest.setTimeout(240_000);

/** Short, so the digest of a burst arrives within the test (the default is an hour). */
const DIGEST_WINDOW_SECONDS = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('owner notifications by email', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    app = await startTestApp({
      env: { NOTIFICATION_DIGEST_WINDOW_SECONDS: String(DIGEST_WINDOW_SECONDS), WEBHOOK_RETRY_BASE_MS: '50' },
    });
    api = client(app.baseUrl);
  });
  afterAll(async () => {
    await app?.close();
  });

  const emailOf = async (memberId: string): Promise<string> =>
    (await app.deps.db.query(`SELECT email FROM members WHERE id = $1`, [memberId]))[0].email;

  async function approvalSender(creditsCents = 50_000): Promise<Sender & { email: string }> {
    const s = await newSender(app, { creditsCents, credential: { force_approval: true } });
    return { ...s, email: await emailOf(s.memberId) };
  }

  async function pendingLetter(s: Sender): Promise<string> {
    const res = await sendLetter(app, s, letterForm(await letterPdf(1)));
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('pending_approval');
    return res.body.id;
  }

  /** Signs in on the console page with the member key, as a person would: the sign-in form's CSRF cookie and token, then the POST. */
  async function signInAndFollow(
    link: string,
    memberKey: string,
  ): Promise<{ url: string; html: string; cookie: string }> {
    const first = await fetch(link, { redirect: 'manual' });
    expect(first.status).toBe(302);
    const signIn = new URL(first.headers.get('location')!, app.siteUrl);
    expect(signIn.pathname).toBe('/console/sign-in');
    const page = await fetch(signIn);
    const preCookie = page.headers.get('set-cookie')!.split(';')[0];
    const html = await page.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1];
    const next = /name="next" value="([^"]+)"/.exec(html)![1].replace(/&amp;/g, '&');
    const posted = await fetch(`${app.siteUrl}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: preCookie },
      body: new URLSearchParams({ _csrf: csrf, next, key: memberKey }),
    });
    expect(posted.status).toBe(302);
    const cookie = posted.headers.get('set-cookie')!.split(';')[0];
    const landed = new URL(posted.headers.get('location')!, app.siteUrl).toString();
    const res = await fetch(landed, { headers: { cookie } });
    expect(res.status).toBe(200);
    return { url: landed, html: await res.text(), cookie };
  }

  it('emails a letter waiting for approval once, with a working link straight to it', async () => {
    const s = await approvalSender();
    const id = await pendingLetter(s);
    const [mail] = await waitForMail(s.email);
    expect(mail.Subject).toMatch(/^Approval needed: a letter to Jane Doe, Austin, TX 78701 \(\$\d+\.\d\d\)$/);

    const full = await message(mail.ID);
    expect(full.Text).toContain('A letter waits for your approval');
    expect(full.Text).toMatch(/Agent: \S+/);
    expect(full.HTML).toContain('Review and approve');
    // No remote images or trackers: no <img> at all, and every link is this site's own.
    expect(full.HTML).not.toMatch(/<img/i);
    const hrefs = [...full.HTML.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) expect(href.startsWith(app.siteUrl)).toBe(true);
    const h = await headers(mail.ID);
    expect(h['List-Unsubscribe'][0]).toMatch(new RegExp(`^<${app.siteUrl}/email/unsubscribe\\?token=[^>]+>$`));
    expect(h['List-Unsubscribe-Post']).toEqual(['List-Unsubscribe=One-Click']);
    expect(h['Message-Id'][0]).toMatch(/^<n\.[0-9a-f-]{36}@postal\.localhost>$/);

    // The event published again (a retried activity, a redelivery) records nothing new and sends nothing.
    const row = (await loadMailRow(app.deps.db, id))!;
    await publishMailEvent(app.deps, row, 'mail.pending_approval');
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM notifications WHERE event_key = $1`, [
      `mail:${id}:mail.pending_approval`,
    ]);
    expect(n).toBe(1);

    // The link: through sign-in, to the letter's own page with its decision.
    const link = linkIn(full.Text, `${app.siteUrl}/console/mail/`);
    expect(link).toBe(`${app.siteUrl}/console/mail/${id}`);
    const landed = await signInAndFollow(link, s.memberKey);
    expect(landed.url).toBe(link);
    expect(landed.html).toContain('Approve and pay');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(landed.html)![1];
    const approved = await fetch(`${app.siteUrl}/console/mail/${id}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: landed.cookie },
      body: new URLSearchParams({ _csrf: csrf, back: 'detail' }),
    });
    expect(approved.status).toBe(302);
    await waitFor(async () => (await loadMailRow(app.deps.db, id))?.status === 'submitted', 'the approved letter');

    await sleep(2000);
    expect(await messagesTo(s.email)).toHaveLength(1);
  });

  it('gathers a burst of approvals into the first email and one digest', async () => {
    // An app of its own with a longer window, so the whole burst lands inside it on a loaded machine.
    const burstApp = await startTestApp({ env: { NOTIFICATION_DIGEST_WINDOW_SECONDS: '20' } });
    try {
      const s = await newSender(burstApp, { creditsCents: 50_000, credential: { force_approval: true } });
      const email = await emailOf(s.memberId);
      const submit = async (document: Buffer) => {
        const res = await sendLetter(burstApp, s, letterForm(document));
        expect(res.body.status).toBe('pending_approval');
        return res.body.id as string;
      };
      const documents = await Promise.all(Array.from({ length: 12 }, () => letterPdf(1)));
      const first = await submit(documents[0]);
      const [firstMail] = await waitForMail(email);
      expect(linkIn((await message(firstMail.ID)).Text, `${burstApp.siteUrl}/console/mail/`)).toBe(
        `${burstApp.siteUrl}/console/mail/${first}`,
      );
      // Eleven more while the window the first email opened runs: nothing goes out until it ends.
      const started = Date.now();
      const rest = await Promise.all(documents.slice(1).map(submit));
      console.log(`[notifications] 11 approvals submitted in ${Date.now() - started} ms`);
      const mails = await waitForMail(email, { count: 2, timeoutMs: 90_000 });
      expect(mails[1].Subject).toBe('Digest: A letter waits for your approval (11)');
      const digest = await message(mails[1].ID);
      const listed = [...digest.Text.matchAll(/\/console\/mail\/([0-9a-f-]{36})/g)].map((m) => m[1]);
      expect(new Set(listed)).toEqual(new Set(rest));
      expect(digest.HTML).toContain('11 since the last email of this kind');
      const rows = await burstApp.deps.db.query(
        `SELECT status, is_digest FROM notifications WHERE member_id = $1 ORDER BY created_at`,
        [s.memberId],
      );
      expect(rows.filter((r: { status: string }) => r.status === 'digested')).toHaveLength(11);
      expect(rows.filter((r: { status: string }) => r.status === 'sent')).toHaveLength(2);
      expect(await messagesTo(email)).toHaveLength(2);
    } finally {
      await burstApp.close();
    }
  });

  it("records a new member's first notices when they race to make the owner's recipient row", async () => {
    const member = await newMember(app.deps);
    const notice = (i: number) => ({
      memberId: member.member_id,
      kind: 'mail_arrived' as const,
      eventKey: `test:first-race:${member.member_id}:${i}`,
      payload: { item_id: `item-${i}` },
    });
    // The first notice's transaction made the owner's row and stays open; the second waits on
    // that row, and must still find it once the first commits.
    let release!: () => void;
    let recorded!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const firstRecorded = new Promise<void>((r) => (recorded = r));
    const first = app.deps.db.transaction(async (tx) => {
      const n = await recordNotice(tx, notice(0));
      recorded();
      await gate;
      return n;
    });
    await firstRecorded;
    const second = notifyOwner(app.deps, notice(1));
    await sleep(500);
    release();
    expect([await first, await second]).toEqual([1, 1]);
    const others = await Promise.all([2, 3, 4, 5, 6, 7].map((i) => notifyOwner(app.deps, notice(i))));
    expect(others).toEqual([1, 1, 1, 1, 1, 1]);
    const [{ recipients }] = await app.deps.db.query(
      `SELECT count(*)::int AS recipients FROM notification_recipients WHERE member_id = $1`,
      [member.member_id],
    );
    expect(recipients).toBe(1);
    // Recording one again adds nothing.
    expect(await notifyOwner(app.deps, notice(0))).toBe(0);
  });

  it('tells of a failed 500-piece batch in one email', async () => {
    await ensureFacility(app.deps);
    const member = await newMember(app.deps, { creditsCents: 100_000 });
    const email = await emailOf(member.member_id);
    const draft = await api('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(500), { job_name: 'Spring postcards' }),
    });
    expect(draft.status).toBe(201);
    const batchId = draft.body.batch.id;
    expect((await api('POST', `/v1/batch-mail/${batchId}/confirm`, { key: member.key })).status).toBe(200);
    await waitForStatus(app.baseUrl, member.key, batchId, ['submitted']);
    const [{ facility_id }] = await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [batchId]);
    const facilityKey = await facilityKeyFor(app.deps, facility_id);
    await api('POST', `/v1/facility/batches/${batchId}/start`, { key: facilityKey });
    // The facility reports failed pieces in parts, then gives up on the batch.
    for (const from of [1, 101, 201])
      await api('POST', `/v1/facility/batches/${batchId}/pieces`, {
        key: facilityKey,
        json: { status: 'failed', ranges: [{ from, to: from + 99 }], reason: 'Misfed card' },
      });
    const failed = await api('POST', `/v1/facility/batches/${batchId}/fail`, {
      key: facilityKey,
      json: { error_message: 'The press broke down' },
    });
    expect(failed.body.batch).toMatchObject({ status: 'failed', pieces: { failed: 500 } });

    const [mail] = await waitForMail(email);
    expect(mail.Subject).toBe('Batch Spring postcards: 500 of 500 pieces not mailed');
    const text = (await message(mail.ID)).Text;
    expect(text).toContain('Reason: The press broke down');
    expect(linkIn(text, `${app.siteUrl}/console/batches/`)).toBe(`${app.siteUrl}/console/batches/${batchId}`);
    await sleep(3000);
    expect(await messagesTo(email)).toHaveLength(1);
  });

  it('unsubscribes one kind for one recipient, by the confirm page or a one-click POST', async () => {
    const s = await approvalSender(5000);
    await pendingLetter(s);
    const [mail] = await waitForMail(s.email);
    const unsubscribe = (await message(mail.ID)).ListUnsubscribe.Links[0];

    // The link opened: a confirm page that changes nothing yet.
    const page = await fetch(unsubscribe);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Stop these emails?');
    expect(html).toContain('a letter waits for your approval');
    const settings = async () =>
      (await api('GET', '/v1/notifications/settings', { key: s.memberKey })).body.recipients[0].kinds;
    expect((await settings()).approval_needed).toBe(true);

    // A mail client's one-click unsubscribe (RFC 8058): no cookie, no CSRF token.
    const oneClick = await fetch(unsubscribe, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.status).toBe(200);
    expect(await settings()).toMatchObject({ approval_needed: false, low_balance: true, piece_failed: true });
    // Clicking again works as well (it stays off), and a forged token is refused.
    expect((await fetch(unsubscribe, { method: 'POST' })).status).toBe(200);
    const forged = unsubscribe.replace(/token=([^.]+)\./, 'token=$1x.');
    expect((await fetch(forged)).status).toBe(400);

    // The next approval is not emailed; another kind still is: approving it crosses the threshold.
    const id = await pendingLetter(s);
    await api('PATCH', '/v1/notifications/settings', { key: s.memberKey, json: { low_balance_threshold_cents: 4990 } });
    expect((await api('POST', `/v1/mail/${id}/approve`, { key: s.memberKey })).status).toBe(200);
    const mails = await waitForMail(s.email, { count: 2 });
    expect(mails[1].Subject).toMatch(/^Low balance: /);
    await sleep(2000);
    expect((await messagesTo(s.email)).map((m) => m.Subject.split(':')[0])).toEqual(['Approval needed', 'Low balance']);
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM notifications WHERE event_key = $1`, [
      `mail:${id}:mail.pending_approval`,
    ]);
    expect(n).toBe(0);
  });

  it('manages extra recipients: added once, kinds switched, removed; the owner stays', async () => {
    const s = await newSender(app, { creditsCents: 0 });
    const extra = uniqueEmail();
    const added = await api('POST', '/v1/notifications/recipients', { key: s.memberKey, json: { email: extra } });
    expect(added.status).toBe(201);
    expect(added.body.recipient).toMatchObject({ email: extra, owner: false, status: 'pending_confirmation' });
    const id: string = added.body.recipient.id;

    // The same address again (in other case) is refused and adds nothing.
    const again = await api('POST', '/v1/notifications/recipients', {
      key: s.memberKey,
      json: { email: extra.toUpperCase() },
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('RECIPIENT_EXISTS');

    const patched = await api('PATCH', `/v1/notifications/recipients/${id}`, {
      key: s.memberKey,
      json: { kinds: { low_balance: false } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.recipient.kinds).toMatchObject({ low_balance: false, approval_needed: true });

    // The owner's own address cannot be removed; the extra one can, once.
    const settings = await api('GET', '/v1/notifications/settings', { key: s.memberKey });
    const owner = settings.body.recipients.find((r: { owner: boolean }) => r.owner);
    const refused = await api('DELETE', `/v1/notifications/recipients/${owner.id}`, { key: s.memberKey });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('RECIPIENT_IS_OWNER');
    const removed = await api('DELETE', `/v1/notifications/recipients/${id}`, { key: s.memberKey });
    expect(removed.status).toBe(200);
    expect(removed.body.recipient.id).toBe(id);
    expect((await api('DELETE', `/v1/notifications/recipients/${id}`, { key: s.memberKey })).status).toBe(404);
    const after = await api('GET', '/v1/notifications/settings', { key: s.memberKey });
    expect(after.body.recipients.map((r: { id: string }) => r.id)).toEqual([owner.id]);
  });

  it('tells of a low balance once per crossing, of a refusal for credits at most once an hour, and of credits bought', async () => {
    const s = await newSender(app, { creditsCents: 0 });
    const email = await emailOf(s.memberId);
    const quote = await sendLetter(app, s, letterForm(await letterPdf(1), { dry_run: 'true' }));
    const price: number = quote.body.cost_cents;
    await topUp(app.deps.db, {
      memberId: s.memberId,
      amountCents: price + 100,
      entryKey: `topup:notify:${s.memberId}`,
    });
    // Threshold just under the balance: the first letter crosses it.
    await api('PATCH', '/v1/notifications/settings', {
      key: s.memberKey,
      json: { low_balance_threshold_cents: price },
    });
    expect((await sendLetter(app, s, letterForm(await letterPdf(1)))).status).toBe(201);
    // Two refusals for credits: one email.
    for (let i = 0; i < 2; i++) expect((await sendLetter(app, s, letterForm(await letterPdf(1)))).status).toBe(402);

    const mails = await waitForMail(email, { count: 2 });
    const subjects = mails.map((m) => m.Subject);
    expect(subjects).toContain(`Low balance: $${(100 / 100).toFixed(2)} left`);
    const refused = mails.find((m) => m.Subject.startsWith('A live submission was refused'))!;
    expect(refused).toBeDefined();
    expect(linkIn((await message(refused.ID)).Text, app.siteUrl)).toBe(`${app.siteUrl}/console/billing`);

    // Credits bought with Stripe: one email, however often Stripe delivers the event.
    const purchase = await newPurchase(app, s.memberId, 2500);
    const paid = sessionEvent('checkout.session.completed', purchase);
    expect([await deliver(app, paid), await deliver(app, paid)]).toEqual([200, 200]);
    await processed(app, paid.id);
    const withCredits = await waitForMail(email, { count: 3, timeoutMs: 60_000 });
    expect(withCredits.map((m) => m.Subject)).toContain('Credits added: $25.00');

    // A later refusal in the same hour is not emailed again, nor gathered into a digest.
    await app.deps.db.query(
      `INSERT INTO credits_ledger (member_id, amount_cents, kind, entry_key) VALUES ($1, $2, 'adjustment', $3)`,
      [s.memberId, -2500, `debit:notify:${s.memberId}`],
    );
    expect((await sendLetter(app, s, letterForm(await letterPdf(1)))).status).toBe(402);
    await sleep((DIGEST_WINDOW_SECONDS + 3) * 1000);
    const final = (await messagesTo(email)).map((m) => m.Subject);
    expect(final.filter((x) => x.startsWith('A live submission was refused'))).toHaveLength(1);
    expect(final.filter((x) => x.startsWith('Low balance'))).toHaveLength(1);
    expect(final).toHaveLength(3);
  });

  it('reminds of an approval about to expire, once', async () => {
    const s = await approvalSender();
    const id = await pendingLetter(s);
    await waitForMail(s.email);
    // The letter was made 29 days ago: its 30-day approval ends within 48 hours.
    await app.deps.db.query(`UPDATE outbound_mail SET created_at = now() - interval '29 days' WHERE id = $1`, [id]);
    const input = { approvalTimeoutSeconds: 30 * 86400, approvalExpiryNoticeSeconds: 48 * 3600, overdueSeconds: 60 };
    expect(await recordApprovalReminders(app.deps, input)).toBeGreaterThanOrEqual(1);
    await recordApprovalReminders(app.deps, input);
    const mails = await waitForMail(s.email, { count: 2 });
    expect(mails[1].Subject).toBe('Approval expires soon: a letter to Jane Doe, Austin, TX 78701');
    expect(linkIn((await message(mails[1].ID)).Text, `${app.siteUrl}/console/`)).toBe(
      `${app.siteUrl}/console/mail/${id}`,
    );
    await sleep(2000);
    expect(await messagesTo(s.email)).toHaveLength(2);
  });

  it('tells of mail arriving at the mailbox and of an agent proposing its handling', async () => {
    const w = await newWorld(app, { creditsCents: 5000 });
    const email = await emailOf(w.memberId);
    const item = await receivePiece(app, w);
    const [arrived] = await waitForMail(email);
    expect(arrived.Subject).toBe('Mail arrived at your mailbox');
    expect(linkIn((await message(arrived.ID)).Text, `${app.siteUrl}/console/`)).toBe(
      `${app.siteUrl}/console/inbound/${item}`,
    );
    const version = (await api('GET', `/v1/agent-inbox/${item}/handling`, { key: w.agentKey })).body.version;
    const proposed = await api('POST', `/v1/agent-inbox/${item}/handling`, {
      key: w.agentKey,
      headers: { 'x-service-md-version': '1', 'idempotency-key': `notify-${item}` },
      json: { action_type: 'open_and_scan', expected_version: version },
    });
    expect(proposed.status).toBe(201);
    const mails = await waitForMail(email, { count: 2 });
    expect(mails[1].Subject).toMatch(/^Approval needed: .* proposes to open and scan an item$/);
    expect(linkIn((await message(mails[1].ID)).Text, `${app.siteUrl}/console/`)).toBe(`${app.siteUrl}/console/inbound`);
  });

  it('tells of a webhook endpoint paused by failures once, not of the failures after it', async () => {
    const receiver = await startReceiver((r) =>
      JSON.parse(r.body).event_type === 'webhook.endpoint_verification'
        ? answerChallenges(r, 0)
        : { status: 502, body: 'bad gateway' },
    );
    try {
      const member = await newMember(app.deps);
      const email = await emailOf(member.member_id);
      const created = await api('POST', '/v1/webhook-endpoints', {
        key: member.key,
        json: { name: 'Flaky', url: receiver.url, event_types: ['mail.*'] },
      });
      const endpointId = created.body.endpoint.id;
      expect((await api('POST', `/v1/webhook-endpoints/${endpointId}/verify`, { key: member.key })).body.verified).toBe(
        true,
      );
      // Three events at once: their failures run together, and only the one that pauses tells.
      await Promise.all(
        [1, 2, 3].map((n) =>
          publishEvent(app.deps, {
            eventKey: `test:notify:${endpointId}:${n}`,
            memberId: member.member_id,
            agentId: null,
            eventType: 'mail.submitted',
            testMode: false,
            objectType: 'outbound_mail',
            objectId: `obj-${n}`,
            payload: { event_type: 'mail.submitted' },
          }),
        ),
      );
      await waitFor(
        async () =>
          (await api('GET', `/v1/webhook-endpoints/${endpointId}`, { key: member.key })).body.endpoint.status ===
          'paused',
        'the endpoint to pause',
      );
      const [mail] = await waitForMail(email);
      expect(mail.Subject).toBe(`Webhook endpoint paused: ${receiver.url}`);
      const text = (await message(mail.ID)).Text;
      expect(text).toContain('Last error:');
      expect(linkIn(text, `${app.siteUrl}/console/`)).toBe(`${app.siteUrl}/console/webhooks/${endpointId}`);
      await sleep(3000);
      expect(await messagesTo(email)).toHaveLength(1);
      const [{ n }] = await app.deps.db.query(
        `SELECT count(*)::int AS n FROM notifications WHERE member_id = $1 AND kind = 'endpoint_paused'`,
        [member.member_id],
      );
      expect(n).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  describe('sign-up verification', () => {
    const signUp = async (leadId?: string) => {
      const email = uniqueEmail('signup');
      const res = await api('POST', '/v1/signup', {
        json: {
          email,
          password: 'correct horse battery',
          full_name: 'Ada Lovelace',
          ...(leadId ? { lead_id: leadId } : {}),
        },
      });
      expect(res.status).toBe(201);
      return { email, body: res.body };
    };

    it('emails a link that verifies the address once and moves the lead to email_verified', async () => {
      const lead = await api('POST', '/v1/waitlist', { json: { email: uniqueEmail('lead') } });
      const leadId: string = lead.body.lead_id;
      const { email, body } = await signUp(leadId);
      expect(body.human_action_required.map((a: { step: string }) => a.step)).toContain('verify_email');
      const before = await api('GET', `/v1/leads/${leadId}`);
      expect(before.body).toMatchObject({ stage: 'account_created', next_step: { action: 'verify_email' } });
      expect(before.body.human_action_required.map((a: { step: string }) => a.step)).toContain('verify_email');

      const [mail] = await waitForMail(email);
      expect(mail.Subject).toBe('Confirm your email address for Postal Mail');
      const full = await message(mail.ID);
      expect(full.ListUnsubscribe.Header).toBe('');
      const link = linkIn(full.Text, `${app.siteUrl}/account/verify-email?token=`);

      // Opening it shows a button and changes nothing (a mail scanner may fetch it).
      const page = await fetch(link);
      expect(await page.text()).toContain('Verify my email address');
      expect((await api('GET', `/v1/leads/${leadId}`)).body.stage).toBe('account_created');

      const token = new URL(link).searchParams.get('token')!;
      const post = () =>
        fetch(`${app.siteUrl}/account/verify-email`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }),
        });
      const verified = await post();
      expect(verified.status).toBe(200);
      expect(await verified.text()).toContain('Email address verified');
      const after = await api('GET', `/v1/leads/${leadId}`);
      expect(after.body).toMatchObject({ stage: 'email_verified', next_step: { action: 'complete_kyc' } });
      expect(after.body.human_action_required.map((a: { step: string }) => a.step)).not.toContain('verify_email');
      const [m] = await app.deps.db.query(`SELECT email_verified, email_verified_at FROM members WHERE email = $1`, [
        email,
      ]);
      expect(m).toMatchObject({ email_verified: true, email_verified_at: expect.any(Date) });

      // Once only.
      const again = await post();
      expect(again.status).toBe(400);
      expect(await again.text()).toContain('used already');
    });

    it('refuses an expired link and leaves the address unverified', async () => {
      const { email } = await signUp();
      const [mail] = await waitForMail(email);
      const link = linkIn((await message(mail.ID)).Text, `${app.siteUrl}/account/verify-email?token=`);
      await app.deps.db.query(
        `UPDATE email_links SET expires_at = now() - interval '1 second'
          WHERE member_id = (SELECT id FROM members WHERE email = $1)`,
        [email],
      );
      const res = await fetch(`${app.siteUrl}/account/verify-email`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: new URL(link).searchParams.get('token')! }),
      });
      expect(res.status).toBe(400);
      const [m] = await app.deps.db.query(`SELECT email_verified FROM members WHERE email = $1`, [email]);
      expect(m.email_verified).toBe(false);
    });
  });
});
