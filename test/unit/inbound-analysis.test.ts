import { analyseInbound } from '../../domain/inbound-email/analysis';

const BILL = [
  'Springfield Power & Light',
  'PO Box 4410',
  'Springfield, IL 62705',
  '',
  'Jordan Example',
  '742 Evergreen Terrace',
  'Springfield, IL 62704',
  '',
  'Account Number: 4410-2231-07',
  'Billing period: January 1, 2025 - January 31, 2025',
  'Current charges: $123.45',
  'Amount due: $123.45',
  'Due date: March 15, 2025',
].join('\n');

describe('drafting context analysis', () => {
  it('builds category, action, parties, deadlines, facts, summary, keys and lineage from a bill', () => {
    const a = analyseInbound({
      subject: 'Scanned document',
      body: '',
      fromName: 'Jordan',
      fromAddress: 'jordan@example.test',
      aliasEmail: 'bills@in.test',
      hasAttachments: true,
      documents: [{ source: 'pdf_text', fileId: 'file-1', text: BILL, confidence: 1 }],
    });
    expect(a.category).toBe('bill');
    expect(a.suggestedAction).toBe('pay');
    expect(a.sender).toMatchObject({
      name: 'Springfield Power & Light',
      email: null,
      address: { line1: 'PO Box 4410', postal_code: '62705', source_type: 'pdf_text' },
    });
    expect(a.recipient).toMatchObject({ name: 'Jordan Example', email: 'bills@in.test' });
    expect(a.replyContact).toMatchObject({ name: 'Springfield Power & Light', verification_status: 'verified_format' });
    expect(a.deadlines).toEqual(['2025-03-15']);
    expect(a.keyFacts[0]).toEqual({ kind: 'amount_due', label: 'amount due', value: '$123.45', amount_cents: 12345 });
    expect(a.keyFacts).toContainEqual({ kind: 'account_number', label: 'Account Number', value: '4410-2231-07' });
    expect(a.summary).toBe(
      'Bill from Springfield Power & Light: $123.45 due, by 2025-03-15, account number 4410-2231-07.',
    );
    expect(a.threadKeys).toEqual({
      senderKeys: ['name:springfield power and light'],
      subjectKeys: [],
      referenceKeys: ['4410223107'],
    });
    const sources = new Set(a.extractions.map((e) => e.source));
    expect([...sources].sort()).toEqual([
      'address_parser',
      'amount_extractor',
      'date_extractor',
      'field_extractor',
      'heuristic_classifier',
      'reference_extractor',
    ]);
    expect(a.extractions.find((e) => e.source === 'address_parser')?.fileId).toBe('file-1');
  });

  it('scales contact confidence by OCR confidence and flags low-confidence categories', () => {
    const a = analyseInbound({
      subject: 'hi',
      body: 'see you',
      fromName: 'Pat',
      fromAddress: 'pat@example.test',
      aliasEmail: 'x@in.test',
      hasAttachments: true,
      documents: [{ source: 'ocr', fileId: 'f', text: 'Acme Corp\n10 Main Street\nAustin, TX 78701', confidence: 0.5 }],
    });
    expect(a.sender.address!.confidence).toBeLessThan(0.5);
    expect(a.category).toBe('other');
    expect(a.lowConfidence).toBe(true);
  });

  it('names the From of attachment-less mail as the sender', () => {
    const a = analyseInbound({
      subject: 'Happy birthday!',
      body: 'Happy birthday! Love, Grandma',
      fromName: 'Grandma',
      fromAddress: 'grandma@example.test',
      aliasEmail: 'x@in.test',
      hasAttachments: false,
      documents: [],
    });
    expect(a.sender).toEqual({ name: 'Grandma', email: 'grandma@example.test', address: null });
    expect(a.category).toBe('personal');
    expect(a.suggestedAction).toBe('reply');
    expect(a.threadKeys.senderKeys).toEqual(['email:grandma@example.test']);
  });
});
