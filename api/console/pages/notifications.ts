// The Notifications page: the low-balance threshold, the kinds each recipient receives
// (the owner and extra recipients), adding a recipient (it confirms by its own emailed
// link) and removing one. Every change runs its REST route (/v1/notifications/...).
import type { AddPage } from '../framework';
import { errors } from '../../../domain/shared/errors';
import { NOTIFICATION_KINDS } from '../../../domain/notifications/kinds';
import { readDollarAmount } from '../../../domain/billing/purchases';

/** $100,000: a threshold typed on the page is in dollars. */
const MAX_THRESHOLD_CENTS = 10_000_000;

const DONE: Record<string, string> = {
  threshold: 'Saved the low-balance threshold.',
  kinds: 'Saved what this recipient is told.',
  added: 'Added. A confirmation link was emailed to the address: it receives nothing until it is opened.',
  removed: 'Removed: the address receives nothing more.',
};

export function notificationPages(add: AddPage): void {
  add('get', '/console/notifications', async (page) => {
    const settings = await page.call('GET /v1/notifications/settings');
    const done = typeof page.ctx.query.done === 'string' ? DONE[page.ctx.query.done] : undefined;
    page.render('notifications', { title: 'Notifications', settings, done });
  });

  add('post', '/console/notifications/threshold', async (page) => {
    const reading = readDollarAmount(page.form.get('threshold'), 0, MAX_THRESHOLD_CENTS);
    if (!reading.ok) throw errors.validation([{ path: 'low_balance_threshold_cents', message: reading.message }]);
    await page.call('PATCH /v1/notifications/settings', { body: { low_balance_threshold_cents: reading.cents } });
    page.ctx.redirect('/console/notifications?done=threshold');
  });

  add('post', '/console/notifications/recipients', async (page) => {
    await page.call('POST /v1/notifications/recipients', { body: { email: (page.form.get('email') ?? '').trim() } });
    page.ctx.redirect('/console/notifications?done=added');
  });

  add('post', '/console/notifications/recipients/:id/kinds', async (page) => {
    const on = new Set(page.form.getAll('kinds'));
    await page.call('PATCH /v1/notifications/recipients/:id', {
      params: { id: page.ctx.params.id },
      body: { kinds: Object.fromEntries(NOTIFICATION_KINDS.map((k) => [k, on.has(k)])) },
    });
    page.ctx.redirect('/console/notifications?done=kinds');
  });

  add('post', '/console/notifications/recipients/:id/remove', async (page) => {
    await page.call('DELETE /v1/notifications/recipients/:id', { params: { id: page.ctx.params.id } });
    page.ctx.redirect('/console/notifications?done=removed');
  });
}
