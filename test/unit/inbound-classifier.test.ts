import { classify, suggestAction } from '../../domain/inbound-email/classifier';

describe('heuristic classifier', () => {
  it.each([
    [
      'Your electric bill',
      'Billing period Jan 1 - Jan 31. Current charges $123.45. Amount due by the due date. 640 kWh',
      'bill',
    ],
    [
      'Invoice INV-2291',
      'Invoice number INV-2291. Bill to: Jordan. Unit price, qty, subtotal. Payment terms: Net 30. Remit to Acme.',
      'invoice',
    ],
    [
      'Notice',
      'SUMMONS. You are hereby notified that a lawsuit has been filed in small claims court. Plaintiff: Acme. Defendant: you.',
      'legal_notice',
    ],
    ['', 'Internal Revenue Service. Dear taxpayer, we adjusted your tax return.', 'government'],
    ['', 'Your checking account statement from First Bank. Routing number. FDIC insured. Available balance', 'bank'],
    [
      '',
      'Explanation of benefits. Policy number HX99812. Your deductible and coverage. Claim number 7781.',
      'insurance',
    ],
    ['', 'Patient: Jordan. Lab results from the clinic. Your physician reviewed the diagnosis.', 'medical'],
    [
      'Limited time!',
      'Special offer: 20% off with this coupon. Act now, you have been selected. Unsubscribe.',
      'marketing',
    ],
    ['Happy birthday!', 'Happy birthday! We miss you. Love, Grandma. xoxo', 'personal'],
  ])('classifies %s as %s', (subject, text, expected) => {
    const c = classify(subject, text);
    expect(c.category).toBe(expected);
    expect(c.confidence).toBeGreaterThan(0.45);
    expect(c.matched.length).toBeGreaterThan(0);
  });

  it('falls back to other with low confidence when nothing scores', () => {
    expect(classify('hello', 'see attached')).toMatchObject({ category: 'other', confidence: 0.3 });
  });

  it('counts the subject twice and respects word boundaries', () => {
    expect(classify('', 'one billion').scores.bill).toBe(0);
    expect(classify('bill', 'bill').scores.bill).toBe(4);
  });

  it('suggests actions from category and facts', () => {
    const facts = { hasAmountDue: false, hasDeadline: false, text: '' };
    expect(suggestAction('bill', facts)).toBe('pay');
    expect(suggestAction('legal_notice', { ...facts, hasDeadline: true })).toBe('review_deadline');
    expect(suggestAction('legal_notice', facts)).toBe('reply');
    expect(suggestAction('marketing', facts)).toBe('discard');
    expect(suggestAction('bank', { ...facts, text: 'Suspicious activity on your card' })).toBe('review');
    expect(suggestAction('insurance', facts)).toBe('file');
    expect(suggestAction('medical', { ...facts, hasAmountDue: true })).toBe('pay');
    expect(suggestAction('other', facts)).toBe('review');
  });
});
