// A letter from facility receipt to the agent's context with OCR, an acknowledgment, and
// a forward proposal approved by the owner and completed by the facility with tracking.
import { execFileSync } from 'node:child_process';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { eventsOf, fixtureImage, newWorld, photoForm, waitFor, World } from '../helpers/physical-inbound';
import { getBalance } from '../../services/billing/credits';

function tesseractInstalled(): boolean {
  try {
    execFileSync(process.env.TESSERACT_PATH ?? 'tesseract', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('physical inbound: facility receipt to agent outcome and forwarding', () => {
  let app: TestApp;
  let w: World;
  let api: ReturnType<typeof client>;
  const agentHeaders = { 'x-service-md-version': '1' };

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    w = await newWorld(app);
  });
  afterAll(async () => {
    await app.close();
  });

  it('walks a letter through intake, scan, OCR, acknowledgment and a forward to completion', async () => {
    const fkey = w.facilityKey;

    // Mailbox identification by number and by the name on the label.
    const byNumber = await api('POST', '/v1/facility/mailboxes/identify', {
      key: fkey,
      json: { mailbox_id: w.mailboxId.replace('PMB-', 'pmb ') },
    });
    expect(byNumber.status).toBe(200);
    expect(byNumber.body.matches).toEqual([
      expect.objectContaining({ mailbox_id: w.mailboxId, member_id: w.memberId, default_agent_id: w.agentId }),
    ]);
    const byName = await api('POST', '/v1/facility/mailboxes/identify', {
      key: fkey,
      json: { recipient_name: 'test member' },
    });
    expect(byName.body.matches.map((m: { mailbox_id: string }) => m.mailbox_id)).toContain(w.mailboxId);

    // Draft, with every version guard.
    const draft = await api('POST', '/v1/facility/inbound/drafts', {
      key: fkey,
      json: { kind: 'letter', carrier: 'usps', weight_oz: 1.1, sender_name: 'Acme Insurance' },
    });
    expect(draft.status).toBe(201);
    const draftId = draft.body.draft.id;
    expect(draft.body.draft).toMatchObject({ status: 'open', version: 1 });
    const stalePut = await api('PUT', `/v1/facility/inbound/drafts/${draftId}`, {
      key: fkey,
      json: { kind: 'letter', carrier: 'ups', expected_version: 7 },
    });
    expect(stalePut.status).toBe(409);
    const put = await api('PUT', `/v1/facility/inbound/drafts/${draftId}`, {
      key: fkey,
      json: {
        kind: 'letter',
        carrier: 'usps',
        weight_oz: 1.2,
        sender_name: 'Acme Insurance',
        recipient_name: 'Test Member',
        expected_version: 1,
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.draft).toMatchObject({ version: 2, recipient_name: 'Test Member' });

    const notMatched = await api('POST', `/v1/facility/inbound/drafts/${draftId}/commit`, {
      key: fkey,
      json: { expected_version: 2 },
    });
    expect(notMatched.status).toBe(409);
    expect(notMatched.body.code).toBe('DRAFT_NOT_MATCHED');

    const staleMatch = await api('POST', `/v1/facility/inbound/drafts/${draftId}/match`, {
      key: fkey,
      json: { mailbox_id: w.mailboxId, expected_version: 1 },
    });
    expect(staleMatch.status).toBe(409);
    const matched = await api('POST', `/v1/facility/inbound/drafts/${draftId}/match`, {
      key: fkey,
      json: { mailbox_id: w.mailboxId, expected_version: 2 },
    });
    expect(matched.status).toBe(200);
    expect(matched.body.draft).toMatchObject({
      status: 'matched',
      member_id: w.memberId,
      agent_id: w.agentId,
      version: 3,
    });

    const noPhoto = await api('POST', `/v1/facility/inbound/drafts/${draftId}/commit`, {
      key: fkey,
      json: { expected_version: 3 },
    });
    expect(noPhoto.status).toBe(409);
    expect(noPhoto.body.code).toBe('EXTERIOR_PHOTO_REQUIRED');

    const notImage = new FormData();
    notImage.append('photo', new Blob([Buffer.from('%PDF-1.4 not a photo')], { type: 'image/png' }), 'x.png');
    expect(
      (await api('POST', `/v1/facility/inbound/drafts/${draftId}/exterior`, { key: fkey, form: notImage })).status,
    ).toBe(400);
    const photo = await api('POST', `/v1/facility/inbound/drafts/${draftId}/exterior`, {
      key: fkey,
      form: photoForm(),
    });
    expect(photo.status).toBe(201);
    expect(photo.body.draft.photos).toEqual([
      expect.objectContaining({ photo_type: 'sealed_exterior', content_type: 'image/png' }),
    ]);
    const stored = await app.deps.storage.get(
      (await app.deps.db.query(`SELECT storage_key FROM inbound_photos WHERE id = $1`, [photo.body.photo_id]))[0]
        .storage_key,
    );
    expect(stored.equals(fixtureImage('sample-envelope.png'))).toBe(true);

    const commit = await api('POST', `/v1/facility/inbound/drafts/${draftId}/commit`, {
      key: fkey,
      json: { expected_version: photo.body.draft.version },
    });
    expect(commit.status).toBe(201);
    const itemId: string = commit.body.item.id;
    expect(commit.body.item).toMatchObject({ status: 'received', mailbox_id: w.mailboxId, agent_id: w.agentId });
    const again = await api('POST', `/v1/facility/inbound/drafts/${draftId}/commit`, {
      key: fkey,
      json: { expected_version: commit.body.draft.version },
    });
    expect(again.status).toBe(409);

    // The agent sees it in its inbox before any scan.
    const inbox = await api('GET', '/v1/agent-inbox', { key: w.agentKey });
    expect(inbox.status).toBe(200);
    expect(inbox.body.items.map((i: { item: { id: string } }) => i.item.id)).toContain(itemId);
    const bare = await api('GET', `/v1/agent-inbox/${itemId}/context`, { key: w.agentKey });
    expect(bare.body).toMatchObject({
      scan: null,
      ocr: null,
      environment: 'live',
      test_mode: false,
      assignment: { source_domain: 'internal_team', revision: 1 },
    });

    // The agent asks for a scan; the facility fulfils it with a real page image.
    const scan = await api('POST', `/v1/packages/${itemId}/scan`, {
      key: w.agentKey,
      headers: agentHeaders,
      json: { scan_type: 'document' },
    });
    expect(scan.status).toBe(201);
    const requests = await api('GET', '/v1/facility/scan-requests', { key: fkey });
    const request = requests.body.scan_requests.find((r: { item_id: string }) => r.item_id === itemId);
    expect(request).toMatchObject({ status: 'requested', scan_type: 'document', origin: 'package_scan' });
    const pages = new FormData();
    pages.append('page_1', new Blob([fixtureImage('facility-scan-letter.png')], { type: 'image/png' }), 'page-1.png');
    const fulfil = await api('POST', `/v1/facility/scan-requests/${request.id}/fulfil`, { key: fkey, form: pages });
    expect(fulfil.status).toBe(201);
    expect(fulfil.body.bundle.pages).toEqual([expect.objectContaining({ page_number: 1, source_kind: 'letter' })]);
    expect(
      (await api('POST', `/v1/facility/scan-requests/${request.id}/fulfil`, { key: fkey, form: pages })).status,
    ).toBe(409);

    await waitFor(
      async () => (await eventsOf(app, [itemId])).some((e) => e.event_type === 'inbound.context_ready'),
      'inbound.context_ready',
    );
    const context = await api('GET', `/v1/agent-inbox/${itemId}/context`, { key: w.agentKey });
    expect(context.status).toBe(200);
    expect(context.body.context_version).toMatch(/^[0-9a-f]{64}$/);
    expect(context.body.scan).toMatchObject({
      request_id: request.id,
      bundle_id: fulfil.body.bundle.id,
      pages: [{ page_number: 1, source_kind: 'letter' }],
    });
    expect(context.body.ocr).toMatchObject({ content_trust: 'untrusted_document' });
    const page = context.body.ocr.pages[0];
    if (tesseractInstalled()) {
      // The bitmap lettering of this fixture is read with a low confidence: the page is
      // needs_review and names the words the engine was unsure of.
      expect(page).toMatchObject({
        status: 'needs_review',
        provider: 'tesseract',
        model: expect.stringMatching(/^tesseract-\d/),
        attempts: 1,
        error_code: null,
      });
      expect(page.confidence).toBeGreaterThan(0.5);
      expect(page.confidence).toBeLessThan(0.85);
      expect(page.uncertain_spans.length).toBeGreaterThan(0);
      expect(page.uncertain_spans[0]).toEqual({ text: expect.any(String), reason: 'low_confidence' });
      expect(page.text).toMatch(/INSURANCE/);
      // Saved OCR is searchable.
      const found = await api('GET', '/v1/agent-inbox?q=insurance%20renewal', { key: w.agentKey });
      expect(found.body.items.map((i: { item: { id: string } }) => i.item.id)).toEqual([itemId]);
    } else {
      expect(page).toMatchObject({ status: 'failed', error_code: 'provider_unavailable', text: null });
    }
    expect(context.body).toMatchObject({
      contract: { version: 'agent-inbox.v1', api_reference_path: '/api-docs' },
      policy: { supported_actions: [], physical_actions_enabled: false, charges_enabled: false },
      instructions: { version: 1 },
    });

    // Acknowledgment: exact context_version, Idempotency-Key replay, stale refused.
    const ack = { outcome: 'processed', context_version: context.body.context_version, run_id: 'run-1' };
    expect(
      (await api('POST', `/v1/agent-inbox/${itemId}/acknowledgments`, { key: w.agentKey, json: ack })).status,
    ).toBe(400);
    const first = await api('POST', `/v1/agent-inbox/${itemId}/acknowledgments`, {
      key: w.agentKey,
      json: ack,
      headers: { 'idempotency-key': 'ack-1' },
    });
    expect(first.status).toBe(201);
    const replay = await api('POST', `/v1/agent-inbox/${itemId}/acknowledgments`, {
      key: w.agentKey,
      json: ack,
      headers: { 'idempotency-key': 'ack-1' },
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.acknowledgment.id).toBe(first.body.acknowledgment.id);
    const stale = await api('POST', `/v1/agent-inbox/${itemId}/acknowledgments`, {
      key: w.agentKey,
      json: { ...ack, context_version: 'a'.repeat(64) },
      headers: { 'idempotency-key': 'ack-2' },
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      code: 'CONTEXT_VERSION_MISMATCH',
      details: { current_context_version: context.body.context_version },
    });
    const activity = await api('GET', '/v1/agent-inbox/activity', { key: w.agentKey });
    expect(
      activity.body.activity
        .filter((a: { item_id: string }) => a.item_id === itemId)
        .map((a: { type: string }) => a.type)
        .sort(),
    ).toEqual(['assigned', 'outcome', 'receipt', 'receipt']);

    // A priority forward: proposed by the agent, approved by the owner, carried out by the facility.
    const handling = await api('GET', `/v1/agent-inbox/${itemId}/handling`, { key: w.agentKey });
    expect(handling.status).toBe(200);
    const proposal = {
      action_type: 'forward_original',
      expected_version: handling.body.version,
      confirmed: false,
      destructive_confirmed: false,
      mail_class: 'priority',
      untracked_acknowledged: false,
      destination: {
        name: 'Ada Lovelace',
        address_line1: '1 Main St',
        address_line2: null,
        city: 'Austin',
        state: 'TX',
        postal_code: '78701',
        country: 'US',
      },
    };
    const staleProposal = await api('POST', `/v1/agent-inbox/${itemId}/handling`, {
      key: w.agentKey,
      headers: { ...agentHeaders, 'idempotency-key': 'p-0' },
      json: { ...proposal, expected_version: handling.body.version - 1 },
    });
    expect(staleProposal.status).toBe(409);
    const proposed = await api('POST', `/v1/agent-inbox/${itemId}/handling`, {
      key: w.agentKey,
      headers: { ...agentHeaders, 'idempotency-key': 'p-1' },
      json: proposal,
    });
    expect(proposed.status).toBe(201);
    const op = proposed.body.operation;
    expect(op).toMatchObject({
      status: 'awaiting_member_approval',
      origin: 'agent',
      mail_class: 'priority',
      version: 1,
      quote: { amount_cents: 1750 },
    });
    expect(op.destination).toMatchObject({ state: 'TX', postal_code: '78701', country: 'US' });

    const balanceBefore = (await getBalance(app.deps, w.memberId)).balance_cents;
    expect(
      (await api('POST', `/v1/handling/${op.id}/approve`, { key: w.memberKey, json: { expected_version: 2 } })).status,
    ).toBe(409);
    expect(
      (await api('POST', `/v1/handling/${op.id}/approve`, { key: w.agentKey, json: { expected_version: 1 } })).status,
    ).toBe(403);
    const approved = await api('POST', `/v1/handling/${op.id}/approve`, {
      key: w.memberKey,
      json: { expected_version: 1 },
    });
    expect(approved.status).toBe(200);
    expect(approved.body.operation).toMatchObject({ status: 'awaiting_facility', version: 2, charged_cents: 1750 });
    expect((await getBalance(app.deps, w.memberId)).balance_cents).toBe(balanceBefore - 1750);
    const pkg = await api('GET', `/v1/packages/${itemId}`, { key: w.agentKey });
    expect(pkg.body.package.status).toBe('forwarding_requested');

    const queue = await api('GET', '/v1/facility/internal-inbound/handling', { key: fkey });
    expect(queue.body.operations.map((o: { id: string }) => o.id)).toContain(op.id);
    const decide = (json: Record<string, unknown>) =>
      api('POST', `/v1/facility/internal-inbound/handling/${op.id}/decision`, { key: fkey, json });
    expect(
      (await decide({ decision: 'complete', expected_version: 2, tracking_number: '9400100000000000000001' })).status,
    ).toBe(409);
    expect((await decide({ decision: 'accept', expected_version: 1 })).status).toBe(409);
    const accepted = await decide({ decision: 'accept', expected_version: 2 });
    expect(accepted.status).toBe(200);
    expect(accepted.body.operation).toMatchObject({ status: 'accepted', version: 3 });
    const noTracking = await decide({ decision: 'complete', expected_version: 3 });
    expect(noTracking.status).toBe(400);
    expect(noTracking.body.fields).toEqual([expect.objectContaining({ path: 'tracking_number' })]);
    expect(
      (await decide({ decision: 'complete', expected_version: 2, tracking_number: '9400100000000000000001' })).status,
    ).toBe(409);
    const completed = await decide({
      decision: 'complete',
      expected_version: 3,
      tracking_number: '9400100000000000000001',
    });
    expect(completed.status).toBe(200);
    expect(completed.body.operation).toMatchObject({
      status: 'completed',
      version: 4,
      tracking_number: '9400100000000000000001',
    });
    expect((await decide({ decision: 'reject', expected_version: 4, reason: 'too late' })).status).toBe(409);
    expect((await api('GET', `/v1/packages/${itemId}`, { key: w.agentKey })).body.package.status).toBe('forwarded');

    // Every event is recorded once, identifiers only.
    const events = await waitFor(async () => {
      const rows = await eventsOf(app, [itemId, op.id]);
      return rows.some((e) => e.event_type === 'inbound.action_completed') ? rows : null;
    }, 'inbound.action_completed');
    expect(events.map((e) => e.event_type)).toEqual([
      'inbound.received',
      'inbound.scan_available',
      'inbound.context_ready',
      'inbound.action_completed',
    ]);
    for (const e of events) {
      expect(Object.keys(e.payload).sort()).toEqual(['agent_id', 'item_id', 'ocr_status', 'source_domain']);
      expect(e.payload).toMatchObject({ item_id: itemId, agent_id: w.agentId, source_domain: 'internal_team' });
      expect(e.environment).toBe('live');
    }
    expect(events[0].payload.ocr_status).toBeNull();
    expect(events[2].payload.ocr_status).toBe(tesseractInstalled() ? 'needs_review' : 'failed');

    const timeline = await api('GET', `/v1/inbound-activity?item_id=${itemId}`, { key: w.memberKey });
    expect(timeline.body.activity.map((a: { kind: string }) => a.kind)).toEqual(
      expect.arrayContaining([
        'received',
        'assigned',
        'package_action_requested',
        'scan_fulfilled',
        'ocr_saved',
        'acknowledged',
        'handling_proposed',
        'handling_approved',
        'handling_accepted',
        'handling_completed',
      ]),
    );
  });

  it('keeps other facilities out and refuses non-facility keys', async () => {
    const draft = await api('POST', '/v1/facility/inbound/drafts', { key: w.facilityKey, json: { kind: 'parcel' } });
    const other = await newWorld(app);
    expect(
      (await api('GET', `/v1/facility/inbound/drafts/${draft.body.draft.id}`, { key: other.facilityKey })).status,
    ).toBe(404);
    expect(
      (
        await api('POST', `/v1/facility/inbound/drafts/${draft.body.draft.id}/match`, {
          key: other.facilityKey,
          json: { mailbox_id: w.mailboxId, expected_version: 1 },
        })
      ).status,
    ).toBe(404);
    const byMember = await api('GET', '/v1/facility/scan-requests', { key: w.memberKey });
    expect(byMember.status).toBe(403);
    expect(byMember.body.reason).toBe('facility_key_required');
    const unknownMailbox = await api('POST', `/v1/facility/inbound/drafts/${draft.body.draft.id}/match`, {
      key: w.facilityKey,
      json: { mailbox_id: other.mailboxId, expected_version: 1 },
    });
    expect(unknownMailbox.status).toBe(404);
  });
});
