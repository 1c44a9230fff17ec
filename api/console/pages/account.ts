// Account pages: billing (balance, buying credits with Stripe Checkout and the purchases
// made, automatic reload with a saved card, the ledger with each entry's reason; purchases
// and reload settings are read from services/billing, since no API key route shows
// payment details), the local checkout and card setup stand-ins outside production, agents (create; issue and revoke credentials; instructions saved with the
// version guard; proposed edits), member keys (create, rotate, revoke) and the open
// console sessions. A new raw key is shown once, in the answer to the form that made it.
import { SCOPES } from '../../../domain/shared/access';
import { listConsoleSessions, revokeConsoleSession } from '../../../services/accounts/console-sessions';
import type { AddPage } from '../framework';
import { formFields, formNumber, type ConsolePage } from '../framework';
import { PURCHASE_PRESETS_CENTS, readDollarAmount } from '../../../domain/billing/purchases';
import {
  getPurchase,
  listPurchases,
  startCheckout,
  StripeUnavailable,
  type PurchaseRow,
} from '../../../services/billing/payments';
import {
  localReversalsOf,
  payLocally,
  reverseLocally,
  saveCardLocally,
  type LocalPayment,
  type LocalReversal,
} from '../../../services/billing/local-checkout';
import {
  getAutoReload,
  getCardSetup,
  NoCardSaved,
  saveAutoReloadSettings,
  startCardSetup,
} from '../../../services/billing/auto-reload';
import { readReloadSettings } from '../../../domain/billing/auto-reload';
import { listAgentGrants, revokeGrantAsOwner } from '../../../services/accounts/oauth';

/** The month a billing page shows: ?month=YYYY-MM, default the current one (UTC). */
function monthPeriod(month: unknown): { month: string; start: string; end: string | undefined } {
  const now = new Date();
  const m = typeof month === 'string' && /^\d{4}-(0[1-9]|1[0-2])$/.test(month) ? month : now.toISOString().slice(0, 7);
  const [y, mo] = m.split('-').map(Number);
  const start = new Date(Date.UTC(y, mo - 1, 1));
  const end = new Date(Date.UTC(y, mo, 1));
  return { month: m, start: start.toISOString(), end: end < now ? end.toISOString() : undefined };
}

const DONE: Record<string, string> = {
  revoked: 'The key was revoked: it is refused from now on.',
  saved: 'Saved a new version of the instructions.',
  accepted: 'Accepted the proposed edit: it is the new version of the instructions.',
  rejected: 'Rejected the proposed edit.',
  session_revoked: 'The session was signed out.',
  grant_revoked: 'The connection was revoked: its tokens are refused from now on.',
};
const done = (v: unknown) => (typeof v === 'string' ? DONE[v] : undefined);

const CHECKOUT_NOTICE: Record<string, string> = {
  success:
    'Payment sent. Credits are added when Stripe confirms the payment (usually within seconds): the purchase below then says paid.',
  cancelled: 'Checkout cancelled: nothing was charged.',
  reversal:
    'Sent to this site as Stripe would send it: the purchase below shows the refund or dispute once it is applied.',
};
const CARD_NOTICE: Record<string, string> = {
  sent: 'Card sent. It is saved for automatic reload when Stripe confirms it (usually within seconds): it is then shown under Automatic reload.',
  cancelled: 'Saving a card was cancelled: nothing was saved.',
};
const RELOAD_NOTICE: Record<string, string> = {
  on: 'Automatic reload is on.',
  off: 'Automatic reload is off.',
};

interface BillingForms {
  /** The buy form was refused. */
  purchaseError?: { message: string; amount: string };
  /** The automatic reload form was refused: what was typed, and why. */
  reloadError?: {
    message?: string;
    fields: Array<{ path: 'threshold' | 'amount'; message: string }>;
    values: { threshold: string; amount: string; enabled: boolean };
  };
}

