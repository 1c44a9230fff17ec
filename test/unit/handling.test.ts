import {
  checkFacilityDecision,
  checkForwardAddress,
  checkPackageActionUpdate,
  checkProposal,
  packageActionUnavailable,
  packageStatusAfter,
  packageStatusOnRequest,
  handlingCapabilities,
  HANDLING_PRICES,
  itemStatusOnApproval,
  itemStatusOnCompletion,
  nextHandlingStatus,
  ProposalInput,
  quoteHandling,
} from '../../domain/workflow-safe/handling';
import {
  aggregateOcrStatus,
  canonicalJson,
  contextVersion,
  ruleOcrStatus,
  ruleSourceKind,
  sourcesKind,
} from '../../domain/physical-inbound/agent-inbox';

const letter = { kind: 'letter' as const, status: 'stored' };
const parcel = { kind: 'parcel' as const, status: 'received' };
const destination = {
  name: 'Ada Lovelace',
  address_line1: '1 Main St',
  address_line2: null,
  city: 'Austin',
  state: 'tx',
  postal_code: '78701',
  country: 'US',
};
const forward = (over: Partial<ProposalInput> = {}): ProposalInput => ({
  action_type: 'forward_original',
  expected_version: 1,
  confirmed: false,
  destructive_confirmed: false,
  mail_class: 'priority',
  untracked_acknowledged: false,
  destination,
  ...over,
});

describe('handling proposals', () => {
  it('freezes a US destination and the mail class', () => {
    const r = checkProposal(forward(), letter);
    expect(r).toEqual({
      ok: true,
      proposal: {
        action_type: 'forward_original',
        mail_class: 'priority',
        untracked_acknowledged: false,
        destination: { ...destination, state: 'TX' },
      },
    });
  });

  it('lets agents only propose', () => {
    expect(checkProposal(forward({ confirmed: true }), letter)).toMatchObject({
      ok: false,
      kind: 'invalid',
      fields: [{ path: 'confirmed' }],
    });
    expect(
      checkProposal({ action_type: 'discard', expected_version: 1, destructive_confirmed: true }, letter),
    ).toMatchObject({ ok: false, fields: [{ path: 'destructive_confirmed' }] });
  });

  it('refuses non-US destinations and bad ZIPs', () => {
    const r = checkProposal(
      forward({ destination: { ...destination, country: 'CA', postal_code: 'K1A 0B1', state: 'ON' } }),
      letter,
    );
    expect(r.ok).toBe(false);
    const paths = (r as { fields: Array<{ path: string }> }).fields.map((f) => f.path).sort();
    expect(paths).toEqual(['destination.country', 'destination.postal_code', 'destination.state']);
  });

  it('first_class is letter-only and needs the untracked acknowledgment', () => {
    expect(checkProposal(forward({ mail_class: 'first_class' }), letter)).toMatchObject({
      ok: false,
      fields: [{ path: 'untracked_acknowledged' }],
    });
    expect(checkProposal(forward({ mail_class: 'first_class', untracked_acknowledged: true }), letter)).toMatchObject({
      ok: true,
    });
    expect(checkProposal(forward({ mail_class: 'first_class', untracked_acknowledged: true }), parcel)).toMatchObject({
      ok: false,
      fields: [{ path: 'mail_class', message: expect.stringContaining('letters only') }],
    });
  });

  it('needs destination and mail class to forward, and neither for other actions', () => {
    expect(checkProposal(forward({ destination: null, mail_class: null }), letter)).toMatchObject({ ok: false });
    expect(checkProposal({ action_type: 'open_and_scan', expected_version: 1, destination }, letter)).toMatchObject({
      ok: false,
      fields: [{ path: 'destination' }],
    });
    expect(checkProposal({ action_type: 'open_and_scan', expected_version: 1 }, letter)).toMatchObject({ ok: true });
  });

  it('refuses vault as inactive and items no longer in custody', () => {
    expect(checkProposal({ action_type: 'vault', expected_version: 1 }, letter)).toMatchObject({
      ok: false,
      kind: 'inactive',
    });
    expect(
      checkProposal({ action_type: 'discard', expected_version: 1 }, { kind: 'letter', status: 'forwarded' }),
    ).toMatchObject({ ok: false, kind: 'unavailable' });
  });
});

