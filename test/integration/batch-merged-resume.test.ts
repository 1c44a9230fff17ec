// A merged batch's rendering continues where it stopped: the render activity saves each
// chunk of rows' outcomes as it goes, so when it dies half-way (here its heartbeat throws
// after the first save, as a killed worker's activity stops), the next attempt renders only
// the rows without an outcome, and the finished batch is a draft of every row. No worker runs
// in this app: the test plays the render workflow's steps itself.
import { useTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { finishMergedRendering, renderMergedRows } from '../../services/batches/merged';

const TEMPLATE = '<!DOCTYPE html><html><body><h1>Hello {{first_name}}</h1></body></html>';

function csv(rows: number): Buffer {
  const lines = ['name,address,city,state,zip,first_name'];
  for (let i = 1; i <= rows; i++) lines.push(`Recipient ${i},${i} Main St,Austin,TX,78701,Ada${i}`);
  return Buffer.from(lines.join('\n') + '\n');
}

describe('merged batch rendering after a stop', () => {
  const { app, api } = useTestApp({ worker: false });

  it('renders only the rows without an outcome on the next attempt', async () => {
    const member = await newMember(app.deps, { creditsCents: 0 });
    const form = new FormData();
    for (const [k, v] of Object.entries({ job_name: 'Resume', mail_type: 'letter', mailing_class: 'first_class' }))
      form.append(k, v);
    form.append('template', new Blob([TEMPLATE], { type: 'text/html' }), 'letter.html');
    form.append('recipients', new Blob([new Uint8Array(csv(70))], { type: 'text/csv' }), 'recipients.csv');
    const res = await api('POST', '/v1/batch-mail', { key: member.key, form });
    expect(res.status).toBe(201);
    const id = res.body.batch.id;
    expect(res.body.batch).toMatchObject({ status: 'rendering', merge: { rows_to_render: 70, rows_rendered: 0 } });

    const stop = new Error('worker stopped');
    await expect(
      renderMergedRows(app.deps, id, () => {
        throw stop;
      }),
    ).rejects.toBe(stop);
    const saved: { seq: number; document_key: string }[] = await app.deps.db.query(
      `SELECT seq, document_key FROM batch_recipients WHERE batch_id = $1 AND render_status IS NOT NULL ORDER BY seq`,
      [id],
    );
    expect(saved.map((r) => r.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const mid = await api('GET', `/v1/batch-mail/${id}`, { key: member.key });
    expect(mid.body.batch).toMatchObject({ status: 'rendering', merge: { rows_rendered: 50 } });

    const progress: number[] = [];
    expect(await renderMergedRows(app.deps, id, (n) => progress.push(n))).toEqual({ remaining: 0 });
    // One save: the 20 rows left, not the 50 already done.
    expect(progress).toEqual([70]);
    const after: { seq: number; document_key: string }[] = await app.deps.db.query(
      `SELECT seq, document_key FROM batch_recipients WHERE batch_id = $1 AND seq <= 50 ORDER BY seq`,
      [id],
    );
    expect(after).toEqual(saved);

    const row = await finishMergedRendering(app.deps, id);
    expect(row).toMatchObject({ status: 'draft', valid: 70, skipped: 0, page_count: 1, rows_rendered: 70 });
  });
});