/** The billing page; a refused form's error (with its status). */
async function renderBilling(page: ConsolePage, forms: BillingForms = {}, status = 200) {
  const period = monthPeriod(page.ctx.query.month);
  const { stripe } = page.deps.config;
  const [credits, usage, purchases, autoReload] = await Promise.all([
    page.call('GET /v1/credits'),
    page.call('GET /v1/usage', {
      query: { period_start: period.start, ...(period.end ? { period_end: period.end } : {}) },
    }),
    listPurchases(page.deps, page.session.memberId),
    getAutoReload(page.deps, page.session.memberId),
  ]);
  const previous = new Date(Date.UTC(Number(period.month.slice(0, 4)), Number(period.month.slice(5)) - 2, 1))
    .toISOString()
    .slice(0, 7);
  const nextMonth = new Date(Date.UTC(Number(period.month.slice(0, 4)), Number(period.month.slice(5)), 1))
    .toISOString()
    .slice(0, 7);
  const { checkout, card, reload } = page.ctx.query;
  page.render(
    'billing',
    {
      title: 'Billing',
      credits,
      usage,
      period,
      previous,
      nextMonth: nextMonth <= new Date().toISOString().slice(0, 7) ? nextMonth : null,
      purchases,
      presets: PURCHASE_PRESETS_CENTS.filter((c) => c >= stripe.purchaseMinCents && c <= stripe.purchaseMaxCents),
      bounds: { min: stripe.purchaseMinCents, max: stripe.purchaseMaxCents },
      localCheckout: stripe.localCheckout,
      notice:
        (typeof checkout === 'string' ? CHECKOUT_NOTICE[checkout] : undefined) ??
        (typeof card === 'string' ? CARD_NOTICE[card] : undefined) ??
        // Only while it still holds (a declined reload may have turned it off since).
        (typeof reload === 'string' && (reload === 'on') === Boolean(autoReload.settings?.enabled)
          ? RELOAD_NOTICE[reload]
          : undefined),
      purchaseError: forms.purchaseError,
      autoReload,
      reloadError: forms.reloadError,
    },
    status,
  );
}

export function accountPages(add: AddPage, opts: { localCheckout: boolean }): void {
  add('get', '/console/billing', (page) => renderBilling(page));

  // Buy credits: a Checkout Session for the amount, then to Stripe's page (303, so the browser GETs it).
  add('post', '/console/billing/purchase', async (page) => {
    const { stripe } = page.deps.config;
    const typed = page.form.get('amount') ?? '';
    const amount = readDollarAmount(typed, stripe.purchaseMinCents, stripe.purchaseMaxCents);
    if (!amount.ok) return renderBilling(page, { purchaseError: { message: amount.message, amount: typed } }, 400);
    try {
      const { redirectUrl } = await startCheckout(page.deps, page.session.memberId, amount.cents);
      page.ctx.status = 303;
      page.ctx.redirect(redirectUrl);
    } catch (err) {
      if (!(err instanceof StripeUnavailable)) throw err;
      await renderBilling(
        page,
        {
          purchaseError: {
            message:
              'Stripe, the payment provider, could not be reached, so no checkout was started and nothing was charged. Try again in a few minutes.',
            amount: typed,
          },
        },
        503,
      );
    }
  });

  // Automatic reload: the threshold, the amount and on/off (a card must be saved to turn it on).
  add('post', '/console/billing/auto-reload', async (page) => {
    const { stripe } = page.deps.config;
    const values = {
      threshold: page.form.get('threshold') ?? '',
      amount: page.form.get('amount') ?? '',
      enabled: page.form.get('enabled') === 'on',
    };
    const read = readReloadSettings(values.threshold, values.amount, {
      minCents: stripe.purchaseMinCents,
      maxCents: stripe.purchaseMaxCents,
    });
    if (!read.ok) return renderBilling(page, { reloadError: { fields: read.fields, values } }, 400);
    try {
      await saveAutoReloadSettings(page.deps, page.session.memberId, { ...read, enabled: values.enabled });
    } catch (err) {
      if (!(err instanceof NoCardSaved)) throw err;
      return renderBilling(
        page,
        {
          reloadError: {
            message: 'Save a card first: automatic reload charges the saved card.',
            fields: [],
            values,
          },
        },
        400,
      );
    }
    page.ctx.redirect(`/console/billing?reload=${values.enabled ? 'on' : 'off'}#auto-reload`);
  });

  // Save a card for automatic reload: a Checkout Session in setup mode, then to Stripe's page.
  add('post', '/console/billing/auto-reload/card', async (page) => {
    try {
      const { redirectUrl } = await startCardSetup(page.deps, page.session.memberId);
      page.ctx.status = 303;
      page.ctx.redirect(redirectUrl);
    } catch (err) {
      if (!(err instanceof StripeUnavailable)) throw err;
      const values = { threshold: '', amount: '', enabled: false };
      await renderBilling(
        page,
        {
          reloadError: {
            message:
              'Stripe, the payment provider, could not be reached, so no card was saved. Try again in a few minutes.',
            fields: [],
            values,
          },
        },
        503,
      );
    }
  });

  // The local stand-in for Stripe's hosted checkout page: never registered in production.
  if (!opts.localCheckout) return registerRest(add);
  // Pays a pending purchase, or refunds or disputes a paid one, as Stripe would.
  const showCheckout = async (page: ConsolePage, purchase: PurchaseRow, error?: string, status = 200) =>
    page.render(
      'local-checkout',
      { title: 'Local checkout', purchase, reversals: await localReversalsOf(page.deps, purchase), error },
      status,
    );
  add('get', '/console/billing/checkout/:id', async (page) => {
    const purchase = await getPurchase(page.deps, page.session.memberId, page.ctx.params.id);
    if (!purchase) return page.render('error', notFound(), 404);
    await showCheckout(page, purchase);
  });
  add('post', '/console/billing/checkout/:id', async (page) => {
    const purchase = await getPurchase(page.deps, page.session.memberId, page.ctx.params.id);
    if (!purchase) return page.render('error', notFound(), 404);
    const reversal = page.form.get('reversal');
    if (reversal !== null) {
      if (!(await localReversalsOf(page.deps, purchase)).includes(reversal as LocalReversal))
        return showCheckout(
          page,
          purchase,
          'That refund or dispute does not apply to this purchase as it stands.',
          400,
        );
      await reverseLocally(page.deps, purchase, reversal as LocalReversal);
      page.ctx.status = 303;
      page.ctx.redirect('/console/billing?checkout=reversal#purchases');
      return;
    }
    const payment = page.form.get('payment');
    if (purchase.kind !== 'checkout' || (payment !== 'card' && payment !== 'delayed_ok' && payment !== 'delayed_fail'))
      return showCheckout(page, purchase, 'Choose how to pay.', 400);
    await payLocally(page.deps, purchase, payment as LocalPayment);
    page.ctx.status = 303;
    page.ctx.redirect('/console/billing?checkout=success#purchases');
  });
  // The stand-in for Stripe's page that saves a card (a Checkout Session in setup mode).
  add('get', '/console/billing/card-setup/:id', async (page) => {
    const setup = await getCardSetup(page.deps, page.session.memberId, page.ctx.params.id);
    if (!setup) return page.render('error', notFound('There is no such card setup.'), 404);
    page.render('local-card-setup', { title: 'Local card setup', setup });
  });
  add('post', '/console/billing/card-setup/:id', async (page) => {
    const setup = await getCardSetup(page.deps, page.session.memberId, page.ctx.params.id);
    if (!setup) return page.render('error', notFound('There is no such card setup.'), 404);
    await saveCardLocally(page.deps, setup);
    page.ctx.status = 303;
    page.ctx.redirect('/console/billing?card=sent#auto-reload');
  });
  registerRest(add);
}

