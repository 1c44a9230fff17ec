import {
  attachmentVerdict,
  forwardedFrom,
  messageShapeProblem,
  parseAliasAddress,
  safeFilename,
  sniffContent,
} from '../../domain/inbound-email/message';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const PDF = Buffer.from('%PDF-1.7\n%\xe2\xe3\n1 0 obj', 'latin1');
const EXE = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(64)]);

describe('raw message shape', () => {
  it('accepts a message with headers and a From line, with or without an mbox separator', () => {
    expect(messageShapeProblem(Buffer.from('From: a@b.test\r\nSubject: hi\r\n\r\nbody'))).toBeNull();
    expect(
      messageShapeProblem(
        Buffer.from('From a@b.test Mon Jan 1 00:00:00 2025\nFrom: a@b.test\nSubject: x\n  folded\n\nbody'),
      ),
    ).toBeNull();
  });

  it('refuses empty bodies, JSON, binary and messages without From', () => {
    expect(messageShapeProblem(Buffer.alloc(0))).toMatch(/empty/);
    expect(messageShapeProblem(Buffer.from('{"to":"x"}'))).toMatch(/not "Name: value"/);
    expect(messageShapeProblem(Buffer.from([0x00, 0x01, 0x02]))).toMatch(/NUL|not "Name/);
    expect(messageShapeProblem(Buffer.from('Subject: hi\r\n\r\nbody'))).toMatch(/no From/);
    expect(messageShapeProblem(Buffer.from(' folded first\r\nFrom: a@b\r\n\r\n'))).toMatch(/continuation/);
  });
});

describe('alias addresses and filenames', () => {
  it('lower-cases and drops sub-addresses', () => {
    expect(parseAliasAddress('<Bills+june@In.Postal.Localhost>')).toEqual({
      localPart: 'bills',
      domain: 'in.postal.localhost',
    });
    expect(parseAliasAddress('not-an-address')).toBeNull();
  });

  it('makes storage-safe filenames', () => {
    expect(safeFilename('../../etc/passwd')).toBe('passwd');
    expect(safeFilename('Rechnung März 2025.pdf')).toBe('Rechnung_Ma_rz_2025.pdf');
    expect(safeFilename('')).toBe('attachment');
  });
});

describe('attachment content checks', () => {
  it('sniffs content from magic numbers', () => {
    expect(sniffContent(PNG).contentType).toBe('image/png');
    expect(sniffContent(PDF).family).toBe('pdf');
    expect(sniffContent(EXE).family).toBe('executable');
    expect(sniffContent(Buffer.from('hello, plain text\n')).family).toBe('text');
  });

  it('accepts a truthful attachment without a flag', () => {
    expect(attachmentVerdict('bill.pdf', 'application/pdf', PDF)).toMatchObject({
      action: 'accept',
      contentType: 'application/pdf',
      mismatch: false,
    });
    expect(attachmentVerdict('notes.csv', 'text/csv', Buffer.from('a,b\n1,2\n'))).toMatchObject({
      action: 'accept',
      contentType: 'text/csv',
      mismatch: false,
    });
  });

  it('accepts a PNG named .pdf under its real type and flags the mismatch', () => {
    expect(attachmentVerdict('notice.pdf', 'application/pdf', PNG)).toEqual({
      action: 'accept',
      contentType: 'image/png',
      family: 'image',
      mismatch: true,
      expected: 'application/pdf',
    });
  });

  it('refuses programs, by bytes or by name', () => {
    expect(attachmentVerdict('invoice.pdf', 'application/pdf', EXE)).toMatchObject({
      action: 'refuse',
      reason: expect.stringMatching(/executable program although its name ends in \.pdf/),
    });
    expect(attachmentVerdict('setup.exe', null, Buffer.from('text'))).toMatchObject({ action: 'refuse' });
  });
});

describe('forwarded messages', () => {
  it('finds the original sender in a forwarded block', () => {
    const body =
      'FYI\n\n---------- Forwarded message ---------\nFrom: Acme Billing <billing@acme.test>\nDate: Mon\nSubject: Invoice';
    expect(forwardedFrom(body)).toEqual({ name: 'Acme Billing', address: 'billing@acme.test' });
    expect(forwardedFrom('no forward here')).toBeNull();
  });
});
