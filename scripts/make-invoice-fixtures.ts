// Writes the real-world bill fixtures into test/fixtures/invoices/ (committed; tests and
// bench/inbound-extraction.ts read them): nine one-page PDFs with a real text layer in
// the layouts real invoices use (labels above their values, values in a far column, a
// header grid with values under the labels, line items with a totals block, "total
// amount due on <date> .... $X" with the amount further along, a remittance stub, a
// utility bill, a tax notice with a response deadline, a medical statement, an insurance
// premium notice), manifest.json with each document's expected invoice number, amount
// due, due date and sender, and page scans for the OCR path: clean 300 dpi greyscale PNGs
// of three documents (pdftoppm) and a degraded copy of one (lower resolution, blur,
// speckle noise and faded contrast, made with pngjs from a fixed seed).
// Deterministic: fixed dates and content; rerun after changing a document.
//   npx tsx scripts/make-invoice-fixtures.ts
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PDFDocument, PDFFont, PDFPage, rgb, StandardFonts } from 'pdf-lib';
import { PNG } from 'pngjs';

const OUT = path.join(__dirname, '..', 'test', 'fixtures', 'invoices');
const FIXED_DATE = new Date('2026-02-01T12:00:00Z');

export interface InvoiceExpectation {
  file: string;
  layout: string;
  /** The number the document is known by (invoice, bill, statement or notice number); null when it has none. */
  invoice_number: string | null;
  amount_due_cents: number;
  /** YYYY-MM-DD */
  due_date: string;
  sender: string;
  /** Scans of this document under scans/ (clean and degraded). */
  scans?: string[];
}

interface TextOpts {
  size?: number;
  bold?: boolean;
  align?: 'left' | 'right' | 'center';
}

/** One Letter page; coordinates are points from the top-left corner. */
class Sheet {
  constructor(
    private page: PDFPage,
    private regular: PDFFont,
    private bold: PDFFont,
  ) {}

  text(x: number, top: number, s: string, o: TextOpts = {}): void {
    const size = o.size ?? 10;
    const font = o.bold ? this.bold : this.regular;
    const width = font.widthOfTextAtSize(s, size);
    const left = o.align === 'right' ? x - width : o.align === 'center' ? x - width / 2 : x;
    this.page.drawText(s, { x: left, y: 792 - top - size, size, font });
  }

  lines(x: number, top: number, rows: string[], o: TextOpts = {}): void {
    rows.forEach((r, i) => this.text(x, top + i * (o.size ?? 10) * 1.4, r, o));
  }

  rule(x1: number, top: number, x2: number, dashed = false): void {
    this.page.drawLine({
      start: { x: x1, y: 792 - top },
      end: { x: x2, y: 792 - top },
      thickness: 0.7,
      color: rgb(0.3, 0.3, 0.3),
      ...(dashed ? { dashArray: [4, 3] } : {}),
    });
  }

  box(x: number, top: number, w: number, h: number): void {
    this.page.drawRectangle({
      x,
      y: 792 - top - h,
      width: w,
      height: h,
      borderWidth: 0.7,
      borderColor: rgb(0.3, 0.3, 0.3),
    });
  }

  /** A table: header row, then rows; columns by their x and alignment. */
  table(
    top: number,
    columns: Array<{ x: number; align?: 'left' | 'right' }>,
    header: string[],
    rows: string[][],
    rowHeight = 16,
  ): number {
    header.forEach((h, i) => this.text(columns[i].x, top, h, { bold: true, align: columns[i].align }));
    this.rule(60, top + 13, 552);
    rows.forEach((r, n) =>
      r.forEach((c, i) => this.text(columns[i].x, top + 20 + n * rowHeight, c, { align: columns[i].align })),
    );
    const end = top + 20 + rows.length * rowHeight;
    this.rule(60, end, 552);
    return end + 8;
  }
}

async function document(draw: (s: Sheet) => void, title: string, author: string): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  draw(new Sheet(doc.addPage([612, 792]), regular, bold));
  doc.setTitle(title);
  doc.setAuthor(author);
  doc.setCreator('invoice fixtures');
  doc.setProducer('pdf-lib');
  doc.setCreationDate(FIXED_DATE);
  doc.setModificationDate(FIXED_DATE);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

