// Webhook pages: the custom endpoints (create, edit, verify, send a test event, rotate the
// signing secret, delete), each endpoint's delivery log with the replay of a failed delivery
// (the REST replay: fresh timestamp and signature), and the agent webhook log. Every action
// runs its REST route; a new or rotated secret is shown once, in the answer to its form.
// A changed URL pauses an active endpoint until the new URL answers a verification challenge
// (the spec's "needs re-verification"), so the console sends that challenge right after saving.
import type { AddPage } from '../framework';
import { type ConsolePage, describeError } from '../framework';
import { ApiError } from '../../../domain/shared/errors';
import { BATCH_EVENT_TYPES, INBOUND_EVENT_TYPES, MAIL_EVENT_TYPES } from '../../../domain/webhooks/events';

interface Endpoint {
  id: string;
  name: string;
  url: string;
  status: 'pending' | 'active' | 'paused';
  paused_reason: string | null;
  environment: 'live' | 'sandbox';
  scope: 'account' | 'agent';
  agent_id: string | null;
  event_types: string[];
}

interface DeliveryResult {
  delivered: boolean;
  status_code: number | null;
  error: string | null;
  delivery: { id: string };
  verification?: boolean;
}

/** The subscription choices: everything, each family, and each event type of the family. */
const EVENT_GROUPS = [
  { family: 'mail.*', label: 'Outbound mail', types: MAIL_EVENT_TYPES },
  { family: 'batch.*', label: 'Batches', types: BATCH_EVENT_TYPES },
  { family: 'inbound.*', label: 'Inbound', types: INBOUND_EVENT_TYPES },
];

/** What the form sent, to show it again beside its refusal. */
interface EndpointForm {
  name: string;
  url: string;
  agent_id: string;
  event_types: string[];
}

/** A refusal shown on its form: each field's messages under the field, the rest above the form. */
interface FormErrors {
  title: string;
  message: string;
  /** Messages by form field (name, url, event_types, agent_id), each with the API's dot-path. */
  byField: Record<string, { path: string; message: string }[]>;
  /** Every field message, for the summary at the top of the form. */
  fields: { path: string; message: string }[];
  action: string | null;
  code: string | null;
}

function formErrors(err: ApiError): FormErrors {
  const d = describeError(err);
  const byField: FormErrors['byField'] = {};
  for (const f of d.fields) {
    const field = f.path.split('.')[0];
    (byField[field] ??= []).push(f);
  }
  return { title: d.title, message: d.message, byField, fields: d.fields, action: d.action, code: d.code };
}

/** Refusals a form can show next to what was typed: validation, limits, permissions. Anything else is the error page. */
const shownOnForm = (err: unknown): err is ApiError =>
  err instanceof ApiError && [400, 403, 409, 422].includes(err.status);

function readEndpointForm(page: ConsolePage): EndpointForm {
  const f = page.form;
  return {
    name: (f.get('name') ?? '').trim(),
    url: (f.get('url') ?? '').trim(),
    agent_id: (f.get('agent_id') ?? '').trim(),
    event_types: f.getAll('event_types'),
  };
}

const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  verified: 'Verified: the endpoint answered the challenge and is active. Events are delivered to it from now on.',
  verify_failed:
    'Not verified: the endpoint did not answer the challenge, so it receives nothing yet. Make it reply to webhook.endpoint_verification with {"challenge": "<data.challenge>"}, then verify again.',
  tested: 'Test event delivered: the endpoint accepted the signed webhook.test event.',
  test_failed: 'The test event was not delivered.',
  url_changed_verified:
    'Saved. The URL changed, so the endpoint was paused until the new URL proved it is yours: it answered the verification challenge, and the endpoint is active again.',
  url_changed_unverified:
    'Saved. The URL changed, so the endpoint is paused until the new URL answers a verification challenge, and it did not answer the one sent just now. Events are not delivered meanwhile (nor kept for later); verify again once the receiver at the new URL is ready.',
  replayed: 'Replay queued: the delivery is sent again with a fresh timestamp and signature.',
  deleted: 'The endpoint was deleted with its rules and delivery history.',
};