const notFound = (message = 'There is no such purchase.') => ({
  error: {
    status: 404,
    title: 'Not found',
    message,
    fields: [],
    action: null,
    code: null,
  },
  signedIn: true,
});

function registerRest(add: AddPage): void {
  add('get', '/console/agents', async (page) => {
    const list = await page.call('GET /v1/agents', { query: { limit: '100' } });
    page.render('agents', { title: 'Agents', list });
  });

  add('post', '/console/agents', async (page) => {
    const agent = await page.call('POST /v1/agents', {
      body: formFields(page.form, ['name', 'display_name', 'description']),
    });
    page.ctx.redirect(`/console/agents/${agent.id}`);
  });

  add('get', '/console/agents/:id', async (page) => {
    const params = { id: page.ctx.params.id };
    const agent = await page.call('GET /v1/agents/:id', { params });
    const [credentials, instructions, proposals, grants] = await Promise.all([
      page.call('GET /v1/agents/:id/credentials', { params }),
      page.call('GET /v1/agents/:id/instructions', { params }),
      page.call('GET /v1/agents/:id/instructions/proposals', { params, query: { status: 'pending' } }),
      listAgentGrants(page.deps, page.session.memberId, agent.id as string),
    ]);
    page.render('agent', {
      title: `Agent ${agent.name}`,
      agent,
      credentials,
      instructions,
      proposals,
      grants,
      scopes: SCOPES,
      done: done(page.ctx.query.done),
    });
  });

  add('post', '/console/agents/:id/credentials', async (page) => {
    const f = page.form;
    const body: Record<string, unknown> = {
      scopes: f.getAll('scopes'),
      environment: f.get('environment') || 'live',
      force_approval: f.get('force_approval') === 'on',
    };
    const days = formNumber(f.get('expires_in_days'));
    if (days !== undefined) body.expires_in_days = days;
    const max = formNumber(f.get('max_daily_pieces'));
    if (max !== undefined) body.max_daily_pieces = max;
    const credential = await page.call('POST /v1/agents/:id/credentials', { params: { id: page.ctx.params.id }, body });
    page.render('key-created', {
      title: 'New agent key',
      key: credential.key,
      what: `agent credential ${credential.key_prefix}…`,
      back: `/console/agents/${page.ctx.params.id}`,
    });
  });

  add('post', '/console/agents/:id/credentials/:credentialId/revoke', async (page) => {
    await page.call('DELETE /v1/agents/:id/credentials/:credentialId', {
      params: { id: page.ctx.params.id, credentialId: page.ctx.params.credentialId },
    });
    page.ctx.redirect(`/console/agents/${page.ctx.params.id}?done=revoked`);
  });

  // The agent is read through REST first, so another member's agent is a 404 as everywhere.
  add('post', '/console/agents/:id/grants/:grantId/revoke', async (page) => {
    const agent = await page.call('GET /v1/agents/:id', { params: { id: page.ctx.params.id } });
    const revoked = await revokeGrantAsOwner(
      page.deps,
      page.session.memberId,
      agent.id as string,
      page.ctx.params.grantId,
    );
    if (!revoked)
      return page.render(
        'error',
        { ...notFound(), error: { ...notFound().error, message: 'There is no such connection.' } },
        404,
      );
    page.ctx.redirect(`/console/agents/${agent.id}?done=grant_revoked#connections`);
  });

  add('post', '/console/agents/:id/instructions', async (page) => {
    await page.call('PUT /v1/agents/:id/instructions', {
      params: { id: page.ctx.params.id },
      body: {
        text: (page.form.get('text') ?? '').replace(/\r\n/g, '\n'),
        expected_version: formNumber(page.form.get('expected_version')),
      },
    });
    page.ctx.redirect(`/console/agents/${page.ctx.params.id}?done=saved`);
  });

  add('post', '/console/agents/:id/proposals/:proposalId', async (page) => {
    const decision = page.form.get('decision');
    const body: Record<string, unknown> = { decision };
    if (decision === 'accept') body.expected_version = formNumber(page.form.get('expected_version'));
    await page.call('POST /v1/agents/:id/instructions/proposals/:proposalId/decision', {
      params: { id: page.ctx.params.id, proposalId: page.ctx.params.proposalId },
      body,
    });
    page.ctx.redirect(`/console/agents/${page.ctx.params.id}?done=${decision === 'accept' ? 'accepted' : 'rejected'}`);
  });

  add('get', '/console/keys', async (page) => {
    const [keys, sessions] = await Promise.all([
      page.call('GET /v1/api-keys'),
      listConsoleSessions(page.deps, page.session.memberId),
    ]);
    page.render('keys', { title: 'Member keys', keys, sessions, done: done(page.ctx.query.done) });
  });

  add('post', '/console/keys', async (page) => {
    const body: Record<string, unknown> = { ...formFields(page.form, ['name', 'environment']) };
    const days = formNumber(page.form.get('expires_in_days'));
    if (days !== undefined) body.expires_in_days = days;
    const key = await page.call('POST /v1/api-keys', { body });
    page.render('key-created', {
      title: 'New member key',
      key: key.key,
      what: `member key “${key.name}”`,
      back: '/console/keys',
    });
  });

  add('post', '/console/keys/:id/rotate', async (page) => {
    const rotated = await page.call<{ api_key: { key: string; name: string }; rotated_key: { key_prefix: string } }>(
      'POST /v1/api-keys/:id/rotate',
      { params: { id: page.ctx.params.id } },
    );
    page.render('key-created', {
      title: 'Rotated member key',
      key: rotated.api_key.key,
      what: `member key “${rotated.api_key.name}” (it replaces ${rotated.rotated_key.key_prefix}…, which is refused from now on)`,
      back: '/console/keys',
    });
  });

  add('post', '/console/keys/:id/revoke', async (page) => {
    await page.call('DELETE /v1/api-keys/:id', { params: { id: page.ctx.params.id } });
    page.ctx.redirect('/console/keys?done=revoked');
  });

  add('post', '/console/sessions/:id/revoke', async (page) => {
    await revokeConsoleSession(page.deps, page.session.memberId, page.ctx.params.id);
    page.ctx.redirect('/console/keys?done=session_revoked');
  });
}