const CUSTOMER = ['Jordan Example', '742 Evergreen Terrace', 'Springfield, IL 62704'];

const DOCUMENTS: Array<{ expect: InvoiceExpectation; pdf: () => Promise<Buffer> }> = [
  {
    expect: {
      file: 'invoice-label-above.pdf',
      layout: 'labels above their values in a right-hand column',
      invoice_number: 'NW-2026-0142',
      amount_due_cents: 248000,
      due_date: '2026-03-14',
      sender: 'Northwind Graphic Design LLC',
      scans: ['invoice-label-above.png'],
    },
    pdf: () =>
      document(
        (s) => {
          s.text(60, 50, 'Northwind Graphic Design LLC', { size: 16, bold: true });
          s.lines(60, 72, [
            '1450 Larkin Street, Suite 210',
            'San Francisco, CA 94109',
            'billing@northwind-design.example',
          ]);
          s.text(552, 50, 'INVOICE', { size: 22, bold: true, align: 'right' });
          const fields: Array<[string, string]> = [
            ['Invoice Number', 'NW-2026-0142'],
            ['Invoice Date', 'February 12, 2026'],
            ['Due Date', 'March 14, 2026'],
            ['Amount Due', '$2,480.00'],
          ];
          fields.forEach(([label, value], i) => {
            s.text(420, 90 + i * 34, label, { bold: true });
            s.text(420, 104 + i * 34, value);
          });
          s.text(60, 150, 'Bill To', { bold: true });
          s.lines(60, 166, CUSTOMER);
          const end = s.table(
            250,
            [{ x: 60 }, { x: 380, align: 'right' }, { x: 460, align: 'right' }, { x: 552, align: 'right' }],
            ['Description', 'Hours', 'Rate', 'Amount'],
            [
              ['Brand identity refresh', '16', '$95.00', '$1,520.00'],
              ['Brochure layout, 8 pages', '8', '$95.00', '$760.00'],
              ['Print-ready file preparation', '2', '$100.00', '$200.00'],
            ],
          );
          s.text(460, end + 6, 'Total', { bold: true, align: 'right' });
          s.text(552, end + 6, '$2,480.00', { bold: true, align: 'right' });
          s.text(60, end + 50, 'Payment terms: Net 30. Thank you for your business.');
        },
        'Invoice NW-2026-0142',
        'Northwind Graphic Design LLC',
      ),
  },
  {
    expect: {
      file: 'invoice-far-column.pdf',
      layout: 'labels on the left, values in a far right column, leader dots',
      invoice_number: '58812-A',
      amount_due_cents: 84210,
      due_date: '2026-02-27',
      sender: 'Cascade Plumbing & Heating Inc.',
    },
    pdf: () =>
      document(
        (s) => {
          s.text(306, 48, 'Cascade Plumbing & Heating Inc.', { size: 16, bold: true, align: 'center' });
          s.text(306, 70, '2200 Industrial Way  -  Tacoma, WA 98421  -  (253) 555-0188', { align: 'center' });
          s.rule(60, 88, 552);
          const rows: Array<[string, string]> = [
            ['Invoice No.', '58812-A'],
            ['Service Date', '01/28/2026'],
            ['Technician', 'R. Alvarez'],
            ['Payment Due', '02/27/2026'],
          ];
          rows.forEach(([label, value], i) => {
            s.text(60, 104 + i * 16, label);
            s.text(552, 104 + i * 16, value, { align: 'right' });
          });
          s.text(60, 184, 'Customer', { bold: true });
          s.lines(60, 200, CUSTOMER);
          const end = s.table(
            260,
            [{ x: 60 }, { x: 552, align: 'right' }],
            ['Work performed', 'Amount'],
            [
              ['Replace water heater anode rod', '$185.00'],
              ['Descale tankless unit', '$240.00'],
              ['Parts and materials', '$367.10'],
              ['Trip charge', '$50.00'],
            ],
          );
          s.text(60, end + 6, 'Total Due ..........................................................', { bold: true });
          s.text(552, end + 6, '$842.10', { bold: true, align: 'right' });
        },
        'Invoice 58812-A',
        'Cascade Plumbing & Heating Inc.',
      ),
  },
  {
    expect: {
      file: 'invoice-header-grid.pdf',
      layout: 'a header grid (values under their labels), line items and a totals block',
      invoice_number: '10234',
      amount_due_cents: 125905,
      due_date: '2026-03-03',
      sender: 'Brightline Office Supply Co.',
      scans: ['invoice-header-grid.png'],
    },
    pdf: () =>
      document(
        (s) => {
          s.text(60, 48, 'Brightline Office Supply Co.', { size: 16, bold: true });
          s.lines(60, 70, ['88 Commerce Park Drive', 'Columbus, OH 43215']);
          s.text(552, 48, 'INVOICE', { size: 20, bold: true, align: 'right' });
          const grid: Array<[number, string, string]> = [
            [60, 'Invoice #', '10234'],
            [160, 'Invoice Date', '02/01/2026'],
            [270, 'Customer ID', 'C-00871'],
            [380, 'Terms', 'Net 30'],
            [470, 'Due Date', '03/03/2026'],
          ];
          s.box(55, 112, 502, 40);
          for (const [x, label, value] of grid) {
            s.text(x, 118, label, { bold: true });
            s.text(x, 136, value);
          }
          s.text(60, 170, 'Ship To', { bold: true });
          s.lines(60, 186, CUSTOMER);
          const end = s.table(
            250,
            [{ x: 60 }, { x: 330, align: 'right' }, { x: 430, align: 'right' }, { x: 552, align: 'right' }],
            ['Item', 'Qty', 'Unit Price', 'Amount'],
            [
              ['Copy paper, 10-ream case', '12', '$45.00', '$540.00'],
              ['Toner cartridge, black', '4', '$110.00', '$440.00'],
              ['Ergonomic desk chair mat', '2', '$80.00', '$160.00'],
            ],
          );
          const totals: Array<[string, string]> = [
            ['Subtotal', '$1,140.00'],
            ['Sales Tax (8.25%)', '$94.05'],
            ['Shipping', '$25.00'],
            ['Total', '$1,259.05'],
            ['Amount Paid', '$0.00'],
            ['Balance Due', '$1,259.05'],
          ];
          totals.forEach(([label, value], i) => {
            s.text(400, end + 6 + i * 16, label, { bold: label === 'Balance Due' });
            s.text(552, end + 6 + i * 16, value, { align: 'right', bold: label === 'Balance Due' });
          });
        },
        'Invoice 10234',
        'Brightline Office Supply Co.',
      ),
  },
  {
    expect: {
      file: 'statement-amount-further.pdf',
      layout: '"Total amount due on <date>" with the amount further along the line',
      invoice_number: 'SR-88213',
      amount_due_cents: 123456,
      due_date: '2026-03-03',
      sender: 'Summit Ridge Property Management',
    },
    pdf: () =>
      document(
        (s) => {
          s.text(60, 48, 'Summit Ridge Property Management', { size: 15, bold: true });
          s.lines(60, 68, ['410 Alpine Road', 'Denver, CO 80203']);
          s.text(60, 120, 'Resident Statement', { size: 13, bold: true });
          s.text(60, 140, 'Statement Number');
          s.text(200, 140, 'SR-88213');
          s.text(60, 156, 'Statement Date');
          s.text(200, 156, 'February 15, 2026');
          s.lines(380, 120, CUSTOMER);
          const end = s.table(
            200,
            [{ x: 60 }, { x: 552, align: 'right' }],
            ['Charge', 'Amount'],
            [
              ['Rent, March 2026', '$1,150.00'],
              ['Water and trash', '$64.56'],
              ['Parking space 14', '$20.00'],
            ],
          );
          s.text(60, end + 10, 'Total amount due on March 3, 2026 ..........................................', {
            bold: true,
          });
          s.text(552, end + 10, '$1,234.56', { bold: true, align: 'right' });
          s.text(60, end + 40, 'A late fee of $75.00 applies to payments received after the due date.');
        },
        'Statement SR-88213',
        'Summit Ridge Property Management',
      ),
  },
  {
    expect: {
      file: 'remittance-stub.pdf',
      layout: 'a tear-off remittance stub with a label row over a value row and a remit-to block',
      invoice_number: 'EL-40917',
      amount_due_cents: 18500,
      due_date: '2026-03-10',
      sender: 'Evergreen Lawn Care',
    },
    pdf: () =>
      document(
        (s) => {
          s.text(60, 48, 'EVERGREEN LAWN CARE', { size: 18, bold: true });
          s.text(60, 72, 'Seasonal service invoice');
          s.lines(380, 48, CUSTOMER);
          const end = s.table(
            140,
            [{ x: 60 }, { x: 552, align: 'right' }],
            ['Service', 'Amount'],
            [
              ['Spring aeration and overseeding', '$120.00'],
              ['Mulch delivery and spreading', '$65.00'],
            ],
          );
          s.text(60, end + 10, 'Thank you! Payment is due within 30 days of the invoice date.');
          s.rule(40, 560, 572, true);
          s.text(306, 568, 'Please detach and return this portion with your payment', { size: 8, align: 'center' });
          const stub: Array<[number, string, string]> = [
            [60, 'Account Number', '7730-55'],
            [190, 'Invoice Number', 'EL-40917'],
            [320, 'Due Date', '03/10/2026'],
            [430, 'Amount Due', '$185.00'],
          ];
          for (const [x, label, value] of stub) {
            s.text(x, 592, label, { bold: true, size: 9 });
            s.text(x, 608, value);
          }
          s.text(430, 630, 'Amount Enclosed $__________', { size: 9 });
          s.text(60, 660, 'Make checks payable to:', { size: 9 });
          s.lines(60, 676, ['Evergreen Lawn Care', 'PO Box 2231', 'Boise, ID 83701']);
        },
        'Invoice EL-40917',
        'Evergreen Lawn Care',
      ),
  },
  {
    expect: {
      file: 'utility-bill.pdf',
      layout: 'utility bill: account box, summary table, "Amount Due by <date>" box',
      invoice_number: '7781203',
      amount_due_cents: 8745,
      due_date: '2026-03-20',
      sender: 'Metro Water & Sewer Authority',
      scans: ['utility-bill.png', 'utility-bill-degraded.png'],
    },
    pdf: () =>
      document(
        (s) => {
          s.text(60, 46, 'Metro Water & Sewer Authority', { size: 16, bold: true });
          s.lines(60, 68, ['PO Box 9120', 'Harrisburg, PA 17105', 'Customer service (717) 555-0142']);
          s.box(360, 44, 192, 76);
          const account: Array<[string, string]> = [
            ['Account Number', '100-2234-889'],
            ['Bill Number', '7781203'],
            ['Billing Date', 'Feb 24, 2026'],
            ['Service Period', 'Jan 20 - Feb 19'],
          ];
          account.forEach(([label, value], i) => {
            s.text(368, 50 + i * 17, label, { size: 9 });
            s.text(544, 50 + i * 17, value, { size: 9, align: 'right' });
          });
          s.text(60, 140, 'Service Address', { bold: true });
          s.lines(60, 156, CUSTOMER);
          s.text(60, 220, 'Account Summary', { size: 12, bold: true });
          const summary: Array<[string, string]> = [
            ['Previous Balance', '$61.20'],
            ['Payment Received - Thank You', '-$61.20'],
            ['Water Charges (6,200 gal)', '$52.10'],
            ['Sewer Charges', '$35.35'],
            ['Total Current Charges', '$87.45'],
          ];
          summary.forEach(([label, value], i) => {
            s.text(60, 240 + i * 16, label);
            s.text(330, 240 + i * 16, value, { align: 'right' });
          });
          s.box(370, 236, 182, 60);
          s.text(380, 244, 'Total Amount Due', { bold: true });
          s.text(544, 244, '$87.45', { bold: true, align: 'right' });
          s.text(380, 266, 'Due Date');
          s.text(544, 266, 'Mar 20, 2026', { align: 'right' });
          s.text(60, 350, 'Payments received after the due date are subject to a 1.5% late charge.');
        },
        'Metro Water & Sewer Authority bill',
        'Metro Water & Sewer Authority',
      ),
  },
  {
    expect: {
      file: 'tax-notice.pdf',
      layout: 'government notice: amount you owe, pay-by date and a separate response deadline',
      invoice_number: 'L1025-4471-09',
      amount_due_cents: 231000,
      due_date: '2026-04-15',
      sender: 'State Department of Taxation',
      scans: ['tax-notice.png'],
    },
    pdf: () =>
      document(
        (s) => {
          s.text(60, 46, 'State Department of Taxation', { size: 15, bold: true });
          s.lines(60, 66, ['Collections Division', '955 Center Street NE', 'Salem, OR 97301']);
          const meta: Array<[string, string]> = [
            ['Notice Number', 'L1025-4471-09'],
            ['Notice Date', 'March 2, 2026'],
            ['Tax Year', '2024'],
            ['Taxpayer ID', 'XXX-XX-4471'],
          ];
          meta.forEach(([label, value], i) => {
            s.text(360, 46 + i * 15, `${label}:`, { size: 9 });
            s.text(552, 46 + i * 15, value, { size: 9, align: 'right' });
          });
          s.lines(60, 140, CUSTOMER);
          s.text(60, 200, 'NOTICE OF BALANCE DUE', { size: 14, bold: true });
          s.lines(60, 222, [
            'Our records show you owe tax, penalty and interest for tax year 2024.',
            'If you already paid the full amount, please disregard this notice.',
          ]);
          const owed: Array<[string, string]> = [
            ['Tax', '$1,980.00'],
            ['Penalty', '$198.00'],
            ['Interest', '$132.00'],
          ];
          owed.forEach(([label, value], i) => {
            s.text(80, 268 + i * 15, label);
            s.text(300, 268 + i * 15, value, { align: 'right' });
          });
          s.text(80, 318, 'Amount you owe', { bold: true });
          s.text(300, 318, '$2,310.00', { bold: true, align: 'right' });
          s.text(80, 336, 'Pay by', { bold: true });
          s.text(300, 336, 'April 15, 2026', { bold: true, align: 'right' });
          s.lines(60, 372, [
            'If you disagree with this notice, you must respond by May 1, 2026.',
            'Interest continues to accrue until the balance is paid in full.',
          ]);
        },
        'Notice L1025-4471-09',
        'State Department of Taxation',
      ),
  },
  {
    expect: {
      file: 'medical-statement.pdf',
      layout: 'medical statement: insurance table and "Patient Balance Due" with "Please pay by"',
      invoice_number: null,
      amount_due_cents: 24500,
      due_date: '2026-03-07',
      sender: 'Harbor Medical Group',
    },
    pdf: () =>
      document(
        (s) => {
          s.text(60, 46, 'Harbor Medical Group', { size: 16, bold: true });
          s.lines(60, 68, ['Patient Billing Office', '3100 Bayview Avenue, Suite 400', 'Tampa, FL 33611']);
          s.text(552, 46, 'PATIENT STATEMENT', { size: 12, bold: true, align: 'right' });
          s.text(400, 70, 'Statement Date: 02/05/2026', { size: 9 });
          s.text(400, 84, 'Account #: 0004471923', { size: 9 });
          s.text(60, 130, 'Patient', { bold: true });
          s.lines(60, 146, CUSTOMER);
          const end = s.table(
            210,
            [{ x: 60 }, { x: 130 }, { x: 370, align: 'right' }, { x: 450, align: 'right' }, { x: 552, align: 'right' }],
            ['Date', 'Description', 'Charges', 'Ins. Paid', 'Adjustment'],
            [
              ['01/09/26', 'Office visit, established patient', '$320.00', '-$230.00', '-$25.00'],
              ['01/09/26', 'MRI, lumbar spine', '$1,100.00', '-$820.00', '-$100.00'],
            ],
          );
          const summary: Array<[string, string]> = [
            ['Total Charges', '$1,420.00'],
            ['Insurance Payments', '-$1,050.00'],
            ['Adjustments', '-$125.00'],
            ['Patient Balance Due', '$245.00'],
          ];
          summary.forEach(([label, value], i) => {
            s.text(360, end + 6 + i * 16, label, { bold: label.startsWith('Patient') });
            s.text(552, end + 6 + i * 16, value, { align: 'right', bold: label.startsWith('Patient') });
          });
          s.text(60, end + 90, 'Please pay by 03/07/2026. Questions? Call (813) 555-0100.');
        },
        'Patient statement',
        'Harbor Medical Group',
      ),
  },
  {
    expect: {
      file: 'insurance-premium.pdf',
      layout: 'insurance premium notice: policy box and a premium table with the due date in a column',
      invoice_number: '4471220-03',
      amount_due_cents: 31850,
      due_date: '2026-04-01',
      sender: 'Pioneer Mutual Insurance Company',
    },
    pdf: () =>
      document(
        (s) => {
          s.text(60, 46, 'Pioneer Mutual Insurance Company', { size: 15, bold: true });
          s.lines(60, 66, ['500 Heritage Plaza', 'Hartford, CT 06103']);
          s.text(60, 112, 'PREMIUM BILLING NOTICE', { size: 13, bold: true });
          s.lines(60, 134, CUSTOMER);
          s.box(360, 108, 192, 62);
          const policy: Array<[string, string]> = [
            ['Policy Number', 'PMI-4471-220'],
            ['Bill #', '4471220-03'],
            ['Policy Period', '01/01/26 - 12/31/26'],
          ];
          policy.forEach(([label, value], i) => {
            s.text(368, 116 + i * 17, label, { size: 9 });
            s.text(544, 116 + i * 17, value, { size: 9, align: 'right' });
          });
          s.table(
            200,
            [{ x: 60 }, { x: 300 }, { x: 552, align: 'right' }],
            ['Installment', 'Due Date', 'Amount'],
            [['Installment 2 of 4', '04/01/2026', '$318.50']],
          );
          s.text(360, 260, 'Total Premium Due', { bold: true });
          s.text(552, 260, '$318.50', { bold: true, align: 'right' });
          s.text(60, 300, 'To avoid a lapse in coverage, your payment must be received by the due date.');
        },
        'Premium notice 4471220-03',
        'Pioneer Mutual Insurance Company',
      ),
  },
];

