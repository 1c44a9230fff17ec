// Inbound pages: handling proposals waiting for the owner (approve or reject through the
// same handling workflow as REST, with the version the owner saw), and physical inbound
// items with their photos, scans and OCR text (shown as text: it is untrusted content).
import { ApiError } from '../../../domain/shared/errors';
import type { AddPage } from '../framework';
import { formNumber } from '../framework';

const DONE: Record<string, string> = {
  approved: 'Approved: the facility will carry it out.',
  rejected: 'Rejected: nothing will be done and nothing is charged.',
};

export function inboundPages(add: AddPage): void {
  add('get', '/console/inbound', async (page) => {
    const status =
      typeof page.ctx.query.status === 'string' && page.ctx.query.status
        ? page.ctx.query.status
        : 'awaiting_member_approval';
    const q = typeof page.ctx.query.q === 'string' ? page.ctx.query.q.trim() : '';
    const [handling, items] = await Promise.all([
      page.call('GET /v1/handling', { query: { status, limit: '50' } }),
      page.call('GET /v1/inbound-items', { query: { limit: '25', ...(q ? { q } : {}) } }),
    ]);
    const done = typeof page.ctx.query.done === 'string' ? DONE[page.ctx.query.done] : undefined;
    page.render('inbound', { title: 'Inbound', handling, items, status, q, done });
  });

  add('post', '/console/handling/:id/approve', async (page) => {
    await page.call('POST /v1/handling/:id/approve', {
      params: { id: page.ctx.params.id },
      body: {
        expected_version: formNumber(page.form.get('expected_version')),
        destructive_confirmed: page.form.get('destructive_confirmed') === 'on',
      },
    });
    page.ctx.redirect('/console/inbound?done=approved');
  });

  add('post', '/console/handling/:id/reject', async (page) => {
    const reason = page.form.get('reason')?.trim();
    await page.call('POST /v1/handling/:id/reject', {
      params: { id: page.ctx.params.id },
      body: { expected_version: formNumber(page.form.get('expected_version')), ...(reason ? { reason } : {}) },
    });
    page.ctx.redirect('/console/inbound?done=rejected');
  });

  add('get', '/console/inbound/:id', async (page) => {
    const params = { id: page.ctx.params.id };
    const item = await page.call<{ item?: { reference_code?: string }; reference_code?: string }>(
      'GET /v1/inbound-items/:id',
      { params },
    );
    const [scans, pages] = await Promise.all([
      page.call('GET /v1/inbound-items/:id/scans', { params }),
      page.call('GET /v1/inbound-items/:id/pages', { params, query: { limit: '50' } }),
    ]);
    // Photos are a package read; an account without packages still sees the scans' text.
    let photos: { photos: Array<{ url: string; photo_type?: string }> } | null = null;
    let photosNote: string | null = null;
    try {
      photos = await page.call('GET /v1/packages/:id/photos', { params });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      photosNote = err.message;
    }
    page.render('inbound-item', {
      title: `Inbound ${item.item?.reference_code ?? item.reference_code ?? ''}`,
      item: item.item ?? item,
      scans,
      pages,
      photos,
      photosNote,
    });
  });
}
