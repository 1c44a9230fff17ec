// Outbound pages: the overview, the approvals queue (document pages, recipient, cost,
// the agent that asked; approve and reject through the same workflow update as REST),
// one page of a document at full width, the mail list with GET /v1/mail's filters, one
// piece with its history, and batches.
import type { AddPage } from '../framework';
import type { ConsolePage } from '../framework';
import { mailHistory } from '../../../services/outbound-mail/history';
import { hasPageImages, mailDocumentPage } from '../../../services/outbound-mail/document-previews';
import { MAIL_STATUSES } from '../../../domain/workflow-safe/mail-rules';
import { errors } from '../../../domain/shared/errors';

const MAIL_FILTERS = [
  'q',
  'status',
  'created_after',
  'created_before',
  'agent_id',
  'test_mode',
  'limit',
  'offset',
] as const;

/** agent id -> name, for showing which agent asked. */
async function agentNames(page: ConsolePage): Promise<Record<string, string>> {
  const { agents } = await page.call<{ agents: { id: string; name: string; display_name: string | null }[] }>(
    'GET /v1/agents',
    { query: { limit: '100' } },
  );
  return Object.fromEntries(
    agents.map((a: { id: string; name: string; display_name: string | null }) => [a.id, a.display_name ?? a.name]),
  );
}

function startOfTodayUtc(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
}

interface MailForPages {
  id: string;
  status: string;
  human_review: {
    send_to: { name: string | null; company: string | null };
    document: { type: string; page_count: number; filename: string | null };
  };
}

const DONE: Record<string, string> = {
  approved: 'Approved: the piece was charged and submitted for printing.',
  rejected: 'Rejected: the piece was cancelled and nothing was charged.',
  cancelled: 'Cancelled.',
};

export function mailPages(add: AddPage): void {
  add('get', '/console', async (page) => {
    const [credits, today, month, pending, agents] = await Promise.all([
      page.call('GET /v1/credits'),
      page.call('GET /v1/usage', { query: { period_start: startOfTodayUtc() } }),
      page.call('GET /v1/usage'),
      page.call('GET /v1/mail', { query: { status: 'pending_approval', limit: '5' } }),
      agentNames(page),
    ]);
    page.render('overview', { title: 'Overview', credits, today, month, pending, agents });
  });

  add('get', '/console/approvals', async (page) => {
    const offset = typeof page.ctx.query.offset === 'string' ? page.ctx.query.offset : '0';
    const [pending, agents] = await Promise.all([
      page.call('GET /v1/mail', { query: { status: 'pending_approval', limit: '20', offset } }),
      agentNames(page),
    ]);
    const done = typeof page.ctx.query.done === 'string' ? DONE[page.ctx.query.done] : undefined;
    page.render('approvals', { title: 'Approvals', pending, agents, done, hasPageImages });
  });

  const decide = (action: 'approve' | 'reject') => async (page: ConsolePage) => {
    const id = page.ctx.params.id;
    await page.call(`POST /v1/mail/:id/${action}`, { params: { id } });
    const back = page.form.get('back') === 'detail' ? `/console/mail/${id}` : '/console/approvals';
    page.ctx.redirect(`${back}?done=${action === 'approve' ? 'approved' : 'rejected'}`);
  };
  add('post', '/console/mail/:id/approve', decide('approve'));
  add('post', '/console/mail/:id/reject', decide('reject'));
  add('post', '/console/mail/:id/cancel', async (page) => {
    await page.call('DELETE /v1/mail/:id', { params: { id: page.ctx.params.id } });
    page.ctx.redirect(`/console/mail/${page.ctx.params.id}?done=cancelled`);
  });

  add('get', '/console/mail', async (page) => {
    const filters: Record<string, string> = {};
    for (const name of MAIL_FILTERS) {
      const v = page.ctx.query[name];
      if (typeof v === 'string' && v.trim() !== '') filters[name] = v.trim();
    }
    const [list, agents] = await Promise.all([page.call('GET /v1/mail', { query: filters }), agentNames(page)]);
    page.render('mail-list', { title: 'Mail', list, filters, agents, statuses: MAIL_STATUSES });
  });

  add('get', '/console/mail/:id', async (page) => {
    const id = page.ctx.params.id;
    const mail = await page.call<{ id: string; human_review: { document: { type: string } } }>('GET /v1/mail/:id', {
      params: { id },
    });
    const [history, agents] = await Promise.all([mailHistory(page.deps, page.session.auth, id), agentNames(page)]);
    const done = typeof page.ctx.query.done === 'string' ? DONE[page.ctx.query.done] : undefined;
    page.render('mail-detail', {
      title: `Mail ${mail.id.slice(0, 8)}`,
      mail,
      history,
      agents,
      done,
      pageImages: hasPageImages(mail.human_review.document.type),
    });
  });

  // A page image: N.png, the preview; N.png?size=full, the image the full-width page shows.
  add('get', '/console/mail/:id/pages/:page', async (page) => {
    const id = page.ctx.params.id;
    await page.call('GET /v1/mail/:id', { params: { id } }); // the REST visibility check, and a 404 for a malformed id
    const n = Number(page.ctx.params.page.replace(/\.png$/, ''));
    const size = page.ctx.query.size === 'full' ? 'full' : 'preview';
    const preview = await mailDocumentPage(page.deps, page.session.auth, id, n, size);
    page.ctx.type = preview.contentType;
    page.ctx.set('Cache-Control', 'private, max-age=3600');
    page.ctx.body = preview.body;
  });

  // One page of the document at the full width of the screen, opened from Approvals or the letter's page.
  add('get', '/console/mail/:id/pages/:page/full', async (page) => {
    const id = page.ctx.params.id;
    const mail = await page.call<MailForPages>('GET /v1/mail/:id', { params: { id } });
    const doc = mail.human_review.document;
    const n = /^\d{1,4}$/.test(page.ctx.params.page) ? Number(page.ctx.params.page) : NaN;
    if (!hasPageImages(doc.type) || !(n >= 1 && n <= doc.page_count))
      throw errors.notFound(hasPageImages(doc.type) ? 'Page' : 'Page image');
    const from = page.ctx.query.from === 'approvals' ? 'approvals' : 'detail';
    page.render('mail-page', {
      title: `Page ${n} of ${doc.page_count} · letter to ${mail.human_review.send_to.name ?? mail.human_review.send_to.company ?? ''}`,
      mail,
      n,
      from,
      back:
        from === 'approvals'
          ? { href: '/console/approvals', label: 'Approvals' }
          : { href: `/console/mail/${id}`, label: 'The letter' },
    });
  });

  add('get', '/console/batches', async (page) => {
    const offset = typeof page.ctx.query.offset === 'string' ? page.ctx.query.offset : '0';
    const [list, agents] = await Promise.all([
      page.call('GET /v1/batch-mail', { query: { limit: '20', offset } }),
      agentNames(page),
    ]);
    page.render('batches', { title: 'Batches', list, agents });
  });

  add('get', '/console/batches/:id', async (page) => {
    const detail = await page.call<{ batch: { job_name: string } }>('GET /v1/batch-mail/:id', {
      params: { id: page.ctx.params.id },
    });
    page.render('batch-detail', { title: `Batch ${detail.batch.job_name}`, detail });
  });
}
