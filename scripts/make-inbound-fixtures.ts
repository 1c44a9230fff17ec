// Writes the forwarded-inbound test emails into test/fixtures/inbound/ (committed; tests
// read them): a utility bill PDF with real text and its past-due follow-up, a photographed
// notice (JPEG), a two-page scanned letter (image-only PDF pages that need OCR), a note
// without attachments, an ISO-8859-1 email, and two attachments whose names lie about
// their content (a PNG named .pdf, a program named .pdf). Deterministic: fixed dates,
// Message-IDs and MIME boundaries; images come from pdf-lib pages rasterised by pdftoppm.
//   npx tsx scripts/make-inbound-fixtures.ts
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import iconv from 'iconv-lite';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { PDFDocument, PDFFont, StandardFonts } from 'pdf-lib';

const OUT = path.join(__dirname, '..', 'test', 'fixtures', 'inbound');
/** The reserved intake local part: fixtures never name a real alias; tests pass the envelope recipient. */
export const FIXTURE_TO = 'intake@in.postal.localhost';
const FIXED_DATE = new Date('2025-02-24T15:04:05Z');

interface Line {
  text: string;
  size?: number;
  bold?: boolean;
  gap?: number;
}

/** A Letter-size PDF page per entry of `pages`, text set top-down in Helvetica. */
async function textPdf(
  pages: Line[][],
  meta: { title: string; author: string },
  pageSize: [number, number] = [612, 792],
): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  for (const lines of pages) {
    const page = doc.addPage(pageSize);
    let y = pageSize[1] - 60;
    for (const line of lines) {
      const size = line.size ?? 12;
      y -= line.gap ?? 0;
      const font: PDFFont = line.bold ? bold : regular;
      if (line.text) page.drawText(line.text, { x: 60, y, size, font });
      y -= size * 1.45;
    }
  }
  doc.setTitle(meta.title);
  doc.setAuthor(meta.author);
  doc.setCreator('inbound fixtures');
  doc.setProducer('pdf-lib');
  doc.setCreationDate(FIXED_DATE);
  doc.setModificationDate(FIXED_DATE);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** Rasterises every page of a PDF with pdftoppm; returns one image per page. */
