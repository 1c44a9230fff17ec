// Support pages: the member's tickets, one conversation with the answers, a reply, and
// a new ticket. Each form carries a fresh Idempotency-Key, so a double submit is one message.
import { randomUUID } from 'node:crypto';
import { SUPPORT_CATEGORIES } from '../../../domain/support/conversations';
import type { AddPage } from '../framework';

export function supportPages(add: AddPage): void {
  add('get', '/console/support', async (page) => {
    const list = await page.call('GET /v1/support/conversations', { query: { limit: '50' } });
    page.render('support', { title: 'Support', list, categories: SUPPORT_CATEGORIES, idem: randomUUID() });
  });

  add('post', '/console/support', async (page) => {
    const { message } = await page.call<{ message: { conversation_id: string } }>('POST /v1/support/messages', {
      body: { category: page.form.get('category') || undefined, body: page.form.get('body') ?? '' },
      headers: { 'idempotency-key': page.form.get('idem') || undefined },
    });
    page.ctx.redirect(`/console/support/${message.conversation_id}`);
  });

  add('get', '/console/support/:id', async (page) => {
    const thread = await page.call<{ conversation: { support_case_id: string } }>(
      'GET /v1/support/conversations/:id/messages',
      { params: { id: page.ctx.params.id }, query: { limit: '100' } },
    );
    page.render('support-thread', {
      title: `Ticket ${thread.conversation.support_case_id}`,
      thread,
      idem: randomUUID(),
    });
  });

  add('post', '/console/support/:id', async (page) => {
    await page.call('POST /v1/support/conversations/:id/messages', {
      params: { id: page.ctx.params.id },
      body: { body: page.form.get('body') ?? '' },
      headers: { 'idempotency-key': page.form.get('idem') || undefined },
    });
    page.ctx.redirect(`/console/support/${page.ctx.params.id}`);
  });
}