describe('handling lifecycle', () => {
  it('moves awaiting_member_approval -> awaiting_facility -> accepted -> completed', () => {
    expect(nextHandlingStatus('awaiting_member_approval', 'approve', 'member')).toBe('awaiting_facility');
    expect(nextHandlingStatus('awaiting_facility', 'accept', 'facility')).toBe('accepted');
    expect(nextHandlingStatus('accepted', 'complete', 'facility')).toBe('completed');
  });

  it('refuses skipped steps and the wrong actor', () => {
    expect(nextHandlingStatus('awaiting_member_approval', 'accept', 'facility')).toBeNull();
    expect(nextHandlingStatus('awaiting_facility', 'complete', 'facility')).toBeNull();
    expect(nextHandlingStatus('awaiting_member_approval', 'approve', 'facility')).toBeNull();
    expect(nextHandlingStatus('completed', 'reject', 'system')).toBeNull();
  });

  it('lets the owner reject only while approval is pending and the facility until completion', () => {
    expect(nextHandlingStatus('awaiting_member_approval', 'reject', 'member')).toBe('rejected');
    expect(nextHandlingStatus('awaiting_facility', 'reject', 'member')).toBeNull();
    expect(nextHandlingStatus('awaiting_facility', 'reject', 'facility')).toBe('rejected');
    expect(nextHandlingStatus('accepted', 'reject', 'facility')).toBe('rejected');
    expect(nextHandlingStatus('awaiting_member_approval', 'reject', 'facility')).toBeNull();
    expect(nextHandlingStatus('accepted', 'reject', 'system')).toBe('rejected');
  });

  it('needs tracking for priority, none for first_class, and an attestation for discard', () => {
    const prio = { action_type: 'forward_original' as const, mail_class: 'priority' as const };
    expect(checkFacilityDecision(prio, { decision: 'complete' })).toMatchObject([{ path: 'tracking_number' }]);
    expect(checkFacilityDecision(prio, { decision: 'complete', tracking_number: '9400 1000' })).toEqual([]);
    expect(
      checkFacilityDecision(
        { action_type: 'forward_original', mail_class: 'first_class' },
        { decision: 'complete', tracking_number: 'X' },
      ),
    ).toMatchObject([{ path: 'tracking_number' }]);
    expect(checkFacilityDecision({ action_type: 'discard', mail_class: null }, { decision: 'complete' })).toMatchObject(
      [{ path: 'attestation' }],
    );
    expect(
      checkFacilityDecision({ action_type: 'open_and_scan', mail_class: null }, { decision: 'complete' }),
    ).toMatchObject([{ path: 'decision' }]);
    expect(checkFacilityDecision(prio, { decision: 'reject' })).toMatchObject([{ path: 'reason' }]);
    expect(checkFacilityDecision(prio, { decision: 'accept' })).toEqual([]);
  });

  it('maps operations to custody states', () => {
    expect(itemStatusOnApproval('forward_original')).toBe('forwarding_requested');
    expect(itemStatusOnApproval('discard')).toBeNull();
    expect(itemStatusOnCompletion('forward_original')).toBe('forwarded');
    expect(itemStatusOnCompletion('discard')).toBe('disposed');
    expect(itemStatusOnCompletion('open_and_scan')).toBeNull();
  });
});

describe('handling quotes and capabilities', () => {
  it('prices forwarding as handling plus postage by class and weight', () => {
    expect(quoteHandling({ kind: 'letter', actionType: 'forward_original', mailClass: 'first_class' })).toEqual({
      amount_cents: 450,
      handling_cents: 250,
      postage_cents: 200,
    });
    expect(
      quoteHandling({ kind: 'parcel', actionType: 'forward_original', mailClass: 'priority', weightOz: 40 }),
    ).toEqual({ amount_cents: 250 + 1500 + 2 * 300, handling_cents: 250, postage_cents: 2100 });
    expect(quoteHandling({ kind: 'parcel', actionType: 'open_and_scan' }).amount_cents).toBe(
      HANDLING_PRICES.openAndScan.parcel,
    );
  });

  it('lists capabilities, vault inactive, and nothing while an operation is open', () => {
    const caps = handlingCapabilities({ kind: 'letter', status: 'stored', weightOz: 1 }, false);
    expect(caps.map((c) => [c.action_type, c.available])).toEqual([
      ['forward_original', true],
      ['open_and_scan', true],
      ['discard', true],
      ['vault', false],
    ]);
    expect(caps[0].mail_classes).toEqual(['priority', 'first_class']);
    const busy = handlingCapabilities({ kind: 'parcel', status: 'stored', weightOz: null }, true);
    expect(busy.every((c) => !c.available)).toBe(true);
    expect(busy[0].mail_classes).toEqual(['priority']);
  });
});