/** pdftoppm at `dpi`, greyscale, one page. */
function rasterise(pdf: Buffer, dpi: number): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'invoice-fixtures-'));
  try {
    writeFileSync(path.join(dir, 'in.pdf'), pdf);
    execFileSync('pdftoppm', [
      '-r',
      String(dpi),
      '-gray',
      '-png',
      '-singlefile',
      path.join(dir, 'in.pdf'),
      path.join(dir, 'page'),
    ]);
    return readFileSync(path.join(dir, 'page.png'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A poor scan of a clean page: half resolution, a 3x3 blur, faded contrast and speckle noise (fixed seed). */
export function degrade(png: Buffer, seed = 20260201): Buffer {
  const src = PNG.sync.read(png);
  const width = Math.floor(src.width / 2);
  const height = Math.floor(src.height / 2);
  const grey = (x: number, y: number) => src.data[(y * src.width + x) * 4];
  const small = new Float64Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++)
      small[y * width + x] =
        (grey(2 * x, 2 * y) + grey(2 * x + 1, 2 * y) + grey(2 * x, 2 * y + 1) + grey(2 * x + 1, 2 * y + 1)) / 4;
  }
  let state = seed >>> 0;
  const random = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const out = new PNG({ width, height, colorType: 0, inputColorType: 0, bitDepth: 8 });
  const data = Buffer.alloc(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      let n = 0;
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          const yy = y + dy;
          if (xx >= 0 && yy >= 0 && xx < width && yy < height) {
            sum += small[yy * width + xx];
            n++;
          }
        }
      }
      let v = 70 + (sum / n) * 0.65; // faded: black ink prints as dark grey on a grey page
      v += (random() - 0.5) * 40;
      if (random() < 0.02) v = random() < 0.5 ? 40 : 250; // speckles
      // 8 grey levels, as a cheap scanner's compression leaves them (and the file stays small).
      data[y * width + x] = Math.max(0, Math.min(255, Math.round(v / 36) * 36));
    }
  }
  out.data = data;
  return PNG.sync.write(out, { colorType: 0, inputColorType: 0, bitDepth: 8 });
}

async function main() {
  mkdirSync(path.join(OUT, 'scans'), { recursive: true });
  const manifest: InvoiceExpectation[] = [];
  for (const d of DOCUMENTS) {
    const pdf = await d.pdf();
    writeFileSync(path.join(OUT, d.expect.file), pdf);
    manifest.push(d.expect);
    const scans = d.expect.scans ?? [];
    if (!scans.length) continue;
    const clean = rasterise(pdf, 300);
    writeFileSync(path.join(OUT, 'scans', scans[0]), clean);
    for (const name of scans.slice(1)) writeFileSync(path.join(OUT, 'scans', name), degrade(clean));
  }
  writeFileSync(path.join(OUT, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`wrote ${manifest.length} documents to ${OUT}`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
