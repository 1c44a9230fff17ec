import {
  findAmounts,
  findDates,
  findDeadlines,
  findReferenceNumbers,
  formatDollars,
} from '../../domain/inbound-email/facts';

describe('inbound date extraction', () => {
  it('reads long, short, day-first, ISO and US numeric dates', () => {
    const text = 'Issued March 3, 2025. Also 15 Apr 2025, 2025-06-30 and 07/04/2025 and 1/2/25.';
    expect(findDates(text).map((d) => d.iso)).toEqual([
      '2025-03-03',
      '2025-04-15',
      '2025-06-30',
      '2025-07-04',
      '2025-01-02',
    ]);
  });

  it('rejects impossible calendar dates', () => {
    expect(findDates('February 30, 2025 and 13/01/2025')).toEqual([]);
  });

  it('keeps only dates that follow deadline words, with a label', () => {
    const text =
      'Statement date: February 1, 2025\nAmount due $123.45\nDue date: March 15, 2025\nPlease respond no later than 04/01/2025.';
    const found = findDeadlines(text);
    expect(found.map((d) => [d.date, d.label])).toEqual([
      ['2025-03-15', 'due date'],
      ['2025-04-01', 'no later than'],
    ]);
    expect(found[0].confidence).toBeGreaterThan(0.8);
  });

  it('finds a deadline whose label sits on the line above', () => {
    expect(findDeadlines('Payment due date\nMarch 15, 2025').map((d) => d.date)).toEqual(['2025-03-15']);
  });

  it('gives weak words (by, before) a lower confidence', () => {
    const [d] = findDeadlines('Send the signed form back before June 2, 2025.');
    expect(d).toMatchObject({ date: '2025-06-02', label: 'before' });
    expect(d.confidence).toBeLessThan(0.7);
  });
});

describe('inbound amount extraction', () => {
  it('parses dollars with thousands separators into integer cents and labels amounts due', () => {
    const [a, b] = findAmounts('Previous balance $1,234.56 paid\nTotal amount due: $123.45');
    expect(a).toMatchObject({ cents: 123456, display: '$1,234.56', isAmountDue: true, label: 'balance' });
    expect(b).toMatchObject({ cents: 12345, display: '$123.45', isAmountDue: true, label: 'total amount due' });
  });

  it('takes a label from the line above and leaves unlabelled amounts unlabelled', () => {
    const found = findAmounts('Amount Due\n$88.10\nWe spent $5 on stamps');
    expect(found[0]).toMatchObject({ cents: 8810, isAmountDue: true });
    expect(found[1]).toMatchObject({ cents: 500, label: null, isAmountDue: false });
  });

  it('formats cents', () => {
    expect(formatDollars(100000005)).toBe('$1,000,000.05');
  });
});

describe('inbound reference numbers', () => {
  it('finds account, invoice, policy and case numbers that contain digits', () => {
    const refs = findReferenceNumbers(
      'Account Number: 4410-2231-07\nInvoice #INV-2291\nPolicy No. HX99812\nCase No. 2025-CV-001234\nAccount Summary',
    );
    expect(refs.map((r) => [r.kind, r.value])).toEqual([
      ['account_number', '4410-2231-07'],
      ['invoice_number', 'INV-2291'],
      ['policy_number', 'HX99812'],
      ['case_number', '2025-CV-001234'],
    ]);
  });
});

describe('inbound reference numbers next to other labels', () => {
  it('does not let a label word swallow the next label, and reads OCR dashes as hyphens', () => {
    expect(findReferenceNumbers('PAST DUE NOTICE\nAccount Number: 4410-2231-07').map((r) => r.value)).toEqual([
      '4410-2231-07',
    ]);
    expect(findReferenceNumbers('Re: Case No. 2025-SC \u20140042, small claims')).toEqual([
      { kind: 'case_number', label: 'Case No.', value: '2025-SC-0042' },
    ]);
  });
});