describe('agent-inbox context versions and pages', () => {
  it('hashes canonical JSON, independent of key order and of context_version itself', () => {
    expect(canonicalJson({ b: 1, a: [{ d: null, c: 'x' }] })).toBe('{"a":[{"c":"x","d":null}],"b":1}');
    const v1 = contextVersion({ a: 1, b: { c: 2 } });
    expect(v1).toMatch(/^[0-9a-f]{64}$/);
    expect(contextVersion({ b: { c: 2 }, a: 1, context_version: 'old' })).toBe(v1);
    expect(contextVersion({ a: 1, b: { c: 3 } })).not.toBe(v1);
  });

  it('names pages for sources and for webhook rules', () => {
    expect(sourcesKind({ role: 'envelope', origin: 'physical' })).toBe('exterior');
    expect(sourcesKind({ role: 'letter', origin: 'physical' })).toBe('contents');
    expect(sourcesKind({ role: 'letter', origin: 'sample' })).toBe('sample_letter');
    expect(ruleSourceKind({ role: 'envelope', origin: 'sample' })).toBe('envelope');
    expect(ruleSourceKind({ role: 'envelope', origin: 'physical' })).toBe('physical');
  });

  it('aggregates page OCR states', () => {
    expect(aggregateOcrStatus([])).toBeNull();
    expect(aggregateOcrStatus(['ready', 'queued'])).toBe('queued');
    expect(aggregateOcrStatus(['ready', 'ready'])).toBe('ready');
    expect(aggregateOcrStatus(['ready', 'failed'])).toBe('needs_review');
    expect(aggregateOcrStatus(['failed', 'failed'])).toBe('failed');
    expect(ruleOcrStatus('needs_review', 'x')).toBe('ready');
    expect(ruleOcrStatus('processing', null)).toBe('pending');
    expect(ruleOcrStatus('ready', null)).toBe('missing');
  });
});

describe('package custody actions', () => {
  it('moves the package with the facility progress of its action', () => {
    expect(packageStatusOnRequest('forward')).toBe('forwarding_requested');
    expect(packageStatusOnRequest('scan')).toBeNull();
    expect(packageStatusAfter('forward', 'in_progress', 'stored')).toBe('forwarding_shipped');
    expect(packageStatusAfter('forward', 'completed', 'stored')).toBe('forwarded');
    expect(packageStatusAfter('forward', 'failed', 'stored')).toBe('stored');
    expect(packageStatusAfter('return_to_sender', 'in_progress', null)).toBe('returning');
    expect(packageStatusAfter('shred', 'completed', null)).toBe('shredded');
    expect(packageStatusAfter('hold', 'completed', null)).toBe('held');
    expect(packageStatusAfter('photograph', 'completed', null)).toBeNull();
  });

  it('refuses inactive actions and incomplete updates', () => {
    expect(checkPackageActionUpdate('hold', 'completed', { status: 'in_progress' })).toMatchObject({ kind: 'state' });
    expect(checkPackageActionUpdate('scan', 'requested', { status: 'completed' })).toMatchObject({
      kind: 'invalid',
      fields: [{ path: 'status' }],
    });
    expect(checkPackageActionUpdate('hold', 'requested', { status: 'clarification_needed' })).toMatchObject({
      kind: 'invalid',
      fields: [{ path: 'clarification_question' }],
    });
    expect(checkPackageActionUpdate('forward', 'requested', { status: 'in_progress' })).toMatchObject({
      kind: 'invalid',
      fields: [{ path: 'tracking_number' }],
    });
    expect(
      checkPackageActionUpdate('forward', 'requested', { status: 'in_progress', tracking_number: '1Z' }),
    ).toBeNull();
  });
});

describe('package requests', () => {
  it('lets releasing actions start only from a forwardable state', () => {
    expect(packageActionUnavailable('forward', 'stored')).toBeNull();
    expect(packageActionUnavailable('forward', 'forwarding_requested')).toMatch(/forwarding_requested/);
    expect(packageActionUnavailable('photograph', 'forwarding_requested')).toBeNull();
    expect(packageActionUnavailable('scan', 'shredded')).toMatch(/shredded/);
  });

  it('checks forwarding addresses', () => {
    expect(
      checkForwardAddress({ to_name: 'A', to_line1: '1 Main', to_city: 'Austin', to_state: 'texas', to_zip: '78701' }),
    ).toEqual({
      ok: true,
      address: {
        to_name: 'A',
        to_line1: '1 Main',
        to_line2: null,
        to_city: 'Austin',
        to_state: 'TX',
        to_zip: '78701',
        to_country: 'US',
      },
    });
    const missing = checkForwardAddress({ to_line1: '1 Main', to_zip: '787' }, 'parameters.');
    expect(missing.ok).toBe(false);
    expect((missing as { fields: Array<{ path: string }> }).fields.map((f) => f.path).sort()).toEqual([
      'parameters.to_city',
      'parameters.to_name',
      'parameters.to_state',
      'parameters.to_zip',
    ]);
    expect(
      checkForwardAddress({
        to_name: 'A',
        to_line1: '1 Rue',
        to_city: 'Paris',
        to_state: 'IDF',
        to_zip: '75001',
        to_country: 'fr',
      }),
    ).toMatchObject({ ok: true, address: { to_country: 'FR', to_state: 'IDF' } });
  });
});