/** The agents to scope a new endpoint to, and every agent's name for showing a scope. */
async function agentNames(page: ConsolePage): Promise<{ id: string; name: string }[]> {
  const { agents } = await page.call<{ agents: { id: string; name: string; display_name: string | null }[] }>(
    'GET /v1/agents',
    { query: { limit: '100' } },
  );
  return agents.map((a) => ({ id: a.id, name: a.display_name ?? a.name }));
}

async function renderList(page: ConsolePage, form?: EndpointForm, errors?: FormErrors, status = 200) {
  const [endpoints, events, agents] = await Promise.all([
    page.call<{ endpoints: Endpoint[] }>('GET /v1/webhook-endpoints'),
    page.call('GET /v1/webhooks/events', { query: { limit: '20' } }),
    agentNames(page),
  ]);
  const done = typeof page.ctx.query.done === 'string' ? NOTICES[page.ctx.query.done] : undefined;
  page.render(
    'webhooks',
    {
      title: 'Webhooks',
      endpoints,
      events,
      agents,
      groups: EVENT_GROUPS,
      form: form ?? { name: '', url: '', agent_id: '', event_types: ['*'] },
      errors,
      done,
    },
    status,
  );
}

/** The notice after an action: its words, and what the endpoint answered when it failed. */
async function notice(page: ConsolePage): Promise<{ text: string; answer?: string; ok: boolean } | undefined> {
  const done = typeof page.ctx.query.done === 'string' ? page.ctx.query.done : '';
  const text = NOTICES[done];
  if (!text) return undefined;
  const ok = !['verify_failed', 'test_failed', 'url_changed_unverified'].includes(done);
  const deliveryId = page.ctx.query.delivery;
  if (ok || typeof deliveryId !== 'string' || !/^[0-9a-f-]{36}$/i.test(deliveryId)) return { text, ok };
  try {
    const { delivery } = await page.call<{
      delivery: { last_status_code: number | null; last_error: string | null; endpoint_id: string | null };
    }>('GET /v1/webhook-deliveries/:id', { params: { id: deliveryId } });
    if (delivery.endpoint_id !== page.ctx.params.id) return { text, ok };
    const answer = [delivery.last_status_code ? `HTTP ${delivery.last_status_code}` : null, delivery.last_error]
      .filter(Boolean)
      .join(': ');
    return { text, ok, answer: answer || undefined };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { text, ok };
    throw err;
  }
}

async function renderEndpoint(page: ConsolePage, form?: EndpointForm, errors?: FormErrors, status = 200) {
  const params = { id: page.ctx.params.id };
  const query =
    typeof page.ctx.query.status === 'string' && page.ctx.query.status ? { status: page.ctx.query.status } : {};
  const [{ endpoint }, deliveries, agents] = await Promise.all([
    page.call<{ endpoint: Endpoint }>('GET /v1/webhook-endpoints/:id', { params }),
    page.call('GET /v1/webhook-endpoints/:id/deliveries', { params, query: { limit: '50', ...query } }),
    agentNames(page),
  ]);
  page.render(
    'webhook-endpoint',
    {
      title: `Endpoint ${endpoint.name}`,
      endpoint,
      deliveries,
      agentName: agents.find((a) => a.id === endpoint.agent_id)?.name ?? null,
      groups: EVENT_GROUPS,
      form: form ?? { name: endpoint.name, url: endpoint.url, agent_id: '', event_types: endpoint.event_types },
      errors,
      notice: errors ? undefined : await notice(page),
    },
    status,
  );
}

/** Where an action that sent something lands: its outcome, and the delivery to read the answer from. */
function landing(id: string, done: string, result?: DeliveryResult): string {
  const delivery = result && !result.delivered ? `&delivery=${result.delivery.id}` : '';
  return `/console/webhooks/${id}?done=${done}${delivery}#outcome`;
}

