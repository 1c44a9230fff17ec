// The owner console in headless Chromium against the real stack (Postgres, Temporal worker,
// object store): billing_url from a 402 leads a signed-in owner to the billing page; the
// approvals queue is cleared in the browser (a 402 piece approved after credits are added,
// one debit, the workflow moves; a rejection charges nothing); a key is issued and revoked;
// sign-in refuses other kinds of keys and a sign-in link works once; every page and form
// of the console that takes an id (read from its router) answers 404 to another member's
// session for the owner's real objects and 200 to the owner's; a failed webhook delivery
// is replayed from its endpoint's page; a webhook endpoint is created (validation errors on
// the form, the secret once), verified, tested, edited (a new URL pauses it until the new
// URL answers the challenge), its secret rotated, and deleted; a page image opens at full
// width from Approvals; agent text stored with hidden characters shows them as marks; and a
// form over the size limit is a 413 page. Screenshots go to .data/screenshots.
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { launchBrowser, offMachineRequests, TestBrowser } from '../helpers/browser';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { createFacility } from '../../services/accounts/accounts';
import { topUp } from '../../services/billing/credits';
import { startCheckout } from '../../services/billing/payments';
import { startCardSetup } from '../../services/billing/auto-reload';
import { createSignInLink, findConsoleSession, signInWithMemberKey } from '../../services/accounts/console-sessions';
import { assignMailbox } from '../../services/physical-inbound/facility-intake';
import { enablePackages } from '../../services/physical-inbound/package-custody';
import { consoleRoutes } from '../../api/console';
import { letterForm, letterPdf, waitFor } from '../integration/mail-helpers';
import { pdf, recipientsCsv, batchForm } from '../integration/batch-helpers';
import { answerChallenges, startReceiver } from '../integration/webhook-helpers';
import { ALL_INBOUND_SCOPES, commitPiece, fixtureImage, receivePiece } from '../helpers/physical-inbound';

jest.setTimeout(300_000);

const PHONE = { width: 390, height: 844 };

