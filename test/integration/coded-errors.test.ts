// The coded mail and batch refusals that used to go out without retryable or
// suggested_action, over HTTP: cancelling and advancing a piece whose workflow has closed,
// a batch template over 200 pages, and batch state conflicts (facility and workflow).
import { useTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { insertMemberKey } from '../../services/accounts/accounts';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import { batchForm, ensureFacility, facilityKeyFor, pdf, recipientsCsv, waitForStatus } from './batch-helpers';
import { waitFor } from './mail-helpers';

function expectCoded(res: { status: number; body: Record<string, unknown> }, status: number, code: string): void {
  expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
  expect(res.body.retryable).toBe(false);
  expect(res.body.suggested_action).toEqual(expect.any(String));
}

describe('coded mail and batch errors carry code, retryable and suggested_action', () => {
  const { app, api } = useTestApp();
  let testKey: string;
  let liveKey: string;

  beforeAll(async () => {
    const member = await newMember(app.deps, { creditsCents: 100000 });
    liveKey = member.key;
    testKey = (await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' })).key;
    await api('POST', '/v1/agents', { key: liveKey, json: { name: 'coded-errors' } });
    await ensureFacility(app.deps);
  });

  it("MAIL_NOT_CANCELLABLE and MAIL_STATE_CONFLICT once the piece's workflow has closed", async () => {
    const created = await api('POST', '/v1/test/mail', {
      key: testKey,
      json: {
        recipient_name: 'Jane Doe',
        recipient_line1: '1 Main St',
        recipient_city: 'Austin',
        recipient_state: 'TX',
        recipient_zip: '78701',
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    for (const status of ['ready', 'mailed', 'delivered']) {
      expect((await api('POST', `/v1/test/mail/${id}/advance`, { key: testKey })).body.status).toBe(status);
    }
    const handle = app.deps.temporal.workflow.getHandle(outboundMailWorkflowId(id));
    await waitFor(async () => (await handle.describe()).status.name === 'COMPLETED', 'the piece workflow to close');

    expectCoded(await api('DELETE', `/v1/mail/${id}`, { key: testKey }), 409, 'MAIL_NOT_CANCELLABLE');
    expectCoded(await api('POST', `/v1/test/mail/${id}/advance`, { key: testKey }), 409, 'MAIL_STATE_CONFLICT');
    expectCoded(await api('POST', `/v1/mail/${id}/approve`, { key: testKey }), 409, 'MAIL_NOT_PENDING_APPROVAL');
  });

  it('MAIL_STATE_CONFLICT from the running workflow (advancing a piece that awaits approval)', async () => {
    const created = await api('POST', '/v1/test/mail', {
      key: testKey,
      json: {
        recipient_name: 'Jim Doe',
        recipient_line1: '2 Main St',
        recipient_city: 'Austin',
        recipient_state: 'TX',
        recipient_zip: '78701',
        requires_approval: true,
      },
    });
    expect(created.body.status).toBe('pending_approval');
    expectCoded(
      await api('POST', `/v1/test/mail/${created.body.id}/advance`, { key: testKey }),
      409,
      'MAIL_STATE_CONFLICT',
    );
  });

  it('BATCH_TEMPLATE_PAGES_INVALID for a template over 200 pages', async () => {
    const res = await api('POST', '/v1/batch-mail', {
      key: testKey,
      form: batchForm(await pdf(201), recipientsCsv(3), { mail_type: 'pamphlet_heavy' }),
    });
    expectCoded(res, 400, 'BATCH_TEMPLATE_PAGES_INVALID');
    expect(res.body.fields).toEqual([{ path: 'template', message: expect.any(String) }]);
  });

  it('BATCH_STATE_CONFLICT when the facility finishes a batch it has not started', async () => {
    const draft = await api('POST', '/v1/batch-mail', {
      key: liveKey,
      form: batchForm(await pdf(1), recipientsCsv(3)),
    });
    expect(draft.status).toBe(201);
    const id = draft.body.batch.id;
    expect((await api('POST', `/v1/batch-mail/${id}/confirm`, { key: liveKey })).status).toBe(200);
    await waitForStatus(app.baseUrl, liveKey, id, ['submitted']);
    const [{ facility_id: facilityId }] = await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [
      id,
    ]);
    const facilityKey = await facilityKeyFor(app.deps, facilityId);
    expectCoded(
      await api('POST', `/v1/facility/batches/${id}/finish`, { key: facilityKey, json: {} }),
      409,
      'BATCH_STATE_CONFLICT',
    );
    expectCoded(
      await api('POST', `/v1/facility/batches/${id}/pieces`, {
        key: facilityKey,
        json: { status: 'mailed', sequences: [1] },
      }),
      409,
      'BATCH_STATE_CONFLICT',
    );
  });
});