export function webhookPages(add: AddPage): void {
  add('get', '/console/webhooks', (page) => renderList(page));

  add('post', '/console/webhooks', async (page) => {
    const form = readEndpointForm(page);
    const body: Record<string, unknown> = { name: form.name, url: form.url, event_types: form.event_types };
    if (form.agent_id) body.agent_id = form.agent_id;
    let created: { endpoint: Endpoint; secret: string };
    try {
      created = await page.call('POST /v1/webhook-endpoints', { body });
    } catch (err) {
      if (!shownOnForm(err)) throw err;
      return renderList(page, form, formErrors(err), err.status);
    }
    page.render('webhook-secret', {
      title: 'New webhook endpoint',
      endpoint: created.endpoint,
      secret: created.secret,
      created: true,
    });
  });

  add('get', '/console/webhooks/:id', (page) => renderEndpoint(page));

  add('post', '/console/webhooks/:id', async (page) => {
    const params = { id: page.ctx.params.id };
    // Read first: another member's endpoint is a 404 whatever the form holds.
    const { endpoint } = await page.call<{ endpoint: Endpoint }>('GET /v1/webhook-endpoints/:id', { params });
    const form = readEndpointForm(page);
    const urlChanged = form.url !== endpoint.url;
    const body: Record<string, unknown> = { name: form.name, event_types: form.event_types };
    if (urlChanged) body.url = form.url;
    let saved: Endpoint;
    try {
      saved = (await page.call<{ endpoint: Endpoint }>('PATCH /v1/webhook-endpoints/:id', { params, body })).endpoint;
    } catch (err) {
      if (!shownOnForm(err)) throw err;
      return renderEndpoint(page, form, formErrors(err), err.status);
    }
    if (!urlChanged) return page.ctx.redirect(`/console/webhooks/${saved.id}?done=saved#outcome`);
    const verification = await page.call<DeliveryResult & { verified: boolean }>(
      'POST /v1/webhook-endpoints/:id/verify',
      { params },
    );
    page.ctx.redirect(
      landing(saved.id, verification.verified ? 'url_changed_verified' : 'url_changed_unverified', verification),
    );
  });

  add('post', '/console/webhooks/:id/verify', async (page) => {
    const params = { id: page.ctx.params.id };
    const result = await page.call<DeliveryResult & { verified: boolean }>('POST /v1/webhook-endpoints/:id/verify', {
      params,
    });
    page.ctx.redirect(landing(params.id, result.verified ? 'verified' : 'verify_failed', result));
  });

  // A signed webhook.test event; on an endpoint that is not active the REST route runs the verification instead.
  add('post', '/console/webhooks/:id/test', async (page) => {
    const params = { id: page.ctx.params.id };
    const result = await page.call<DeliveryResult>('POST /v1/webhook-endpoints/:id/test', { params });
    const done = result.verification
      ? result.delivered
        ? 'verified'
        : 'verify_failed'
      : result.delivered
        ? 'tested'
        : 'test_failed';
    page.ctx.redirect(landing(params.id, done, result));
  });

  add('post', '/console/webhooks/:id/rotate-secret', async (page) => {
    const rotated = await page.call<{ endpoint: Endpoint; secret: string }>(
      'POST /v1/webhook-endpoints/:id/rotate-secret',
      { params: { id: page.ctx.params.id } },
    );
    page.render('webhook-secret', {
      title: 'New signing secret',
      endpoint: rotated.endpoint,
      secret: rotated.secret,
      created: false,
    });
  });

  add('post', '/console/webhooks/:id/delete', async (page) => {
    await page.call('DELETE /v1/webhook-endpoints/:id', { params: { id: page.ctx.params.id } });
    page.ctx.redirect('/console/webhooks?done=deleted');
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
