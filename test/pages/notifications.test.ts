// The Notifications page and the pages behind email links, in headless Chromium against
// the real stack and Mailpit: the owner sets the low-balance threshold, switches a kind
// off, adds an address that receives nothing until it opens its own emailed confirmation
// link, then removes it; an email's unsubscribe link asks first and switches its kind off
// when confirmed. The email itself is rendered in the browser too (it loads nothing).
// Screenshots go to .data/screenshots.
import type { Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { launchBrowser, offMachineRequests, TestBrowser } from '../helpers/browser';
import { linkIn, message, messagesTo, waitForMail } from '../helpers/mailpit';
import { letterForm, letterPdf, newSender, sendLetter, type Sender } from '../integration/mail-helpers';
import { uniqueEmail } from '../helpers/factories';

jest.setTimeout(240_000);

const DIGEST_WINDOW_SECONDS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('notification settings in the console', () => {
  let app: TestApp;
  let browser: TestBrowser;
  let api: ReturnType<typeof client>;
  let owner: Sender & { email: string };

  async function signIn(page: Page, key: string): Promise<void> {
    await page.fill('#key', key);
    await Promise.all([page.waitForNavigation(), page.press('#key', 'Enter')]);
  }
  const settings = async () => (await api('GET', '/v1/notifications/settings', { key: owner.memberKey })).body;

  beforeAll(async () => {
    app = await startTestApp({ env: { NOTIFICATION_DIGEST_WINDOW_SECONDS: String(DIGEST_WINDOW_SECONDS) } });
    api = client(app.baseUrl);
    browser = await launchBrowser();
    const s = await newSender(app, { creditsCents: 5000, credential: { force_approval: true } });
    const [{ email }] = await app.deps.db.query(`SELECT email FROM members WHERE id = $1`, [s.memberId]);
    owner = { ...s, email };
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('sets the threshold and the kinds, and adds an address that confirms by its own link', async () => {
    const { page, requests, errors } = await browser.open(`${app.siteUrl}/console`);
    await signIn(page, owner.memberKey);
    await Promise.all([page.waitForNavigation(), page.click('nav >> text=Notifications')]);
    expect(new URL(page.url()).pathname).toBe('/console/notifications');
    await expect(page.textContent('h1')).resolves.toBe('Notifications');
    await expect(page.inputValue('#threshold')).resolves.toBe('10.00');

    await page.fill('#threshold', '49');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save threshold")')]);
    await expect(page.textContent('.notice')).resolves.toContain('Saved the low-balance threshold');
    expect((await settings()).low_balance_threshold_cents).toBe(4900);

    // The owner switches off mail arriving at the mailbox.
    const mine = page.locator('section', { has: page.locator('h2', { hasText: owner.email }) });
    await mine.locator('input[value="mail_arrived"]').uncheck();
    await Promise.all([page.waitForNavigation(), mine.locator('button:has-text("Save for me")').click()]);
    expect((await settings()).recipients[0].kinds).toMatchObject({ mail_arrived: false, approval_needed: true });

    // An extra address: pending until it confirms.
    const colleague = uniqueEmail('colleague');
    await page.fill('#recipient-email', colleague);
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Add and send confirmation")')]);
    await expect(page.textContent('.notice')).resolves.toContain('confirmation link was emailed');
    await expect(page.textContent('main')).resolves.toContain('Waiting for confirmation');
    await browser.screenshot(page, 'console-notifications', { fullPage: true });

    // A letter waits for approval: the owner is told; the unconfirmed address is not.
    expect((await sendLetter(app, owner, letterForm(await letterPdf(1)))).body.status).toBe('pending_approval');
    await waitForMail(owner.email);
    const [confirmation] = await waitForMail(colleague);
    expect(confirmation.Subject).toBe('Confirm that you want Postal Mail notifications');
    const link = linkIn((await message(confirmation.ID)).Text, `${app.siteUrl}/email/confirm?token=`);

    // The colleague opens the link (not signed in) and confirms.
    const other = await browser.browser.newContext();
    const colleaguePage = await other.newPage();
    await colleaguePage.goto(link);
    await expect(colleaguePage.textContent('h1')).resolves.toBe('Confirm notifications');
    await Promise.all([colleaguePage.waitForNavigation(), colleaguePage.click('button:has-text("Confirm")')]);
    await expect(colleaguePage.textContent('h1')).resolves.toBe('Confirmed');
    // Once only.
    await colleaguePage.goto(link);
    await Promise.all([colleaguePage.waitForNavigation(), colleaguePage.click('button:has-text("Confirm")')]);
    await expect(colleaguePage.textContent('main')).resolves.toContain('used already');
    await other.close();

    await page.reload();
    await expect(page.textContent('main')).resolves.not.toContain('Waiting for confirmation');
    expect((await settings()).recipients.map((r: { email: string; status: string }) => [r.email, r.status])).toEqual([
      [owner.email, 'active'],
      [colleague, 'active'],
    ]);

    // From now on the colleague is told too (a letter failing is a kind both have on).
    const second = (await sendLetter(app, owner, letterForm(await letterPdf(1)))).body.id;
    await api('POST', `/v1/mail/${second}/approve`, { key: owner.memberKey });
    // Approving takes the balance from $50 below the $49 threshold: the low-balance email goes to both.
    const [low] = await waitForMail(colleague, { match: (m) => m.Subject.startsWith('Low balance') });
    expect(low.Subject).toMatch(/^Low balance: \$4\d\.\d\d left$/);

    const theirs = page.locator('section', { has: page.locator('h2', { hasText: colleague }) });
    await Promise.all([page.waitForNavigation(), theirs.locator('button:has-text("Remove this address")').click()]);
    await expect(page.textContent('.notice')).resolves.toContain('Removed');
    await expect(page.textContent('main')).resolves.not.toContain(colleague);

    expect(offMachineRequests(requests)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('renders the email without loading anything, and its unsubscribe link asks before it acts', async () => {
    const [mail] = await waitForMail(owner.email, { match: (m) => m.Subject.startsWith('Approval needed') });
    const full = await message(mail.ID);
    const { page, requests, errors } = await browser.open('about:blank', { width: 700, height: 900 });
    await page.setContent(full.HTML);
    await browser.screenshot(page, 'email-approval-needed', { fullPage: true });
    expect(requests.filter((u) => u !== 'about:blank')).toEqual([]);
    await expect(page.textContent('h1')).resolves.toBe('A letter waits for your approval');

    const unsubscribe = full.ListUnsubscribe.Links[0];
    await page.goto(unsubscribe);
    await expect(page.textContent('h1')).resolves.toBe('Stop these emails?');
    expect((await settings()).recipients[0].kinds.approval_needed).toBe(true);
    await browser.screenshot(page, 'email-unsubscribe-confirm');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Unsubscribe")')]);
    await expect(page.textContent('h1')).resolves.toBe('Unsubscribed');
    expect((await settings()).recipients[0].kinds.approval_needed).toBe(false);

    // Whatever an earlier window held has gone out by now; then a new approval sends nothing.
    await sleep((DIGEST_WINDOW_SECONDS + 3) * 1000);
    const before = (await messagesTo(owner.email)).length;
    expect((await sendLetter(app, owner, letterForm(await letterPdf(1)))).body.status).toBe('pending_approval');
    await sleep((DIGEST_WINDOW_SECONDS + 3) * 1000);
    expect(await messagesTo(owner.email)).toHaveLength(before);
    expect(errors).toEqual([]);
    await page.close();
  });
});
