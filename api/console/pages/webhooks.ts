// Webhook pages: the custom endpoints with their delivery logs, a failed delivery's
// replay (the REST replay: fresh timestamp and signature), and the agent webhook log.
import type { AddPage } from '../index';

export function webhookPages(add: AddPage): void {
  add('get', '/console/webhooks', async (page) => {
    const [endpoints, events] = await Promise.all([
      page.call('GET /v1/webhook-endpoints'),
      page.call('GET /v1/webhooks/events', { query: { limit: '20' } }),
    ]);
    page.render('webhooks', { title: 'Webhooks', endpoints, events });
  });

  add('get', '/console/webhooks/:id', async (page) => {
    const params = { id: page.ctx.params.id };
    const status =
      typeof page.ctx.query.status === 'string' && page.ctx.query.status ? { status: page.ctx.query.status } : {};
    const [{ endpoint }, deliveries] = await Promise.all([
      page.call<{ endpoint: { name: string | null; url: string } }>('GET /v1/webhook-endpoints/:id', { params }),
      page.call('GET /v1/webhook-endpoints/:id/deliveries', { params, query: { limit: '50', ...status } }),
    ]);
    const done =
      page.ctx.query.done === 'replayed'
        ? 'Replay queued: the delivery is sent again with a fresh timestamp and signature.'
        : undefined;
    page.render('webhook-endpoint', { title: `Endpoint ${endpoint.name ?? endpoint.url}`, endpoint, deliveries, done });
  });

  add('post', '/console/webhook-deliveries/:id/replay', async (page) => {
    const { delivery } = await page.call<{ delivery: { endpoint_id: string | null } }>(
      'POST /v1/webhook-deliveries/:id/replay',
      { params: { id: page.ctx.params.id } },
    );
    page.ctx.redirect(
      delivery.endpoint_id ? `/console/webhooks/${delivery.endpoint_id}?done=replayed` : '/console/webhooks',
    );
  });
}