describe('owner console', () => {
  let app: TestApp;
  let browser: TestBrowser;
  let api: ReturnType<typeof client>;
  let owner: { member_id: string; key: string };
  let agentId: string;
  let agentKey: string;
  const pieces: string[] = [];

  async function pendingPiece(name: string, document?: Buffer, filename = 'letter.pdf'): Promise<string> {
    const res = await api('POST', '/v1/mail', {
      key: agentKey,
      headers: { 'x-service-md-version': '1' },
      form: letterForm(document ?? (await letterPdf(2)), { recipient_name: name, requires_approval: 'true' }, filename),
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('pending_approval');
    return res.body.id;
  }

  /**
   * Waits until `expression` is true in the page. (waitForFunction polls with eval inside the page,
   * which the console's Content-Security-Policy forbids; each evaluate here comes from DevTools.)
   */
  async function pageCondition(page: Page, expression: string, timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!(await page.evaluate(expression))) {
      if (Date.now() > end) throw new Error(`not true within ${timeoutMs} ms: ${expression}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.fill('#key', key);
    await Promise.all([page.waitForNavigation(), page.press('#key', 'Enter')]);
  }

  const debits = async (mailId: string) =>
    (await app.deps.db.query(`SELECT amount_cents FROM credits_ledger WHERE reference_id = $1 AND kind = 'debit'`, [
      mailId,
    ])) as { amount_cents: number }[];
  const status = async (mailId: string) =>
    (await app.deps.db.query(`SELECT status FROM outbound_mail WHERE id = $1`, [mailId]))[0].status as string;

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    browser = await launchBrowser();
    owner = await newMember(app.deps, { creditsCents: 0 });
    agentId = (await newAgent(app.baseUrl, owner.key, { display_name: 'Billing assistant' })).id;
    agentKey = (await newCredential(app.baseUrl, owner.key, agentId, { environment: 'live' })).key;
    pieces.push(await pendingPiece('Ada Lovelace'));
    pieces.push(
      await pendingPiece('Charles Babbage', Buffer.from('Dear Charles,\n\nThe engine is ready.\n\nAda\n'), 'note.txt'),
    );
  });
  // Each test starts signed out: the default browser context keeps cookies between pages.
  beforeEach(async () => {
    await browser.browser.contexts()[0].clearCookies();
  });
  afterAll(async () => {
    await receiver?.close();
    await browser?.close();
    await app?.close();
  });

  it('follows billing_url from a 402 through sign-in to the billing page', async () => {
    // A live piece submitted without approval needs credits the member does not have: 402 with billing_url.
    const refused = await api('POST', '/v1/mail', {
      key: agentKey,
      headers: { 'x-service-md-version': '1' },
      form: letterForm(await letterPdf(1)),
    });
    expect(refused.status).toBe(402);
    expect(refused.body.billing_url).toBe(`${app.siteUrl}/billing#credits`);

    const { page, requests, errors } = await browser.open(refused.body.billing_url);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await signIn(page, owner.key);
    const landed = new URL(page.url());
    expect(landed.pathname).toBe('/console/billing');
    expect(landed.hash).toBe('#credits');
    await expect(page.textContent('#credits')).resolves.toContain('$0.00');
    await expect(page.textContent('#credits')).resolves.toContain('Buy credits');
    await expect(page.textContent('#credits')).resolves.not.toContain('credits:add');
    const cookie = (await page.context().cookies()).find((c) => c.name === 'pm_console')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    const [session] = await app.deps.db.query(
      `SELECT token_hash, expires_at FROM console_sessions WHERE member_id = $1`,
      [owner.member_id],
    );
    expect(session.token_hash).not.toBe(cookie.value); // only the hash is stored
    expect(offMachineRequests(requests)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('approves a piece after credits are added (one debit, the workflow moves) and rejects another', async () => {
    const { page, errors } = await browser.open(`${app.siteUrl}/console/approvals`);
    await signIn(page, owner.key);
    expect(new URL(page.url()).pathname).toBe('/console/approvals');
    // Both pieces are shown with their page images, recipient, cost and the agent that asked.
    const cards = page.locator('article.approval');
    await expect(cards.count()).resolves.toBe(2);
    const ada = page.locator('article.approval', { hasText: 'Ada Lovelace' });
    await expect(ada.textContent()).resolves.toContain('Billing assistant');
    await expect(ada.locator('table.cost').textContent()).resolves.toContain('Total');
    const images = ada.locator('.pages img');
    await expect(images.count()).resolves.toBe(2);
    await pageCondition(
      page,
      "[...document.querySelectorAll('.pages img')].every((i) => i.complete && i.naturalWidth > 100)",
    );
    const textPage = page.locator('article.approval', { hasText: 'Charles Babbage' }).locator('.pages img');
    await expect(textPage.count()).resolves.toBe(1); // the TXT letter is one counted page, rendered too
    await browser.screenshot(page, 'console-approvals', { fullPage: true });

    // No credits: the approval is refused in words and the piece stays pending, uncharged.
    await Promise.all([page.waitForNavigation(), ada.getByRole('button', { name: /Approve/ }).click()]);
    await expect(page.textContent('h1')).resolves.toBe('Not enough credits');
    await expect(page.textContent('main')).resolves.toMatch(
      /Insufficient credits: \$\d+\.\d\d required, \$0\.00 available/,
    );
    await browser.screenshot(page, 'console-402');
    expect(await status(pieces[0])).toBe('pending_approval');
    expect(await debits(pieces[0])).toEqual([]);

    await topUp(app.deps.db, {
      memberId: owner.member_id,
      amountCents: 10_000,
      entryKey: `topup:test:${owner.member_id}`,
      description: 'Test top-up',
    });
    await Promise.all([page.waitForNavigation(), page.click('text=Go to billing to add credits')]);
    await expect(page.textContent('#credits')).resolves.toContain('$100.00');
    await expect(page.textContent('main')).resolves.toContain('Test top-up');

    await page.goto(`${app.siteUrl}/console/approvals`);
    await Promise.all([
      page.waitForNavigation(),
      page
        .locator('article.approval', { hasText: 'Ada Lovelace' })
        .getByRole('button', { name: /Approve/ })
        .click(),
    ]);
    await expect(page.textContent('[role=status]')).resolves.toContain('Approved');
    const charged = await debits(pieces[0]);
    expect(charged).toHaveLength(1);
    expect(
      await waitFor(
        async () => (await status(pieces[0])) !== 'pending_approval' && status(pieces[0]),
        'the workflow to move',
      ),
    ).toBe('submitted');

    await Promise.all([
      page.waitForNavigation(),
      page
        .locator('article.approval', { hasText: 'Charles Babbage' })
        .getByRole('button', { name: /Reject/ })
        .click(),
    ]);
    await expect(page.textContent('[role=status]')).resolves.toContain('Rejected');
    expect(await waitFor(async () => (await status(pieces[1])) === 'cancelled' && 'cancelled', 'the rejection')).toBe(
      'cancelled',
    );
    expect(await debits(pieces[1])).toEqual([]);
    await expect(page.textContent('main')).resolves.toContain('Nothing is waiting for your approval');
    // Repeating an approval (a second tab, a double click) charges nothing more.
    const again = await page.request.post(`${app.siteUrl}/console/mail/${pieces[0]}/approve`, {
      form: { _csrf: await page.inputValue('input[name=_csrf]') },
    });
    expect(again.status()).toBe(409);
    expect(await debits(pieces[0])).toHaveLength(1);

    await page.goto(`${app.siteUrl}/console`);
    await expect(page.textContent('main')).resolves.toContain('Nothing is waiting for you');
    await browser.screenshot(page, 'console-overview', { fullPage: true });
    await page.goto(`${app.siteUrl}/console/mail/${pieces[0]}`);
    await expect(page.textContent('main')).resolves.toContain('mail.submitted');
    await browser.screenshot(page, 'console-mail-detail', { fullPage: true });
    await page.goto(`${app.siteUrl}/console/mail?status=cancelled`);
    await expect(page.textContent('main')).resolves.toContain('Charles Babbage');
    await expect(page.textContent('main')).resolves.not.toContain('Ada Lovelace');
    await page.goto(`${app.siteUrl}/console/mail?created_after=yesterday`);
    await expect(page.textContent('main')).resolves.toContain('must be an ISO 8601 date-time or YYYY-MM-DD');
    await page.goto(`${app.siteUrl}/console/billing`);
    await browser.screenshot(page, 'console-billing', { fullPage: true });
    // The refusals above are pages answered with their status (402, 400), which Chromium logs.
    expect(errors.filter((e) => !/status of (402|400) /.test(e))).toEqual([]);
    await page.close();
  });

  it('issues an agent key shown once and revokes it', async () => {
    const { page, errors } = await browser.open(`${app.siteUrl}/console/agents/${agentId}`);
    await signIn(page, owner.key);
    await page.click('summary:has-text("Issue a credential")');
    await page.check('input[value="billing.read"]');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Issue credential")')]);
    const key = await page.inputValue('#new-key');
    expect(key).toMatch(/^sk_agent_/);
    expect((await api('GET', '/v1/credits', { key })).status).toBe(200);
    await Promise.all([page.waitForNavigation(), page.click('text=Done')]);
    await expect(page.textContent('main')).resolves.not.toContain(key);
    await browser.screenshot(page, 'console-agent', { fullPage: true });
    await Promise.all([
      page.waitForNavigation(),
      page.getByRole('button', { name: `Revoke ${key.slice(0, 18)}` }).click(),
    ]);
    await expect(page.textContent('[role=status]')).resolves.toContain('revoked');
    expect((await api('GET', '/v1/credits', { key })).status).toBe(401);

    // A member key: created and shown once, then revoked.
    await page.goto(`${app.siteUrl}/console/keys`);
    await page.fill('#key-name', 'ops laptop');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create key")')]);
    const memberKey = await page.inputValue('#new-key');
    expect(memberKey).toMatch(/^sk_live_/);
    await page.goto(`${app.siteUrl}/console/keys`);
    await browser.screenshot(page, 'console-keys', { fullPage: true });
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Revoke ops laptop' }).click()]);
    expect((await api('GET', '/v1/credits', { key: memberKey })).status).toBe(401);

    // A session ends with the key it was started with.
    const laptop = (await api('POST', '/v1/api-keys', { key: owner.key, json: { name: 'borrowed laptop' } })).body;
    const borrowed = await browser.browser.newContext();
    const elsewhere = await borrowed.newPage();
    await elsewhere.goto(`${app.siteUrl}/console/keys`);
    await signIn(elsewhere, laptop.key);
    expect(new URL(elsewhere.url()).pathname).toBe('/console/keys');
    expect((await api('DELETE', `/v1/api-keys/${laptop.id}`, { key: owner.key })).status).toBe(200);
    await elsewhere.goto(`${app.siteUrl}/console/keys`);
    expect(new URL(elsewhere.url()).pathname).toBe('/console/sign-in');
    await borrowed.close();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refuses agent, test and facility keys in words, and a sign-in link works once', async () => {
    const { page } = await browser.open(`${app.siteUrl}/console/sign-in`);
    const testKey = (
      await api('POST', '/v1/api-keys', { key: owner.key, json: { name: 'sandbox', environment: 'test' } })
    ).body.key;
    const facilityKey = (await createFacility(app.deps, 'Console test facility')).key;
    for (const [key, words] of [
      [agentKey, 'agent key'],
      [testKey, 'test key'],
      [facilityKey, 'facility key'],
      ['sk_live_nope', 'does not look like a key'],
      [`sk_live_${'x'.repeat(40)}`, 'No key matches'],
    ]) {
      await signIn(page, key);
      expect(new URL(page.url()).pathname).toBe('/console/sign-in');
      await expect(page.textContent('[role=alert]')).resolves.toContain(words);
    }
    // A form without the CSRF token is refused before the key is even looked at.
    const forged = await fetch(`${app.siteUrl}/console/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `key=${owner.key}`,
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('set-cookie') ?? '').not.toContain('pm_console=');

    const link = await createSignInLink(app.deps, owner.member_id);
    const [stored] = await app.deps.db.query(`SELECT token_hash FROM console_sign_in_links WHERE member_id = $1`, [
      owner.member_id,
    ]);
    expect(link.url).not.toContain(stored.token_hash);
    const other = await browser.browser.newContext();
    const fresh = await other.newPage();
    await fresh.goto(link.url);
    await Promise.all([fresh.waitForNavigation(), fresh.click('button:has-text("Sign in")')]);
    expect(new URL(fresh.url()).pathname).toBe('/console');
    await fresh.goto(link.url);
    await Promise.all([fresh.waitForNavigation(), fresh.click('button:has-text("Sign in")')]);
    await expect(fresh.textContent('[role=alert]')).resolves.toContain('not valid');
    await other.close();
    await page.close();
  });

  it('renders every page of the console for its owner, also at phone width', async () => {
    const conversation = (
      await api('POST', '/v1/support/messages', {
        key: owner.key,
        json: { category: 'support', body: 'Is the console working?' },
      })
    ).body.message.conversation_id;
    const { page, errors } = await browser.open(`${app.siteUrl}/console/sign-in`, PHONE);
    await signIn(page, owner.key);
    const pages = [
      '/console',
      '/console/approvals',
      '/console/mail',
      '/console/batches',
      '/console/billing',
      '/console/agents',
      `/console/agents/${agentId}`,
      '/console/keys',
      '/console/inbound',
      '/console/webhooks',
      '/console/support',
      `/console/support/${conversation}`,
    ];
    for (const path of pages) {
      const res = await page.goto(`${app.siteUrl}${path}`);
      expect({ path, status: res!.status() }).toEqual({ path, status: 200 });
      // Nothing is wider than the phone's screen.
      expect({
        path,
        overflow: await page.evaluate('document.documentElement.scrollWidth > window.innerWidth'),
      }).toEqual({ path, overflow: false });
    }
    await browser.screenshot(page, 'console-support-thread-phone', { fullPage: true });
    // Keyboard alone: the skip link is the first stop, then the navigation.
    await page.goto(`${app.siteUrl}/console/approvals`);
    await page.keyboard.press('Tab');
    await expect(page.evaluate('document.activeElement.textContent')).resolves.toBe('Skip to content');
    const res = await page.goto(`${app.siteUrl}/console/no-such-page`);
    expect(res!.status()).toBe(404);
    await expect(page.textContent('h1')).resolves.toBe('Not found');
    expect(errors.filter((e) => !/status of 404 /.test(e))).toEqual([]);
    await page.close();
  });

  /** Objects of the owner, one at least for every console page and form that takes an id. */
  interface OwnerObjects {
    purchaseId: string;
    cardSetupId: string;
    pending: string;
    conversation: string;
    credentialId: string;
    ownerKeyId: string;
    sessionId: string;
    proposalId: string;
    batchId: string;
    endpointId: string;
    deliveryId: string;
    scannedItem: string;
    scannedRef: string;
    handlingId: string;
    recipientId: string;
  }
  let ownerObjects: Promise<OwnerObjects> | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  /** While true, the owner's webhook receiver answers webhook.test pings with 502. */
  let pingsFail = false;

  async function makeOwnerObjects(): Promise<OwnerObjects> {
    await topUp(app.deps.db, {
      memberId: owner.member_id,
      amountCents: 5_000,
      entryKey: `topup:console-objects:${owner.member_id}`,
      description: 'Test top-up',
    });
    const pending = await pendingPiece('Grace Hopper');
    const conversation = (
      await api('POST', '/v1/support/messages', {
        key: owner.key,
        json: { category: 'billing', body: 'Where is my refund?' },
      })
    ).body.message.conversation_id;
    const credentialId = (await newCredential(app.baseUrl, owner.key, agentId, { environment: 'live' })).id;
    const ownerKeyId = (await api('GET', '/v1/api-keys', { key: owner.key })).body.api_keys.find(
      (k: { status: string; environment: string }) => k.status === 'active' && k.environment === 'prod',
    ).id;
    const sessionId = (await findConsoleSession(app.deps, (await signInWithMemberKey(app.deps, owner.key)).token))!.id;

    // An agent key of the owner's agent that reads its inbox and proposes (instruction edits, handling).
    const inboxKey = (
      await newCredential(app.baseUrl, owner.key, agentId, { scopes: [...ALL_INBOUND_SCOPES, 'agent.write'] })
    ).key;
    const proposed = await api('POST', `/v1/agents/${agentId}/instructions/proposals`, {
      key: inboxKey,
      headers: { 'x-service-md-version': '1' },
      json: { suggested_content: 'Always send certified.', reason: 'a notice bounced' },
    });
    expect(proposed.status).toBe(201);

    const batch = await api('POST', '/v1/batch-mail', {
      key: owner.key,
      form: batchForm(await pdf(1), recipientsCsv(2), { job_name: 'Console spring mailer' }),
    });
    expect(batch.status).toBe(201);

    // Physical inbound: a mailbox at a facility; one letter opened and scanned, one with a proposal waiting for the owner.
    const facility = await createFacility(app.deps, 'Console inbound facility');
    const mailbox = await assignMailbox(app.deps, {
      memberId: owner.member_id,
      agentId,
      facilityId: facility.facility_id,
    });
    await enablePackages(app.deps, owner.member_id);
    const intake = { facilityKey: facility.key, mailboxId: mailbox.mailbox_id };
    const proposeScan = async (item: string) => {
      const version = (await api('GET', `/v1/agent-inbox/${item}/handling`, { key: inboxKey })).body.version;
      const res = await api('POST', `/v1/agent-inbox/${item}/handling`, {
        key: inboxKey,
        headers: { 'x-service-md-version': '1', 'idempotency-key': `console-${item}` },
        json: { action_type: 'open_and_scan', expected_version: version },
      });
      expect(res.status).toBe(201);
      return res.body.operation.id as string;
    };
    const scanned = (await commitPiece(app, intake)).item;
    const scan = await proposeScan(scanned.id);
    expect(
      (await api('POST', `/v1/handling/${scan}/approve`, { key: owner.key, json: { expected_version: 1 } })).status,
    ).toBe(200);
    const accepted = await api('POST', `/v1/facility/internal-inbound/handling/${scan}/decision`, {
      key: facility.key,
      json: { decision: 'accept', expected_version: 2 },
    });
    const form = new FormData();
    form.append('page_1', new Blob([fixtureImage('sample-envelope.png')], { type: 'image/png' }), 'p1.png');
    form.append('page_2', new Blob([fixtureImage('sample-letter.png')], { type: 'image/png' }), 'p2.png');
    form.append('source_kinds', 'envelope,letter');
    expect(
      (
        await api('POST', `/v1/facility/scan-requests/${accepted.body.operation.scan_request_id}/fulfil`, {
          key: facility.key,
          form,
        })
      ).status,
    ).toBe(201);
    await waitFor(
      async () => (await api('GET', `/v1/handling/${scan}`, { key: owner.key })).body.operation.status === 'completed',
      'the scan to complete',
      60_000,
    );
    const handlingId = await proposeScan(await receivePiece(app, intake));

    // A verified webhook endpoint with one failed delivery (a ping its receiver refused).
    receiver = await startReceiver((r) => {
      const body = JSON.parse(r.body || '{}');
      if (body.event_type === 'webhook.endpoint_verification')
        return { status: 200, body: JSON.stringify({ challenge: body.data.challenge }) };
      return pingsFail && body.event_type === 'webhook.test' ? { status: 502, body: 'bad gateway' } : { status: 204 };
    });
    // Subscribed to an event nothing here publishes, so its delivery log holds only what the test sends.
    const endpoint = (
      await api('POST', '/v1/webhook-endpoints', {
        key: owner.key,
        json: { name: 'Console hook', url: receiver.url, event_types: ['batch.completed'] },
      })
    ).body.endpoint;
    expect((await api('POST', `/v1/webhook-endpoints/${endpoint.id}/verify`, { key: owner.key })).body).toMatchObject({
      verified: true,
    });
    pingsFail = true;
    const ping = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key: owner.key });
    pingsFail = false;
    expect(ping.body).toMatchObject({
      verification: false,
      delivered: false,
      status_code: 502,
      delivery: { status: 'failed' },
    });

    const purchase = await startCheckout(app.deps, owner.member_id, 2500);
    const cardSetupId = (await startCardSetup(app.deps, owner.member_id)).redirectUrl.split('/').pop()!;
    const recipient = await api('POST', '/v1/notifications/recipients', {
      key: owner.key,
      json: { email: 'colleague-of-the-owner@example.test' },
    });
    return {
      purchaseId: purchase.purchaseId,
      cardSetupId,
      recipientId: recipient.body.recipient.id as string,
      pending,
      conversation,
      credentialId,
      ownerKeyId,
      sessionId,
      proposalId: proposed.body.proposal.id,
      batchId: batch.body.batch.id,
      endpointId: endpoint.id,
      deliveryId: ping.body.delivery.id,
      scannedItem: scanned.id,
      scannedRef: scanned.reference_code,
      handlingId,
    };
  }
  const theOwnerObjects = () => (ownerObjects ??= makeOwnerObjects());

  /**
   * Every console route that takes an id, read from the console's own router (so a new page
   * or form without a case here fails the test), with the URL of the owner's object and, for
   * pages, what the owner sees on it.
   */
  function idRoutes(o: OwnerObjects): Array<{ route: string; url: string; shows?: string }> {
    const cases: Record<string, { url: string; shows?: string }> = {
      'GET /console/mail/:id': { url: `/console/mail/${o.pending}`, shows: 'Grace Hopper' },
      'GET /console/mail/:id/pages/:page': { url: `/console/mail/${o.pending}/pages/1.png` },
      'GET /console/mail/:id/pages/:page/full': {
        url: `/console/mail/${o.pending}/pages/2/full`,
        shows: 'Page 2 of 2',
      },
      'POST /console/mail/:id/approve': { url: `/console/mail/${o.pending}/approve` },
      'POST /console/mail/:id/reject': { url: `/console/mail/${o.pending}/reject` },
      'POST /console/mail/:id/cancel': { url: `/console/mail/${o.pending}/cancel` },
      'GET /console/batches/:id': { url: `/console/batches/${o.batchId}`, shows: 'Console spring mailer' },
      'GET /console/agents/:id': { url: `/console/agents/${agentId}`, shows: 'Always send certified.' },
      'POST /console/agents/:id/credentials': { url: `/console/agents/${agentId}/credentials` },
      'POST /console/agents/:id/credentials/:credentialId/revoke': {
        url: `/console/agents/${agentId}/credentials/${o.credentialId}/revoke`,
      },
      // The agent is another member's, so the grant's id does not matter: the agent is looked up first.
      'POST /console/agents/:id/grants/:grantId/revoke': {
        url: `/console/agents/${agentId}/grants/00000000-0000-4000-8000-000000000000/revoke`,
      },
      'POST /console/agents/:id/instructions': { url: `/console/agents/${agentId}/instructions` },
      'POST /console/agents/:id/proposals/:proposalId': { url: `/console/agents/${agentId}/proposals/${o.proposalId}` },
      'POST /console/keys/:id/rotate': { url: `/console/keys/${o.ownerKeyId}/rotate` },
      'POST /console/keys/:id/revoke': { url: `/console/keys/${o.ownerKeyId}/revoke` },
      'POST /console/sessions/:id/revoke': { url: `/console/sessions/${o.sessionId}/revoke` },
      'POST /console/handling/:id/approve': { url: `/console/handling/${o.handlingId}/approve` },
      'POST /console/handling/:id/reject': { url: `/console/handling/${o.handlingId}/reject` },
      'GET /console/inbound/:id': { url: `/console/inbound/${o.scannedItem}`, shows: 'Page 2' },
      'GET /console/webhooks/:id': { url: `/console/webhooks/${o.endpointId}`, shows: 'Console hook' },
      'POST /console/webhooks/:id': { url: `/console/webhooks/${o.endpointId}` },
      'POST /console/webhooks/:id/verify': { url: `/console/webhooks/${o.endpointId}/verify` },
      'POST /console/webhooks/:id/test': { url: `/console/webhooks/${o.endpointId}/test` },
      'POST /console/webhooks/:id/rotate-secret': { url: `/console/webhooks/${o.endpointId}/rotate-secret` },
      'POST /console/webhooks/:id/delete': { url: `/console/webhooks/${o.endpointId}/delete` },
      'POST /console/webhook-deliveries/:id/replay': { url: `/console/webhook-deliveries/${o.deliveryId}/replay` },
      'GET /console/support/:id': { url: `/console/support/${o.conversation}`, shows: 'Where is my refund?' },
      'POST /console/support/:id': { url: `/console/support/${o.conversation}` },
      'GET /console/billing/checkout/:id': { url: `/console/billing/checkout/${o.purchaseId}`, shows: 'Pay $25.00' },
      'POST /console/billing/checkout/:id': { url: `/console/billing/checkout/${o.purchaseId}` },
      'GET /console/billing/card-setup/:id': {
        url: `/console/billing/card-setup/${o.cardSetupId}`,
        shows: 'Save a card for automatic reload',
      },
      'POST /console/billing/card-setup/:id': { url: `/console/billing/card-setup/${o.cardSetupId}` },
      'POST /console/notifications/recipients/:id/kinds': {
        url: `/console/notifications/recipients/${o.recipientId}/kinds`,
      },
      'POST /console/notifications/recipients/:id/remove': {
        url: `/console/notifications/recipients/${o.recipientId}/remove`,
      },
    };
    const routes = consoleRoutes(app.deps)
      .stack.filter((layer) => typeof layer.path === 'string' && layer.path.includes('/:'))
      .flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${layer.path}`));
    expect(routes.filter((r) => !(r in cases))).toEqual([]); // a route with an id and no case below
    expect(Object.keys(cases).filter((r) => !routes.includes(r))).toEqual([]); // a case for a route that is gone
    return routes.map((route) => ({ route, ...cases[route] }));
  }

  /** The console's pages without an id (lists), read from its router; sign-in, assets and the OAuth consent page (it needs an authorization request) left out. */
  function listPages(): string[] {
    return consoleRoutes(app.deps)
      .stack.filter(
        (layer) =>
          typeof layer.path === 'string' &&
          layer.methods.includes('GET') &&
          layer.path.startsWith('/console') &&
          !/[:{]|sign-in|assets|oauth/.test(layer.path),
      )
      .map((layer) => layer.path as string);
  }

  /** What of the owner's objects another member's forms could change, read as the owner. */
  async function ownerState(o: OwnerObjects) {
    const get = async (path: string) => (await api('GET', path, { key: owner.key })).body;
    const [session] = await app.deps.db.query(`SELECT revoked_at FROM console_sessions WHERE id = $1`, [o.sessionId]);
    const instructions = await get(`/v1/agents/${agentId}/instructions`);
    const delivery = (await get(`/v1/webhook-deliveries/${o.deliveryId}`)).delivery;
    const endpoint = (await get(`/v1/webhook-endpoints/${o.endpointId}`)).endpoint;
    const operation = (await get(`/v1/handling/${o.handlingId}`)).operation;
    return {
      mail: (await get(`/v1/mail/${o.pending}`)).status,
      credentials: (await get(`/v1/agents/${agentId}/credentials`)).credentials.map(
        (c: { id: string; status: string }) => [c.id, c.status],
      ),
      instructions: [instructions.version, instructions.text],
      proposals: (await get(`/v1/agents/${agentId}/instructions/proposals`)).proposals.map(
        (p: { id: string; status: string }) => [p.id, p.status],
      ),
      keys: (await get('/v1/api-keys')).api_keys.map((k: { id: string; status: string }) => [k.id, k.status]),
      session: session.revoked_at,
      thread: (await get(`/v1/support/conversations/${o.conversation}/messages`)).messages.length,
      handling: [operation.status, operation.version],
      delivery: [delivery.status, delivery.replays, delivery.attempts_count],
      endpoint: [endpoint.name, endpoint.url, endpoint.status, endpoint.event_types, endpoint.secret_prefix],
      purchase: (await app.deps.db.query(`SELECT status FROM credit_purchases WHERE id = $1`, [o.purchaseId]))[0]
        .status,
      cardSetup: (await app.deps.db.query(`SELECT status FROM stripe_card_setups WHERE id = $1`, [o.cardSetupId]))[0]
        .status,
      recipients: (await get('/v1/notifications/settings')).recipients.map(
        (r: { id: string; email: string; kinds: Record<string, boolean> }) => [r.id, r.email, r.kinds],
      ),
    };
  }

  async function signedInContext(key: string) {
    const context = await browser.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.siteUrl}/console/sign-in`);
    await signIn(page, key);
    expect(new URL(page.url()).pathname).toBe('/console');
    return { context, page };
  }

  it("shows one member none of another member's pages: every page and form with an id answers 404", async () => {
    const o = await theOwnerObjects();
    const routes = idRoutes(o);
    const before = await ownerState(o);
    expect(before).toMatchObject({
      mail: 'pending_approval',
      handling: ['awaiting_member_approval', 1],
      delivery: ['failed', 0, 1],
      session: null,
      thread: 1,
    });
    expect(before.proposals).toContainEqual([o.proposalId, 'pending']);
    expect(before.credentials).toContainEqual([o.credentialId, 'active']);
    expect(before.keys).toContainEqual([o.ownerKeyId, 'active']);

    // The other member has every feature the owner uses (packages, a mailbox), so a 404 is the owner's object, not a missing feature.
    const stranger = await newMember(app.deps, { creditsCents: 100_000 });
    await enablePackages(app.deps, stranger.member_id);
    await assignMailbox(app.deps, {
      memberId: stranger.member_id,
      agentId: (await newAgent(app.baseUrl, stranger.key)).id,
    });
    const { context, page } = await signedInContext(stranger.key);
    await page.goto(`${app.siteUrl}/console/mail`);
    await expect(page.textContent('main')).resolves.not.toContain('Ada Lovelace');
    await page.setViewportSize(PHONE);
    await page.goto(`${app.siteUrl}/console/billing`);
    await browser.screenshot(page, 'console-billing-phone', { fullPage: true });
    // The stranger's own token: a refusal below is the ownership check, not the CSRF check (that answers 403).
    const csrf = await page.inputValue('input[name=_csrf]');

    const ownerMarks = [
      agentId,
      ...Object.values(o),
      'Grace Hopper',
      'Console spring mailer',
      'Console hook',
      'Where is my refund?',
    ];
    for (const { route, url, shows } of routes) {
      const res = route.startsWith('GET ')
        ? await page.request.get(`${app.siteUrl}${url}`)
        : await page.request.post(`${app.siteUrl}${url}`, {
            form: {
              _csrf: csrf,
              scopes: 'mail.send',
              text: 'taken over',
              expected_version: '1',
              decision: 'accept',
              body: 'hello',
              reason: 'no',
              name: 'taken over',
              url: 'https://hooks.example.com/taken',
              event_types: '*',
            },
            maxRedirects: 0,
          });
      expect({ route, status: res.status() }).toEqual({ route, status: 404 });
      const body = await res.text();
      expect({ route, leaked: ownerMarks.filter((mark) => body.includes(mark)) }).toEqual({ route, leaked: [] });
      if (shows) expect(body).toContain('Not found');
    }
    // The stranger's lists show none of the owner's objects.
    for (const path of listPages()) {
      const res = await page.request.get(`${app.siteUrl}${path}`);
      expect({ path, status: res.status() }).toEqual({ path, status: 200 });
      const body = await res.text();
      expect({ path, leaked: ownerMarks.filter((mark) => body.includes(mark)) }).toEqual({ path, leaked: [] });
    }
    // Nothing of the owner's changed.
    expect(await ownerState(o)).toEqual(before);
    expect(receiver!.received.filter((r) => JSON.parse(r.body).event_type === 'webhook.test')).toHaveLength(1);
    expect(
      receiver!.received.filter((r) => JSON.parse(r.body).event_type === 'webhook.endpoint_verification'),
    ).toHaveLength(1);

    // Signed out (or without a session), a page sends the browser to sign in.
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Sign out")')]);
    await page.goto(`${app.siteUrl}/console/mail`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await browser.screenshot(page, 'console-sign-in-phone');
    await context.close();

    // The same pages answer the owner with the owner's objects, and the owner's lists show them.
    const mine = await signedInContext(owner.key);
    for (const { route, url, shows } of routes.filter((r) => r.route.startsWith('GET '))) {
      const res = await mine.page.request.get(`${app.siteUrl}${url}`);
      expect({ route, status: res.status() }).toEqual({ route, status: 200 });
      if (shows) expect({ route, shows: (await res.text()).includes(shows) }).toEqual({ route, shows: true });
      else expect(res.headers()['content-type']).toBe('image/png');
    }
    const listed = new Set<string>();
    for (const path of listPages()) {
      const body = await (await mine.page.request.get(`${app.siteUrl}${path}`)).text();
      for (const mark of ownerMarks) if (body.includes(mark)) listed.add(mark);
    }
    expect(
      [agentId, o.pending, o.batchId, o.endpointId, o.conversation, o.handlingId, o.scannedRef].filter(
        (mark) => !listed.has(mark),
      ),
    ).toEqual([]);
    await mine.context.close();
  });

  it('replays a failed webhook delivery from the endpoint page: that one delivery is sent again', async () => {
    const o = await theOwnerObjects();
    const deliveries = async () =>
      (await api('GET', `/v1/webhook-endpoints/${o.endpointId}/deliveries`, { key: owner.key })).body.deliveries.map(
        (d: { id: string; status: string; replays: number }) => ({ id: d.id, status: d.status, replays: d.replays }),
      );
    const before = await deliveries();
    expect(before.filter((d: { status: string }) => d.status === 'failed')).toEqual([
      { id: o.deliveryId, status: 'failed', replays: 0 },
    ]);
    const pings = () => receiver!.received.filter((r) => JSON.parse(r.body).event_type === 'webhook.test');
    const [refused] = pings();

    const { page, errors } = await browser.open(`${app.siteUrl}/console/webhooks/${o.endpointId}`);
    await signIn(page, owner.key);
    const replay = page.getByRole('button', { name: 'Replay' });
    await expect(replay.count()).resolves.toBe(1);
    const csrf = await page.inputValue('form[action$="/replay"] input[name=_csrf]');
    await Promise.all([page.waitForNavigation(), replay.click()]);
    expect(new URL(page.url()).search).toBe('?done=replayed');
    await expect(page.textContent('[role=status]')).resolves.toContain('Replay queued');

    const sent = await waitFor(async () => {
      const now = await deliveries();
      return now.find((d: { id: string; status: string }) => d.id === o.deliveryId && d.status === 'delivered') && now;
    }, 'the replay to be delivered');
    // Exactly the failed delivery moved (a new series), everything else in the log is as it was.
    expect(sent).toEqual(
      before.map((d: { id: string }) => (d.id === o.deliveryId ? { id: d.id, status: 'delivered', replays: 1 } : d)),
    );
    expect(pings()).toHaveLength(2);
    expect(pings()[1].headers['webhook-id']).toBe(refused.headers['webhook-id']);
    await page.reload();
    await expect(page.getByRole('button', { name: 'Replay' }).count()).resolves.toBe(0);
    await expect(page.textContent('main')).resolves.toContain('(1 replays)');

    // The form sent again (a second tab, a double click) is refused and sends nothing more.
    const again = await page.request.post(`${app.siteUrl}/console/webhook-deliveries/${o.deliveryId}/replay`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(again.status()).toBe(409);
    expect(await deliveries()).toEqual(sent);
    expect(pings()).toHaveLength(2);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('creates, verifies, tests, edits (a new URL pauses it until verified), rotates and deletes a webhook endpoint', async () => {
    // First URL: answers every challenge. Second URL: refuses challenges until told otherwise.
    const first = await startReceiver(answerChallenges);
    const second = await startReceiver(() => ({ status: 200, body: '{"challenge":"not it"}' }));
    const endpointState = async (id: string) => {
      const res = await api('GET', `/v1/webhook-endpoints/${id}`, { key: owner.key });
      return res.status === 404 ? null : res.body.endpoint;
    };
    try {
      const existing = (await api('GET', '/v1/webhook-endpoints', { key: owner.key })).body.endpoints.length;
      const { page, errors } = await browser.open(`${app.siteUrl}/console/webhooks`);
      await signIn(page, owner.key);
      expect(new URL(page.url()).pathname).toBe('/console/webhooks');

      // Refusals are shown on the form, field by field in the API's terms, with what was typed kept.
      await page.fill('#add-name', 'Orders hook');
      await page.fill('#add-url', 'ftp://hooks.example.com/orders');
      await page.uncheck('#add input[value="*"]');
      const [refused] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Add endpoint")')]);
      expect(refused!.status()).toBe(400);
      await expect(page.textContent('#add-errors')).resolves.toContain('url: must be an https URL');
      await expect(page.textContent('#add-errors')).resolves.toContain(
        'event_types: subscribe to at least one event type',
      );
      await expect(page.textContent('#add-url-error')).resolves.toContain('must be an https URL');
      await expect(page.getAttribute('#add-url', 'aria-invalid')).resolves.toBe('true');
      await expect(page.getAttribute('#add-url', 'aria-describedby')).resolves.toBe('add-url-hint add-url-error');
      await expect(page.inputValue('#add-name')).resolves.toBe('Orders hook');
      await browser.screenshot(page, 'console-webhook-form-errors', { fullPage: true });
      expect((await api('GET', '/v1/webhook-endpoints', { key: owner.key })).body.endpoints).toHaveLength(existing);

      // Created: the secret is shown once, then the endpoint is verified with it.
      await page.fill('#add-url', first.url);
      await page.check('#add input[value="mail.*"]');
      await page.selectOption('#add-agent', agentId);
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Add endpoint")')]);
      const secret = await page.inputValue('#new-secret');
      expect(secret).toMatch(/^whsec_/);
      await browser.screenshot(page, 'console-webhook-secret');
      const created = (await api('GET', '/v1/webhook-endpoints', { key: owner.key })).body.endpoints.find(
        (e: { name: string }) => e.name === 'Orders hook',
      );
      expect(created).toMatchObject({
        status: 'pending',
        url: first.url,
        scope: 'agent',
        agent_id: agentId,
        event_types: ['mail.*'],
        secret_prefix: secret.slice(0, 12),
      });
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("verify now")')]);
      expect(new URL(page.url()).pathname).toBe(`/console/webhooks/${created.id}`);
      await expect(page.textContent('#outcome')).resolves.toContain('Verified');
      expect(await endpointState(created.id)).toMatchObject({ status: 'active' });
      // The challenge was signed with the secret the page showed.
      const challenge = first.received.find((r) => JSON.parse(r.body).event_type === 'webhook.endpoint_verification')!;
      expect(new Webhook(secret).verify(challenge.body, challenge.headers as Record<string, string>)).toMatchObject({
        data: { endpoint_id: created.id },
      });
      await expect(page.textContent('main')).resolves.not.toContain(secret);

      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Send a test event")')]);
      await expect(page.textContent('#outcome')).resolves.toContain('Test event delivered');
      const ping = first.received.find((r) => JSON.parse(r.body).event_type === 'webhook.test')!;
      expect(new Webhook(secret).verify(ping.body, ping.headers as Record<string, string>)).toMatchObject({
        event_type: 'webhook.test',
      });

      // Edited: a new URL pauses the endpoint until that URL answers a challenge; the console sends one at once.
      await page.fill('#edit-name', 'Orders hook (moved)');
      await page.fill('#edit-url', second.url);
      await Promise.all([page.waitForNavigation(), page.click('#edit button:has-text("Save")')]);
      await expect(page.textContent('#outcome')).resolves.toContain('The URL changed, so the endpoint is paused');
      await expect(page.textContent('#outcome')).resolves.toMatch(
        /The endpoint answered: HTTP 200: challenge_mismatch/,
      );
      expect(await endpointState(created.id)).toMatchObject({
        name: 'Orders hook (moved)',
        url: second.url,
        status: 'paused',
        paused_reason: 'url_changed',
      });
      expect(second.received.map((r) => JSON.parse(r.body).event_type)).toEqual(['webhook.endpoint_verification']);
      await browser.screenshot(page, 'console-webhook-paused', { fullPage: true });
      // While paused, only verification is offered, and events are not delivered to it.
      await expect(page.getByRole('button', { name: 'Send a test event' }).count()).resolves.toBe(0);

      second.setReply(answerChallenges);
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Verify now")')]);
      await expect(page.textContent('#outcome')).resolves.toContain('Verified');
      expect(await endpointState(created.id)).toMatchObject({ status: 'active', paused_reason: null });

      // A refused edit is shown on the edit form and changes nothing.
      const before = await endpointState(created.id);
      await page.fill('#edit-url', 'not a url');
      await page.fill('#edit-name', 'Orders\u202Ekooh');
      const [editRefused] = await Promise.all([page.waitForNavigation(), page.click('#edit button:has-text("Save")')]);
      expect(editRefused!.status()).toBe(400);
      await expect(page.textContent('#edit-errors')).resolves.toContain('url: must be an https URL');
      await expect(page.textContent('#edit-name-error')).resolves.toMatch(/U\+202E right-to-left override/);
      await expect(page.inputValue('#edit-url')).resolves.toBe('not a url');
      await page.locator('#edit').screenshot({ path: await browser.screenshot(page, 'console-webhook-edit-errors') });
      expect(await endpointState(created.id)).toEqual(before);

      // The secret rotates: a new one, shown once; both sign for 24 hours.
      await page.goto(`${app.siteUrl}/console/webhooks/${created.id}`);
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Rotate the secret")')]);
      const rotated = await page.inputValue('#new-secret');
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      expect(await endpointState(created.id)).toMatchObject({
        secret_prefix: rotated.slice(0, 12),
        secret_rotation: { previous_secret_expires_at: expect.any(String) },
      });

      // Deleted, after opening the confirmation.
      await page.goto(`${app.siteUrl}/console/webhooks/${created.id}`);
      await page.click('summary:has-text("Delete this endpoint")');
      await browser.screenshot(page, 'console-webhook-endpoint', { fullPage: true });
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Delete Orders hook (moved)")')]);
      expect(new URL(page.url()).pathname).toBe('/console/webhooks');
      await expect(page.textContent('[role=status]')).resolves.toContain('deleted');
      await expect(page.textContent('main')).resolves.not.toContain('Orders hook');
      expect(await endpointState(created.id)).toBeNull();
      await browser.screenshot(page, 'console-webhooks', { fullPage: true });
      expect(errors.filter((e) => !/status of 400 /.test(e))).toEqual([]);
      await page.close();
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('opens a page image at full width from Approvals; stored agent text shows its hidden characters as marks', async () => {
    const id = await pendingPiece('Mary Somerville', await letterPdf(2));
    // Text stored before such characters were refused (the API refuses them now): it must not read as something else.
    await app.deps.db.query(`UPDATE outbound_mail SET agent_notes = $2, recipient_company = $3 WHERE id = $1`, [
      id,
      'Approve: \u202E005$ ot 5$\u202C',
      'Evil\nCorp',
    ]);
    const { page, errors } = await browser.open(`${app.siteUrl}/console/approvals`);
    await signIn(page, owner.key);
    const card = page.locator('article.approval', { hasText: 'Mary Somerville' });
    const notes = card.locator('dd.notes');
    await expect(notes.textContent()).resolves.not.toContain('\u202E');
    await expect(notes.locator('.hidden-char').allTextContents()).resolves.toEqual([
      'hidden character U+202E',
      'hidden character U+202C',
    ]);
    await expect(notes.locator('.hidden-char').first().getAttribute('title')).resolves.toBe(
      'U+202E right-to-left override',
    );
    await expect(card.locator('.address .hidden-char').getAttribute('title')).resolves.toBe('U+000A line feed');
    await card.scrollIntoViewIfNeeded();
    await pageCondition(
      page,
      "[...document.querySelectorAll('article.approval .pages img')].every((i) => i.complete && i.naturalWidth > 100)",
    );
    await browser.screenshot(page, 'console-approvals-hidden-characters', { fullPage: true });

    // The first page's image opens the page at full width.
    await Promise.all([page.waitForNavigation(), card.locator('a.page-thumb').first().click()]);
    expect(new URL(page.url()).pathname).toBe(`/console/mail/${id}/pages/1/full`);
    await expect(page.textContent('h1')).resolves.toContain('Page 1 of 2');
    await pageCondition(page, "document.querySelector('figure.page-full img').complete");
    const size = (await page.evaluate(
      `(() => { const img = document.querySelector('figure.page-full img'); return { natural: img.naturalWidth, shown: img.getBoundingClientRect().width, main: document.querySelector('main').getBoundingClientRect().width }; })()`,
    )) as { natural: number; shown: number; main: number };
    expect(size.natural).toBe(1275); // US Letter at 150 dpi
    expect(size.shown).toBeGreaterThan(size.main * 0.9); // the width of the page
    await browser.screenshot(page, 'console-page-full');
    await Promise.all([page.waitForNavigation(), page.click('text=Next page')]);
    expect(new URL(page.url()).pathname).toBe(`/console/mail/${id}/pages/2/full`);
    await expect(page.locator('text=Next page').count()).resolves.toBe(0);
    await Promise.all([page.waitForNavigation(), page.click('main >> text=Approvals')]);
    expect(new URL(page.url()).pathname).toBe('/console/approvals');
    // The image alone is served at that size only to a session that may see the piece, and a page past the end is a 404.
    const full = await page.request.get(`${app.siteUrl}/console/mail/${id}/pages/2.png?size=full`);
    expect(full.headers()['content-type']).toBe('image/png');
    expect((await page.request.get(`${app.siteUrl}/console/mail/${id}/pages/3/full`)).status()).toBe(404);
    expect(
      (await fetch(`${app.siteUrl}/console/mail/${id}/pages/2.png?size=full`, { redirect: 'manual' })).status,
    ).toBe(302);

    // At phone width the page fits the screen.
    await page.setViewportSize(PHONE);
    await page.goto(`${app.siteUrl}/console/mail/${id}/pages/1/full`);
    await pageCondition(page, "document.querySelector('figure.page-full img').complete");
    await expect(page.evaluate('document.documentElement.scrollWidth > window.innerWidth')).resolves.toBe(false);
    await browser.screenshot(page, 'console-page-full-phone');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('answers a form over the size limit with a 413 page and changes nothing', async () => {
    const before = (await api('GET', `/v1/agents/${agentId}/instructions`, { key: owner.key })).body;
    const { page, errors } = await browser.open(`${app.siteUrl}/console/agents/${agentId}`);
    await signIn(page, owner.key);
    await page.fill('#text', 'x'.repeat(300 * 1024));
    const [answer] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save version")')]);
    expect(answer!.status()).toBe(413);
    await expect(page.textContent('h1')).resolves.toBe('Too much was sent');
    await expect(page.textContent('main')).resolves.toContain('larger than the 256 KiB a console form may be');
    await browser.screenshot(page, 'console-413');
    const after = (await api('GET', `/v1/agents/${agentId}/instructions`, { key: owner.key })).body;
    expect([after.version, after.text]).toEqual([before.version, before.text]);
    // The signed-out sign-in form too: a page, not the API's JSON.
    const signInForm = await fetch(`${app.siteUrl}/console/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `key=${'x'.repeat(300 * 1024)}`,
    });
    expect(signInForm.status).toBe(413);
    expect(signInForm.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await signInForm.text()).toContain('Too much was sent');
    expect(errors.filter((e) => !/status of 413 /.test(e))).toEqual([]);
    await page.close();
  });
});
