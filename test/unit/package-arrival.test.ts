import {
  emptyApplyProblem,
  emptyMatchProblem,
  MailboxRule,
  normaliseTrackingNumber,
  planArrival,
  ruleMatchesPiece,
} from '../../domain/physical-inbound/package-arrival';

const rule = (id: string, over: Partial<MailboxRule> = {}): MailboxRule => ({
  id,
  name: `rule ${id}`,
  enabled: true,
  match: { sender_contains: ['acme'] },
  apply: { add_tags: [id] },
  ...over,
});
const parcel = { kind: 'parcel' as const, carrier: 'UPS', senderName: 'ACME Insurance Co.' };

describe('normaliseTrackingNumber', () => {
  it.each([
    ['1z 999-aa1 0123456784', '1Z999AA10123456784'],
    ['  9400 1000 0000 0000 0000 00 ', '9400100000000000000000'],
    ['１Ｚ９９９', '1Z999'], // full-width digits and letters
    ['---', ''],
  ])('%j -> %j', (input, expected) => {
    expect(normaliseTrackingNumber(input)).toBe(expected);
  });
});

describe('ruleMatchesPiece', () => {
  it.each<[string, MailboxRule['match'], boolean]>([
    ['sender term, any case and spacing', { sender_contains: ['acme  insurance'] }, true],
    ['one of several sender terms', { sender_contains: ['irs', 'acme'] }, true],
    ['sender term absent', { sender_contains: ['irs'] }, false],
    ['carrier compared whole, any case', { carriers: [' ups '] }, true],
    ['carrier is not a substring match', { carriers: ['up'] }, false],
    ['kind', { kinds: ['parcel'] }, true],
    ['other kind', { kinds: ['letter'] }, false],
    ['every criterion must hold', { sender_contains: ['acme'], carriers: ['fedex'] }, false],
    ['all criteria hold', { sender_contains: ['acme'], carriers: ['ups'], kinds: ['parcel'] }, true],
  ])('%s', (_, match, expected) => {
    expect(ruleMatchesPiece(match, parcel)).toBe(expected);
  });

  it('fails a criterion about a label field the facility did not record', () => {
    expect(ruleMatchesPiece({ carriers: ['ups'] }, { ...parcel, carrier: null })).toBe(false);
    expect(ruleMatchesPiece({ sender_contains: ['acme'] }, { ...parcel, senderName: null })).toBe(false);
    expect(ruleMatchesPiece({ kinds: ['parcel'] }, { ...parcel, senderName: null, carrier: null })).toBe(true);
  });
});

describe('empty rules are refused', () => {
  it('needs something to match and something to do', () => {
    expect(emptyMatchProblem({})).toMatch(/at least one/);
    expect(emptyMatchProblem({ sender_contains: [], carriers: [] })).toMatch(/at least one/);
    expect(emptyMatchProblem({ kinds: ['letter'] })).toBeNull();
    expect(emptyApplyProblem({ add_tags: [] })).toMatch(/request_action/);
    expect(emptyApplyProblem({ request_action: { action: 'hold', priority: 'normal' } })).toBeNull();
  });
});

describe('planArrival', () => {
  const hold = { action: 'hold' as const, priority: 'normal' as const };
  const scan = { action: 'scan' as const, priority: 'high' as const, parameters: { scan_type: 'label' } };

  it('adds the tags of every matching enabled rule once, in rule order', () => {
    const plan = planArrival(parcel, null, [
      rule('a', { apply: { add_tags: ['insurance', 'paper'] } }),
      rule('off', { enabled: false, apply: { add_tags: ['never'] } }),
      rule('b', { match: { carriers: ['ups'] }, apply: { add_tags: ['ups', 'insurance'] } }),
      rule('c', { match: { sender_contains: ['irs'] }, apply: { add_tags: ['irs'] } }),
    ]);
    expect(plan.tags).toEqual([
      { tag: 'insurance', ruleId: 'a' },
      { tag: 'paper', ruleId: 'a' },
      { tag: 'ups', ruleId: 'b' },
    ]);
    expect(plan.matchedRuleIds).toEqual(['a', 'b']);
    expect(plan.action).toBeNull();
  });

  it("requests the first matching rule's action only", () => {
    const plan = planArrival(parcel, null, [
      rule('tags-only'),
      rule('first', { apply: { request_action: hold } }),
      rule('second', { apply: { request_action: scan } }),
    ]);
    expect(plan.action).toEqual({ ...hold, source: { kind: 'mailbox_rule', id: 'first', name: 'rule first' } });
  });

  it("prefers the expected shipment's on_arrival action to any rule's, and still applies the rules' tags", () => {
    const plan = planArrival(parcel, { id: 's1', on_arrival: scan }, [
      rule('first', { apply: { request_action: hold, add_tags: ['t'] } }),
    ]);
    expect(plan.action).toEqual({ ...scan, source: { kind: 'expected_shipment', id: 's1' } });
    expect(plan.tags).toEqual([{ tag: 't', ruleId: 'first' }]);
  });

  it('falls back to the rules when the expected shipment asks for nothing', () => {
    const plan = planArrival(parcel, { id: 's1', on_arrival: null }, [
      rule('first', { apply: { request_action: hold } }),
    ]);
    expect(plan.action?.source).toEqual({ kind: 'mailbox_rule', id: 'first', name: 'rule first' });
  });
});