function rasterise(pdf: Buffer, format: 'jpeg' | 'png', dpi: number): Buffer[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'inbound-fixtures-'));
  try {
    writeFileSync(path.join(dir, 'in.pdf'), pdf);
    const args = ['-r', String(dpi), `-${format}`, '-gray'];
    if (format === 'jpeg') args.push('-jpegopt', 'quality=85');
    execFileSync('pdftoppm', [...args, path.join(dir, 'in.pdf'), path.join(dir, 'page')]);
    const ext = format === 'jpeg' ? 'jpg' : 'png';
    const pages = execFileSync('ls', [dir])
      .toString()
      .split('\n')
      .filter((f) => f.endsWith(`.${ext}`))
      .sort();
    return pages.map((f) => readFileSync(path.join(dir, f)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A PDF whose pages are only images (a scanner's output): no text layer at all. */
async function imageOnlyPdf(pngPages: Buffer[]): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  for (const png of pngPages) {
    const image = await doc.embedPng(png);
    const page = doc.addPage([612, 792]);
    page.drawImage(image, { x: 0, y: 0, width: 612, height: 792 });
  }
  doc.setProducer('Scanner 3000');
  doc.setCreationDate(FIXED_DATE);
  doc.setModificationDate(FIXED_DATE);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

async function compose(name: string, options: Mail.Options): Promise<void> {
  const mail = new MailComposer({
    date: FIXED_DATE,
    newline: 'windows',
    baseBoundary: name.replace(/[^a-z0-9]/gi, ''),
    ...options,
  } as Mail.Options);
  const raw = await mail.compile().build();
  writeFileSync(path.join(OUT, name), raw);
}

const SPL_HEADER: Line[] = [
  { text: 'Springfield Power & Light', size: 16, bold: true },
  { text: 'PO Box 4410' },
  { text: 'Springfield, IL 62705' },
  { text: '', gap: 10 },
  { text: 'Jordan Example' },
  { text: '742 Evergreen Terrace' },
  { text: 'Springfield, IL 62704' },
  { text: '', gap: 10 },
];

async function main() {
  mkdirSync(OUT, { recursive: true });
  const jordan = { name: 'Jordan Example', address: 'jordan@example.test' };

  // 1. Utility bill: a digital PDF with a text layer.
  const bill = await textPdf(
    [
      [
        ...SPL_HEADER,
        { text: 'Electric Service Statement', size: 14, bold: true },
        { text: 'Account Number: 4410-2231-07' },
        { text: 'Statement date: February 20, 2025' },
        { text: 'Billing period: January 15, 2025 - February 14, 2025' },
        { text: 'Electricity used: 640 kWh' },
        { text: 'Current charges: $123.45' },
        { text: 'Amount due: $123.45', bold: true },
        { text: 'Due date: March 15, 2025', bold: true },
        { text: '', gap: 10 },
        { text: 'Remit payment to:' },
        { text: 'SPL Payment Center' },
        { text: '1200 Commerce Drive Suite 300' },
        { text: 'Peoria, IL 61602' },
      ],
    ],
    { title: 'Springfield Power & Light statement', author: 'Springfield Power & Light' },
  );
  await compose('utility-bill.eml', {
    from: jordan,
    to: FIXTURE_TO,
    subject: 'Fwd: electric bill',
    messageId: '<utility-bill-2025-02@example.test>',
    text: 'Forwarding the power bill that came in the mail today.\n\nJordan',
    attachments: [{ filename: 'spl-statement-2025-02.pdf', content: bill, contentType: 'application/pdf' }],
  });

  // 2. The same sender's follow-up: joins the bill's postal thread.
  const followUp = await textPdf(
    [
      [
        ...SPL_HEADER,
        { text: 'PAST DUE NOTICE', size: 14, bold: true },
        { text: 'Account Number: 4410-2231-07' },
        { text: 'Your payment of $123.45 has not been received.' },
        { text: 'Past due amount: $148.20', bold: true },
        { text: 'Please pay by April 1, 2025 to avoid disconnection of your electric service.' },
      ],
    ],
    { title: 'Springfield Power & Light past due notice', author: 'Springfield Power & Light' },
  );
  await compose('utility-bill-followup.eml', {
    from: jordan,
    to: FIXTURE_TO,
    subject: 'another one from the power company',
    messageId: '<utility-bill-2025-03@example.test>',
    text: 'They sent a past due notice.',
    attachments: [{ filename: 'spl-past-due.pdf', content: followUp, contentType: 'application/pdf' }],
  });

  // 3. A photographed notice: a JPEG with legible text (needs OCR).
  const noticePdf = await textPdf(
    [
      [
        { text: 'CITY OF SPRINGFIELD', size: 22, bold: true },
        { text: 'DEPARTMENT OF WATER', size: 18, bold: true },
        { text: '', gap: 8 },
        { text: 'NOTICE OF SERVICE INTERRUPTION', size: 18, bold: true },
        { text: '', gap: 8 },
        { text: 'Water service to this address will be interrupted', size: 14 },
        { text: 'for main repairs. Please respond by April 2, 2025', size: 14 },
        { text: 'if you need a temporary supply.', size: 14 },
        { text: '', gap: 8 },
        { text: 'City of Springfield Water Department', size: 14 },
        { text: '800 East Monroe Street', size: 14 },
        { text: 'Springfield, IL 62701', size: 14 },
      ],
    ],
    { title: 'notice', author: 'city' },
    [540, 420],
  );
  const [noticeJpeg] = rasterise(noticePdf, 'jpeg', 150);
  await compose('photo-notice.eml', {
    from: jordan,
    to: FIXTURE_TO,
    subject: 'Photo of the notice on our door',
    messageId: '<photo-notice@example.test>',
    text: 'Photo attached.',
    attachments: [{ filename: 'IMG_2041.jpg', content: noticeJpeg, contentType: 'image/jpeg' }],
  });

  // 4. A two-page scanned letter: image-only pages (needs OCR of each page).
  const letterPdf = await textPdf(
    [
      [
        { text: 'Shelbyville Legal Services LLP', size: 16, bold: true },
        { text: '12 Court Square' },
        { text: 'Shelbyville, IL 62565' },
        { text: '', gap: 10 },
        { text: 'Jordan Example' },
        { text: '742 Evergreen Terrace' },
        { text: 'Springfield, IL 62704' },
        { text: '', gap: 10 },
        { text: 'Re: Case No. 2025-SC-0042, small claims court', bold: true },
        { text: '', gap: 6 },
        { text: 'Dear Jordan Example,' },
        { text: 'Our client, a plaintiff in the matter above, has filed a claim in small claims' },
        { text: 'court concerning the unpaid balance of $860.00. A hearing has been scheduled.' },
        { text: 'You must respond no later than May 1, 2025.' },
      ],
      [
        { text: 'Page 2 of 2', size: 10 },
        { text: '', gap: 10 },
        { text: 'If you wish to settle this matter before the hearing, please contact our office' },
        { text: 'in writing at the address above. Our attorney will review any proposal.' },
        { text: '', gap: 10 },
        { text: 'Sincerely,' },
        { text: 'Morgan Attorney' },
        { text: 'Shelbyville Legal Services LLP' },
      ],
    ],
    { title: 'letter', author: 'law office' },
  );
  const scanned = await imageOnlyPdf(rasterise(letterPdf, 'png', 200));
  await compose('scanned-letter.eml', {
    from: { name: 'Office Scanner', address: 'scanner@example.test' },
    to: FIXTURE_TO,
    subject: 'Scanned document',
    messageId: '<scanned-letter@example.test>',
    text: '',
    attachments: [{ filename: 'scan_0001.pdf', content: scanned, contentType: 'application/pdf' }],
  });

  // 5. A note without attachments.
  await compose('plain-note.eml', {
    from: { name: 'Grandma', address: 'grandma@example.test' },
    to: FIXTURE_TO,
    subject: 'Happy birthday!',
    messageId: '<plain-note@example.test>',
    text: 'Happy birthday, Jordan! We miss you and hope to see you at the wedding in June.\n\nLove, Grandma\nxoxo',
  });

  // 6. ISO-8859-1 text (8bit) with an RFC 2047 encoded subject, written by hand: the
  //    composer always writes UTF-8.
  const latin1Body =
    'Chère Jordan,\r\n\r\nLa réunion de famille aura lieu au Café Müller à Noël.\r\nÇa te va ? Réponds-moi avant le 10 décembre.\r\n\r\nJosé\r\n';
  const latin1 = Buffer.concat([
    Buffer.from(
      [
        'From: =?ISO-8859-1?Q?Jos=E9_M=FCller?= <jose@example.test>',
        `To: ${FIXTURE_TO}`,
        'Subject: =?ISO-8859-1?Q?R=E9union_de_famille_=E0_No=EBl?=',
        'Date: Mon, 24 Feb 2025 15:04:05 +0000',
        'Message-ID: <latin1-letter@example.test>',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=ISO-8859-1',
        'Content-Transfer-Encoding: 8bit',
        '',
        '',
      ].join('\r\n'),
      'ascii',
    ),
    iconv.encode(latin1Body, 'latin1'),
  ]);
  writeFileSync(path.join(OUT, 'latin1-letter.eml'), latin1);

  // 7. A PNG receipt named .pdf: accepted under its real type, flagged, and OCR'd.
  const receiptPdf = await textPdf(
    [
      [
        { text: 'CORNER HARDWARE', size: 20, bold: true },
        { text: 'RECEIPT', size: 18, bold: true },
        { text: 'Total paid: $42.17', size: 16 },
      ],
    ],
    { title: 'receipt', author: 'store' },
    [400, 200],
  );
  const [receiptPng] = rasterise(receiptPdf, 'png', 150);
  await compose('png-named-pdf.eml', {
    from: jordan,
    to: FIXTURE_TO,
    subject: 'receipt',
    messageId: '<png-named-pdf@example.test>',
    text: 'Receipt for the records.',
    attachments: [{ filename: 'receipt.pdf', content: receiptPng, contentType: 'application/pdf' }],
  });

  // 8. A Windows program named .pdf: refused whole.
  const program = Buffer.concat([
    Buffer.from('MZ', 'latin1'),
    Buffer.alloc(126, 0x90),
    Buffer.from('This program cannot be run in DOS mode.', 'latin1'),
  ]);
  await compose('program-named-pdf.eml', {
    from: { name: 'Billing', address: 'billing@unknown.test' },
    to: FIXTURE_TO,
    subject: 'Your invoice',
    messageId: '<program-named-pdf@example.test>',
    text: 'Please open the attached invoice.',
    attachments: [
      { filename: 'notes.txt', content: 'harmless text part\n', contentType: 'text/plain' },
      { filename: 'invoice.pdf', content: program, contentType: 'application/pdf' },
    ],
  });

  console.log(`wrote fixtures to ${path.relative(process.cwd(), OUT)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
