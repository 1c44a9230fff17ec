// The owner console in headless Chromium against the real stack (Postgres, Temporal worker,
// object store): billing_url from a 402 leads a signed-in owner to the billing page; the
// approvals queue is cleared in the browser (a 402 piece approved after credits are added,
// one debit, the workflow moves; a rejection charges nothing); a key is issued and revoked;
// sign-in refuses other kinds of keys and a sign-in link works once; and every page of one
// member answers 404 to another member's session. Screenshots go to .data/screenshots.
import type { Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { launchBrowser, offMachineRequests, TestBrowser } from '../helpers/browser';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { createFacility } from '../../services/accounts';
import { topUp } from '../../services/credits';
import { createSignInLink } from '../../services/console-sessions';
import { letterForm, letterPdf, waitFor } from '../integration/mail-helpers';

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
      key: agentKey, headers: { 'x-service-md-version': '1' },
      form: letterForm(document ?? await letterPdf(2), { recipient_name: name, requires_approval: 'true' }, filename),
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('pending_approval');
    return res.body.id;
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.fill('#key', key);
    await Promise.all([page.waitForNavigation(), page.press('#key', 'Enter')]);
  }

  const debits = async (mailId: string) => (await app.deps.db.query(
    `SELECT amount_cents FROM credits_ledger WHERE reference_id = $1 AND kind = 'debit'`, [mailId])) as { amount_cents: number }[];
  const status = async (mailId: string) => (await app.deps.db.query(`SELECT status FROM outbound_mail WHERE id = $1`, [mailId]))[0].status as string;

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    browser = await launchBrowser();
    owner = await newMember(app.deps, { creditsCents: 0 });
    agentId = (await newAgent(app.baseUrl, owner.key, { display_name: 'Billing assistant' })).id;
    agentKey = (await newCredential(app.baseUrl, owner.key, agentId, { environment: 'live' })).key;
    pieces.push(await pendingPiece('Ada Lovelace'));
    pieces.push(await pendingPiece('Charles Babbage', Buffer.from('Dear Charles,\n\nThe engine is ready.\n\nAda\n'), 'note.txt'));
  });
  // Each test starts signed out: the default browser context keeps cookies between pages.
  beforeEach(async () => { await browser.browser.contexts()[0].clearCookies(); });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('follows billing_url from a 402 through sign-in to the billing page', async () => {
    // A live piece submitted without approval needs credits the member does not have: 402 with billing_url.
    const refused = await api('POST', '/v1/mail', { key: agentKey, headers: { 'x-service-md-version': '1' }, form: letterForm(await letterPdf(1)) });
    expect(refused.status).toBe(402);
    expect(refused.body.billing_url).toBe(`${app.siteUrl}/billing#credits`);

    const { page, requests, errors } = await browser.open(refused.body.billing_url);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await signIn(page, owner.key);
    const landed = new URL(page.url());
    expect(landed.pathname).toBe('/console/billing');
    expect(landed.hash).toBe('#credits');
    await expect(page.textContent('#credits')).resolves.toContain('$0.00');
    await expect(page.textContent('#credits')).resolves.toContain(`credits:add --member ${owner.member_id}`);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'pm_console')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    const [session] = await app.deps.db.query(`SELECT token_hash, expires_at FROM console_sessions WHERE member_id = $1`, [owner.member_id]);
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
    await page.waitForFunction("[...document.querySelectorAll('.pages img')].every((i) => i.complete && i.naturalWidth > 100)");
    const textPage = page.locator('article.approval', { hasText: 'Charles Babbage' }).locator('.pages img');
    await expect(textPage.count()).resolves.toBe(1); // the TXT letter is one counted page, rendered too
    await browser.screenshot(page, 'console-approvals', { fullPage: true });

    // No credits: the approval is refused in words and the piece stays pending, uncharged.
    await Promise.all([page.waitForNavigation(), ada.getByRole('button', { name: /Approve/ }).click()]);
    await expect(page.textContent('h1')).resolves.toBe('Not enough credits');
    await expect(page.textContent('main')).resolves.toMatch(/Insufficient credits: \$\d+\.\d\d required, \$0\.00 available/);
    await browser.screenshot(page, 'console-402');
    expect(await status(pieces[0])).toBe('pending_approval');
    expect(await debits(pieces[0])).toEqual([]);

    await topUp(app.deps.db, { memberId: owner.member_id, amountCents: 10_000, entryKey: `topup:test:${owner.member_id}`, description: 'Test top-up' });
    await Promise.all([page.waitForNavigation(), page.click('text=Go to billing to add credits')]);
    await expect(page.textContent('#credits')).resolves.toContain('$100.00');
    await expect(page.textContent('main')).resolves.toContain('Test top-up');

    await page.goto(`${app.siteUrl}/console/approvals`);
    await Promise.all([page.waitForNavigation(), page.locator('article.approval', { hasText: 'Ada Lovelace' }).getByRole('button', { name: /Approve/ }).click()]);
    await expect(page.textContent('[role=status]')).resolves.toContain('Approved');
    const charged = await debits(pieces[0]);
    expect(charged).toHaveLength(1);
    expect(await waitFor(async () => (await status(pieces[0])) !== 'pending_approval' && status(pieces[0]), 'the workflow to move')).toBe('submitted');

    await Promise.all([page.waitForNavigation(), page.locator('article.approval', { hasText: 'Charles Babbage' }).getByRole('button', { name: /Reject/ }).click()]);
    await expect(page.textContent('[role=status]')).resolves.toContain('Rejected');
    expect(await waitFor(async () => (await status(pieces[1])) === 'cancelled' && 'cancelled', 'the rejection')).toBe('cancelled');
    expect(await debits(pieces[1])).toEqual([]);
    await expect(page.textContent('main')).resolves.toContain('Nothing is waiting for your approval');
    // Repeating an approval (a second tab, a double click) charges nothing more.
    const again = await page.request.post(`${app.siteUrl}/console/mail/${pieces[0]}/approve`, { form: { _csrf: await page.inputValue('input[name=_csrf]') } });
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
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: `Revoke ${key.slice(0, 18)}` }).click()]);
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
    const testKey = (await api('POST', '/v1/api-keys', { key: owner.key, json: { name: 'sandbox', environment: 'test' } })).body.key;
    const facilityKey = (await createFacility(app.deps, 'Console test facility')).key;
    for (const [key, words] of [[agentKey, 'agent key'], [testKey, 'test key'], [facilityKey, 'facility key'], ['sk_live_nope', 'does not look like a key'], [`sk_live_${'x'.repeat(40)}`, 'No key matches']]) {
      await signIn(page, key);
      expect(new URL(page.url()).pathname).toBe('/console/sign-in');
      await expect(page.textContent('[role=alert]')).resolves.toContain(words);
    }
    // A form without the CSRF token is refused before the key is even looked at.
    const forged = await fetch(`${app.siteUrl}/console/sign-in`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `key=${owner.key}`, redirect: 'manual' });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('set-cookie') ?? '').not.toContain('pm_console=');

    const link = await createSignInLink(app.deps, owner.member_id);
    const [stored] = await app.deps.db.query(`SELECT token_hash FROM console_sign_in_links WHERE member_id = $1`, [owner.member_id]);
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
    const conversation = (await api('POST', '/v1/support/messages', { key: owner.key, json: { category: 'support', body: 'Is the console working?' } })).body.message.conversation_id;
    const { page, errors } = await browser.open(`${app.siteUrl}/console/sign-in`, PHONE);
    await signIn(page, owner.key);
    const pages = ['/console', '/console/approvals', '/console/mail', '/console/batches', '/console/billing', '/console/agents',
      `/console/agents/${agentId}`, '/console/keys', '/console/inbound', '/console/webhooks', '/console/support', `/console/support/${conversation}`];
    for (const path of pages) {
      const res = await page.goto(`${app.siteUrl}${path}`);
      expect({ path, status: res!.status() }).toEqual({ path, status: 200 });
      // Nothing is wider than the phone's screen.
      expect({ path, overflow: await page.evaluate('document.documentElement.scrollWidth > window.innerWidth') }).toEqual({ path, overflow: false });
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

  it('shows one member none of another member\'s pages: every page answers 404', async () => {
    // Objects of the owner that the other member will ask for.
    const conversation = (await api('POST', '/v1/support/messages', { key: owner.key, json: { category: 'billing', body: 'Where is my refund?' } })).body.message.conversation_id;
    const credentialId = (await newCredential(app.baseUrl, owner.key, agentId, { environment: 'live' })).id;
    const ownerKeyId = (await api('GET', '/v1/api-keys', { key: owner.key })).body.api_keys.find((k: { status: string; environment: string }) => k.status === 'active' && k.environment === 'prod').id;
    const [ownerSession] = await app.deps.db.query(`SELECT id FROM console_sessions WHERE member_id = $1 AND revoked_at IS NULL LIMIT 1`, [owner.member_id]);
    const pending = await pendingPiece('Grace Hopper');

    const stranger = await newMember(app.deps, { creditsCents: 100_000 });
    const context = await browser.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.siteUrl}/console/sign-in`);
    await signIn(page, stranger.key);
    await page.goto(`${app.siteUrl}/console/mail`);
    await expect(page.textContent('main')).resolves.not.toContain('Ada Lovelace');
    await page.goto(`${app.siteUrl}/console/approvals`);
    await expect(page.textContent('main')).resolves.not.toContain('Grace Hopper');
    await page.setViewportSize(PHONE);
    await page.goto(`${app.siteUrl}/console/billing`);
    await browser.screenshot(page, 'console-billing-phone', { fullPage: true });
    const csrf = await page.inputValue('input[name=_csrf]');

    const gets = [
      `/console/mail/${pending}`, `/console/mail/${pending}/pages/1.png`, `/console/mail/${pieces[0]}`, `/console/agents/${agentId}`,
      `/console/support/${conversation}`, `/console/batches/bat_${'0'.repeat(24)}`, `/console/webhooks/${credentialId}`, `/console/inbound/${credentialId}`,
    ];
    for (const path of gets) {
      const res = await page.request.get(`${app.siteUrl}${path}`);
      expect({ path, status: res.status() }).toEqual({ path, status: 404 });
    }
    const posts = [
      `/console/mail/${pending}/approve`, `/console/mail/${pending}/reject`, `/console/mail/${pending}/cancel`,
      `/console/agents/${agentId}/credentials`, `/console/agents/${agentId}/credentials/${credentialId}/revoke`,
      `/console/agents/${agentId}/instructions`, `/console/agents/${agentId}/proposals/${credentialId}`,
      `/console/keys/${ownerKeyId}/rotate`, `/console/keys/${ownerKeyId}/revoke`, `/console/sessions/${ownerSession.id}/revoke`,
      `/console/support/${conversation}`, `/console/handling/${credentialId}/approve`, `/console/handling/${credentialId}/reject`,
      `/console/webhook-deliveries/${credentialId}/replay`,
    ];
    for (const path of posts) {
      const res = await page.request.post(`${app.siteUrl}${path}`, {
        form: { _csrf: csrf, scopes: 'mail.send', text: 'taken over', expected_version: '1', decision: 'reject', body: 'hello' },
      });
      expect({ path, status: res.status(), url: res.url() }).toEqual({ path, status: 404, url: `${app.siteUrl}${path}` });
    }
    // Nothing of the owner's changed.
    expect(await status(pending)).toBe('pending_approval');
    const creds = (await api('GET', `/v1/agents/${agentId}/credentials`, { key: owner.key })).body.credentials;
    expect(creds.find((c: { id: string }) => c.id === credentialId).status).toBe('active');
    expect((await api('GET', '/v1/credits', { key: owner.key })).status).toBe(200);
    const [session] = await app.deps.db.query(`SELECT revoked_at FROM console_sessions WHERE id = $1`, [ownerSession.id]);
    expect(session.revoked_at).toBeNull();
    expect((await api('GET', `/v1/agents/${agentId}/instructions`, { key: owner.key })).body.text).not.toBe('taken over');
    const thread = (await api('GET', `/v1/support/conversations/${conversation}/messages`, { key: owner.key })).body;
    expect(thread.messages).toHaveLength(1);

    // Signed out (or without a session), a page sends the browser to sign in.
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Sign out")')]);
    await page.goto(`${app.siteUrl}/console/mail`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await browser.screenshot(page, 'console-sign-in-phone');
    await context.close();
  });
});
