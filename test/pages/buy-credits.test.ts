// The owner's money loop in headless Chromium with no operator: an agent's live letter is
// refused 402, its billing_url leads through sign-in to the billing page, an amount out of
// bounds is a form error, $50 is bought on the local checkout stand-in (which posts the
// signed events Stripe would send to POST /webhooks/stripe), the balance shows $50, and the
// letter waiting for approval is approved from Approvals with one debit. The ledger sums to
// the balance. Automatic reload is turned on from the billing page (a card saved on the
// local setup stand-in, a threshold and an amount): a live letter crossing the threshold is
// reloaded once; a declined reload turns it off and the page says why; the owner turns it on
// again; the local checkout page refunds and disputes the reload's charge. Screenshots go
// to .data/screenshots.
import type { Page } from 'playwright-core';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { launchBrowser, offMachineRequests, TestBrowser } from '../helpers/browser';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { balanceCents } from '../../services/billing/credits';
import { formatCents } from '../../domain/shared/money';
import { letterForm, letterPdf, waitFor } from '../integration/mail-helpers';
import { freePort } from '../../scripts/stack';

jest.setTimeout(300_000);

describe('owner buys credits at billing_url', () => {
  let app: TestApp;
  let browser: TestBrowser;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    browser = await launchBrowser();
  });
  // Each test starts signed out: the default browser context keeps cookies between pages.
  beforeEach(async () => {
    await browser.browser.contexts()[0].clearCookies();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function signIn(page: Page, key: string): Promise<void> {
    await page.fill('#key', key);
    await Promise.all([page.waitForNavigation(), page.press('#key', 'Enter')]);
  }

  it('402 -> billing_url -> sign in -> buy $50 on the local checkout -> approve the waiting letter: one debit', async () => {
    const owner = await newMember(app.deps, { creditsCents: 0 });
    const agentId = (await newAgent(app.baseUrl, owner.key, { display_name: 'Mail assistant' })).id;
    const agentKey = (await newCredential(app.baseUrl, owner.key, agentId, { environment: 'live' })).key;
    const send = async (form: Record<string, string> = {}) =>
      api('POST', '/v1/mail', {
        key: agentKey,
        headers: { 'x-service-md-version': '1' },
        form: letterForm(await letterPdf(1), { recipient_name: 'Grace Hopper', ...form }),
      });
    const waiting = await send({ requires_approval: 'true' });
    expect(waiting.status).toBe(201);
    expect(waiting.body.status).toBe('pending_approval');
    const refused = await send();
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('INSUFFICIENT_CREDITS');

    const { page, requests, errors } = await browser.open(refused.body.billing_url);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await signIn(page, owner.key);
    expect(new URL(page.url()).pathname).toBe('/console/billing');
    await expect(page.textContent('#balance')).resolves.toBe('$0.00');
    await expect(page.textContent('#credits')).resolves.not.toContain('credits:add');
    await browser.screenshot(page, 'billing-buy-credits', { fullPage: true });

    // Out of bounds: a form error on the page, no checkout started.
    await page.fill('#amount', '2');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Buy credits")')]);
    await expect(page.textContent('#amount-error')).resolves.toContain('between $5.00 and $5,000.00');
    await browser.screenshot(page, 'billing-amount-error');
    expect(await app.deps.db.query(`SELECT id FROM credit_purchases WHERE member_id = $1`, [owner.member_id])).toEqual(
      [],
    );

    // $50 (typed, as an owner would): 303 to the local checkout stand-in.
    await page.fill('#amount', '50');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Buy credits")')]);
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/billing\/checkout\/[0-9a-f-]{36}$/);
    await expect(page.textContent('main')).resolves.toContain('Local stand-in for Stripe');
    await expect(page.textContent('h2')).resolves.toBe('Pay $50.00');
    await browser.screenshot(page, 'billing-local-checkout', { fullPage: true });
    // Nothing is credited by starting a checkout.
    expect(await balanceCents(app.deps.db, owner.member_id)).toBe(0);

    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Pay $50.00")')]);
    expect(new URL(page.url()).pathname).toBe('/console/billing');
    await expect(page.textContent('[role=status]')).resolves.toContain('Payment sent');
    // The webhook's workflow adds the credit; the page shows it once applied.
    await waitFor(async () => {
      await page.reload();
      return (await page.textContent('#balance')) === '$50.00';
    }, 'the balance to show $50.00');
    await expect(page.textContent('#purchases')).resolves.toMatch(/\$50\.00\s*paid/);
    await browser.screenshot(page, 'billing-after-purchase', { fullPage: true });

    await page.goto(`${app.siteUrl}/console/approvals`);
    await Promise.all([
      page.waitForNavigation(),
      page
        .locator('article.approval', { hasText: 'Grace Hopper' })
        .getByRole('button', { name: /Approve/ })
        .click(),
    ]);
    await expect(page.textContent('[role=status]')).resolves.toContain('Approved');
    await browser.screenshot(page, 'billing-approved', { fullPage: true });

    const debits = await app.deps.db.query(
      `SELECT amount_cents FROM credits_ledger WHERE reference_id = $1 AND kind = 'debit'`,
      [waiting.body.id],
    );
    expect(debits).toHaveLength(1);
    const ledger = await app.deps.db.query(
      `SELECT kind, amount_cents FROM credits_ledger WHERE member_id = $1 ORDER BY created_at`,
      [owner.member_id],
    );
    expect(ledger.map((l: { kind: string }) => l.kind)).toEqual(['top_up', 'debit']);
    expect(Number(ledger[0].amount_cents)).toBe(5000);
    const sum = ledger.reduce((s: number, l: { amount_cents: number }) => s + Number(l.amount_cents), 0);
    expect(await balanceCents(app.deps.db, owner.member_id)).toBe(sum);
    expect(sum).toBe(5000 + Number(debits[0].amount_cents));
    await page.goto(`${app.siteUrl}/console/billing`);
    await expect(page.textContent('#balance')).resolves.toBe(
      `$${(sum / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`,
    );
    expect(offMachineRequests(requests)).toEqual([]);
    // The only failed load is the refused form's own answer (400, the page with the form error).
    expect(errors.filter((e) => !e.includes('status of 400'))).toEqual([]);
    expect(errors.length).toBeLessThanOrEqual(2);
    await page.close();
  });

  it('automatic reload turned on from the billing page: one reload per crossing, a declined one turns it off and says why, refunds and disputes from the local checkout page', async () => {
    const owner = await newMember(app.deps, { creditsCents: 1000 });
    const agentId = (await newAgent(app.baseUrl, owner.key)).id;
    const agentKey = (await newCredential(app.baseUrl, owner.key, agentId, { environment: 'live' })).key;
    const send = async (form: Record<string, string> = {}) =>
      api('POST', '/v1/mail', {
        key: agentKey,
        headers: { 'x-service-md-version': '1' },
        form: letterForm(await letterPdf(1), form),
      });
    const price: number = (await send({ dry_run: 'true' })).body.cost_cents;
    const reloads = () =>
      app.deps.db.query(
        `SELECT * FROM credit_purchases WHERE member_id = $1 AND kind = 'auto_reload' ORDER BY created_at`,
        [owner.member_id],
      );

    const { page, requests, errors } = await browser.open(`${app.siteUrl}/console/billing`);
    await signIn(page, owner.key);
    await expect(page.textContent('#reload-status')).resolves.toContain('Off');
    await expect(page.textContent('#reload-card')).resolves.toContain('No card saved yet');

    // Turning it on without a card is refused on the page.
    await page.fill('#reload-threshold', '10');
    await page.fill('#reload-amount', '25');
    await page.check('#reload-enabled');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save automatic reload")')]);
    await expect(page.textContent('#reload-error')).resolves.toContain('Save a card first');

    // Save a card: the setup-mode checkout leads to the local stand-in, whose button posts Stripe's signed completion.
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save a card")')]);
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/billing\/card-setup\/[0-9a-f-]{36}$/);
    await expect(page.textContent('main')).resolves.toContain("Local stand-in for Stripe's page that saves a card");
    await browser.screenshot(page, 'billing-local-card-setup', { fullPage: true });
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save card")')]);
    await expect(page.textContent('[role=status]')).resolves.toContain('Card sent');
    await waitFor(async () => {
      await page.reload();
      return (await page.textContent('#reload-card'))?.includes('Visa ending 4242');
    }, 'the saved card on the billing page');

    // On, with a threshold of the whole balance: the next live letter crosses it.
    await page.fill('#reload-threshold', '10.00');
    await page.fill('#reload-amount', '25.00');
    await page.check('#reload-enabled');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save automatic reload")')]);
    await expect(page.textContent('[role=status]')).resolves.toContain('Automatic reload is on');
    await expect(page.textContent('#reload-status')).resolves.toContain(
      'On: when the balance falls below $10.00, $25.00 is added.',
    );

    expect((await send()).status).toBe(201);
    // The local stand-in answers the reload's charge with Stripe's signed payment_intent.succeeded.
    const reloaded = 1000 - price + 2500;
    await waitFor(
      async () => {
        await page.reload();
        return (await page.textContent('#balance')) === formatCents(reloaded);
      },
      `the balance to show ${formatCents(reloaded)}`,
    );
    await expect(page.textContent('#purchases')).resolves.toMatch(/Automatic reload\s*\$25\.00\s*paid/);
    expect(await reloads()).toHaveLength(1);
    await browser.screenshot(page, 'billing-auto-reload', { fullPage: true });

    // A second crossing whose charge is declined (the local stand-in told to answer so): reload is turned off, and the page says why.
    const stripe = app.deps.config.stripe;
    app.deps.config.stripe = { ...stripe, localReloadOutcome: 'failed' };
    try {
      await page.fill('#reload-threshold', (reloaded / 100).toFixed(2));
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save automatic reload")')]);
      expect((await send()).status).toBe(201);
      // The page reads the settings and the purchases in separate statements: wait for both to show the decline.
      await waitFor(async () => {
        await page.reload();
        return (
          (await page.$('#reload-disabled')) !== null &&
          ((await page.textContent('#purchases')) ?? '').includes('Your card was declined.')
        );
      }, 'the billing page to say reload was turned off');
      // The notice of the earlier save no longer holds, so it is not shown.
      expect(await page.$('[role=status]')).toBeNull();
    } finally {
      app.deps.config.stripe = stripe;
    }
    await expect(page.textContent('#reload-disabled')).resolves.toContain(
      'The automatic reload of $25.00 could not be charged: Your card was declined. (generic_decline).',
    );
    await expect(page.textContent('#reload-status')).resolves.toContain('Off');
    await expect(page.textContent('#purchases')).resolves.toContain('Your card was declined.');
    await browser.screenshot(page, 'billing-auto-reload-declined', { fullPage: true });
    expect(await balanceCents(app.deps.db, owner.member_id)).toBe(reloaded - price);

    // The owner turns it on again.
    await page.check('#reload-enabled');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save automatic reload")')]);
    await expect(page.textContent('#reload-status')).resolves.toContain(
      'The balance is below the threshold now: the next live letter or batch reloads it.',
    );
    expect(await page.$('#reload-disabled')).toBeNull();

    // The paid reload's charge refunded in part, then disputed and the dispute won, from the local checkout page.
    const [paid] = await reloads();
    const reverse = async (button: string) => {
      await page.goto(`${app.siteUrl}/console/billing/checkout/${paid.id}`);
      await expect(page.textContent('main')).resolves.toContain("Local stand-in for Stripe's checkout page");
      await Promise.all([page.waitForNavigation(), page.click(`button:has-text("${button}")`)]);
      await expect(page.textContent('[role=status]')).resolves.toContain('Sent to this site as Stripe would send it');
    };
    await reverse('Refund half of what is left');
    await waitFor(async () => {
      const [row] = await app.deps.db.query(`SELECT refunded_cents FROM credit_purchases WHERE id = $1`, [paid.id]);
      return row.refunded_cents === 1250;
    }, 'the refund');
    await reverse('Dispute the payment');
    await waitFor(async () => {
      const [row] = await app.deps.db.query(`SELECT status FROM credit_purchases WHERE id = $1`, [paid.id]);
      return row.status === 'disputed';
    }, 'the dispute');
    await page.goto(`${app.siteUrl}/console/billing/checkout/${paid.id}`);
    await browser.screenshot(page, 'billing-local-checkout-disputed', { fullPage: true });
    await reverse('Close the dispute: won');
    await waitFor(async () => {
      const [row] = await app.deps.db.query(`SELECT status, disputed_cents FROM credit_purchases WHERE id = $1`, [
        paid.id,
      ]);
      return row.status === 'paid' && row.disputed_cents === 0;
    }, 'the dispute won');
    expect(await balanceCents(app.deps.db, owner.member_id)).toBe(reloaded - price - 1250);
    const ledger = await app.deps.db.query(`SELECT amount_cents FROM credits_ledger WHERE member_id = $1`, [
      owner.member_id,
    ]);
    expect(ledger.reduce((sum: number, l: { amount_cents: string }) => sum + Number(l.amount_cents), 0)).toBe(
      reloaded - price - 1250,
    );
    await page.goto(`${app.siteUrl}/console/billing`);
    await browser.screenshot(page, 'billing-auto-reload-after-reversals', { fullPage: true });
    expect(offMachineRequests(requests)).toEqual([]);
    expect(errors.filter((e) => !e.includes('status of 400'))).toEqual([]);
    await page.close();
  });

  it('Stripe unreachable: the billing page says so, and nothing is recorded', async () => {
    // The same app, its Stripe API pointed at a closed port for this test (a new settings object, a new client).
    const settings = app.deps.config.stripe;
    app.deps.config.stripe = { ...settings, apiBase: `http://127.0.0.1:${await freePort()}` };
    try {
      const owner = await newMember(app.deps, { creditsCents: 0 });
      const { page } = await browser.open(`${app.siteUrl}/console/billing`);
      await signIn(page, owner.key);
      const [answer] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Buy $50.00")')]);
      expect(answer!.status()).toBe(503);
      await expect(page.textContent('#amount-error')).resolves.toContain(
        'Stripe, the payment provider, could not be reached',
      );
      await browser.screenshot(page, 'billing-stripe-down');
      expect(
        await app.deps.db.query(`SELECT id FROM credit_purchases WHERE member_id = $1`, [owner.member_id]),
      ).toEqual([]);
      expect(await balanceCents(app.deps.db, owner.member_id)).toBe(0);
      await page.close();
    } finally {
      app.deps.config.stripe = settings;
    }
  });
});
