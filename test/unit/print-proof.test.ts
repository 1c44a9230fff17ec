// The print proof of a letter: page order and counts (address page, duplex blank back,
// document pages), what each document type prints as, and where the address text lands.
// Positions are read back from the rendered PDF with poppler (pdftotext -bbox-layout) and
// colours from a rasterised page (pdftoppm), so the tests see what a viewer sees. Each
// render's warnings are also worked out without rendering (a dry run's) and compared.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { degrees, PDFDocument } from 'pdf-lib';
import { textPageCount } from '../../domain/outbound-mail/documents';
import { formatAddressLines, MailAddress } from '../../domain/outbound-mail/address';
import {
  jpegOrientation,
  PageRect,
  PROOF_LAYOUT,
  printProofWarnings,
  PrintProofInput,
  renderPrintProof as render,
} from '../../domain/outbound-mail/print-proof';

const run = promisify(execFile);
const LAYOUT = PROOF_LAYOUT.letter;
const CREATED_AT = new Date('2026-03-04T05:06:07Z');

const RECIPIENT: MailAddress = {
  name: 'Jane Doe',
  company: 'Acme Widgets Inc.',
  line1: '123 Main Street',
  line2: 'Suite 400',
  city: 'Springfield',
  state: 'IL',
  zip: '62701-1234',
  country: 'US',
};
const RETURN_ADDRESS: MailAddress = {
  name: 'John Sender',
  line1: '1 Return Rd',
  city: 'Austin',
  state: 'TX',
  zip: '78701',
};

interface Box {
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}
interface TextLine extends Box {
  text: string;
}
interface TextPage {
  width: number;
  height: number;
  lines: TextLine[];
}

const num = (attrs: string, name: string) => Number(new RegExp(`${name}="([\\d.]+)"`).exec(attrs)![1]);
const box = (attrs: string): Box => ({
  xMin: num(attrs, 'xMin'),
  yMin: num(attrs, 'yMin'),
  xMax: num(attrs, 'xMax'),
  yMax: num(attrs, 'yMax'),
});
const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

async function withFile<T>(pdf: Uint8Array, use: (file: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'print-proof-'));
  try {
    const file = path.join(dir, 'proof.pdf');
    await writeFile(file, pdf);
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every text line of every page with its box, in points from the page's top-left corner. */
async function textLines(pdf: Uint8Array): Promise<TextPage[]> {
  const { stdout } = await withFile(pdf, (file) =>
    run('pdftotext', ['-bbox-layout', file, '-'], { maxBuffer: 64 * 1024 * 1024 }),
  );
  return [...stdout.matchAll(/<page ([^>]*)>([\s\S]*?)<\/page>/g)].map(([, attrs, body]) => ({
    width: num(attrs, 'width'),
    height: num(attrs, 'height'),
    lines: [...body.matchAll(/<line ([^>]*)>([\s\S]*?)<\/line>/g)].map(([, lineAttrs, words]) => ({
      ...box(lineAttrs),
      text: [...words.matchAll(/<word [^>]*>([^<]*)<\/word>/g)].map((w) => unescapeXml(w[1])).join(' '),
    })),
  }));
}

/** The RGB colour at a point (points from the top-left) of one page, rendered at 36 dpi. */
async function colourAt(pdf: Uint8Array, page: number, x: number, y: number): Promise<[number, number, number]> {
  return withFile(pdf, async (file) => {
    await run('pdftoppm', ['-r', '36', '-f', String(page), '-l', String(page), '-singlefile', file, `${file}.page`]);
    const ppm = await readFile(`${file}.page.ppm`);
    const header = /^P6\s+(\d+)\s+\d+\s+255\s/.exec(ppm.toString('latin1', 0, 50))!;
    // 36 dpi: one pixel is 2 points square.
    const i = header[0].length + (Math.floor(y / 2) * Number(header[1]) + Math.floor(x / 2)) * 3;
    return [ppm[i], ppm[i + 1], ppm[i + 2]];
  });
}

const rectBox = (r: PageRect): Box => ({ xMin: r.x, yMin: r.y, xMax: r.x + r.width, yMax: r.y + r.height });
const inside = (b: Box, r: Box) => b.xMin >= r.xMin && b.yMin >= r.yMin && b.xMax <= r.xMax && b.yMax <= r.yMax;
const overlaps = (b: Box, r: Box) => b.xMin < r.xMax && b.xMax > r.xMin && b.yMin < r.yMax && b.yMax > r.yMin;

/** The lines on the address page that touch `window`, each of which must lie wholly inside it. */
function linesIn(page: TextPage, window: PageRect): string[] {
  const touching = page.lines.filter((l) => overlaps(l, rectBox(window)));
  for (const { text, ...at } of touching) {
    if (!inside(at, rectBox(window)))
      throw new Error(`"${text}" at ${JSON.stringify(at)} crosses the window ${JSON.stringify(window)}`);
  }
  return touching.sort((a, b) => a.yMin - b.yMin).map((l) => l.text);
}

async function pdfOf(pages: Array<{ size?: [number, number]; text: string; rotate?: number }>): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (const p of pages) {
    const page = doc.addPage(p.size ?? [612, 792]);
    page.drawText(p.text, { x: 72, y: page.getHeight() - 100, size: 14 });
    if (p.rotate) page.setRotation(degrees(p.rotate));
  }
  return doc.save();
}

function pngOf(width: number, height: number, colour: (x: number, y: number) => [number, number, number]): Buffer {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r, g, b] = colour(x, y);
      png.data.set([r, g, b, 255], (y * width + x) * 4);
    }
  }
  return PNG.sync.write(png);
}

/** A JPEG with an APP1 Exif segment holding only the orientation tag (big-endian TIFF). */
function jpegWithOrientation(
  width: number,
  height: number,
  orientation: number,
  colour: (x: number, y: number) => [number, number, number],
): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) data.set([...colour(x, y), 255], (y * width + x) * 4);
  const plain = jpeg.encode({ data, width, height }, 95).data;
  const tiff = Buffer.from([
    0x4d,
    0x4d,
    0,
    42,
    0,
    0,
    0,
    8,
    0,
    1,
    0x01,
    0x12,
    0,
    3,
    0,
    0,
    0,
    1,
    0,
    orientation,
    0,
    0,
    0,
    0,
    0,
    0,
  ]);
  const body = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, (body.length + 2) >> 8, (body.length + 2) & 0xff]), body]);
  return Buffer.concat([plain.subarray(0, 2), app1, plain.subarray(2)]);
}

const input = (over: Partial<PrintProofInput> & { document: PrintProofInput['document'] }): PrintProofInput => ({
  recipient: RECIPIENT,
  returnAddress: RETURN_ADDRESS,
  mailClass: 'first_class',
  color: true,
  duplex: false,
  createdAt: CREATED_AT,
  ...over,
});

/**
 * Every proof these tests render is also worked out without rendering, as a dry run does
 * (printProofWarnings): the warnings must be the same, in the same order.
 */
async function renderPrintProof(given: PrintProofInput) {
  const [proof, warnings] = await Promise.all([render(given), printProofWarnings(given).catch((err: Error) => err)]);
  expect(warnings).toEqual(proof.warnings);
  return proof;
}

const RED: [number, number, number] = [255, 0, 0];
const BLUE: [number, number, number] = [0, 0, 255];
const isRed = ([r, g, b]: number[]) => r > 200 && g < 60 && b < 60;
const isBlue = ([r, g, b]: number[]) => b > 200 && r < 60 && g < 60;
const isGray = ([r, g, b]: number[]) => Math.max(r, g, b) - Math.min(r, g, b) <= 3 && r < 200;
const isWhite = ([r, g, b]: number[]) => r > 250 && g > 250 && b > 250;

beforeAll(async () => {
  // The tests read the proof back with poppler; say so plainly if it is missing.
  await run('pdftotext', ['-v']).catch(() => {
    throw new Error('poppler-utils (pdftotext, pdftoppm) is needed: apt-get install poppler-utils');
  });
});

describe('renderPrintProof: pages and sheets', () => {
  it('puts the address page in front of a 2-page PDF, whose pages follow unchanged (simplex: one page a sheet)', async () => {
    const proof = await renderPrintProof(
      input({
        document: {
          bytes: await pdfOf([{ text: 'Document page 1' }, { text: 'Document page 2' }]),
          kind: 'pdf',
          pageCount: 2,
        },
      }),
    );
    expect(proof).toMatchObject({
      pageCount: 3,
      sheets: 3,
      addressPageAdded: true,
      firstDocumentPage: 2,
      grayscale: false,
      warnings: [],
    });

    const doc = await PDFDocument.load(proof.pdf, { updateMetadata: false });
    expect(doc.getPages().map((p) => [p.getWidth(), p.getHeight()])).toEqual([
      [612, 792],
      [612, 792],
      [612, 792],
    ]);
    expect(doc.getTitle()).toBe('Print proof');
    expect(doc.getProducer()).toBe('postal-mail-api print proof');
    expect(doc.getCreationDate()).toEqual(CREATED_AT);
    expect(doc.getModificationDate()).toEqual(CREATED_AT);

    const pages = await textLines(proof.pdf);
    expect(pages.map((p) => p.lines.map((l) => l.text))).toEqual([
      expect.arrayContaining(['Proof \u2014 postal-mail-api']),
      ['Document page 1'],
      ['Document page 2'],
    ]);
  });

  it('duplex: the address page gets a blank back, so the letter starts on the second sheet', async () => {
    const two = await renderPrintProof(
      input({
        duplex: true,
        document: {
          bytes: await pdfOf([{ text: 'Document page 1' }, { text: 'Document page 2' }]),
          kind: 'pdf',
          pageCount: 2,
        },
      }),
    );
    expect(two).toMatchObject({ pageCount: 4, sheets: 2, firstDocumentPage: 3 });
    const pages = await textLines(two.pdf);
    expect(pages).toHaveLength(4);
    expect(pages[1].lines).toEqual([]);
    expect(pages.slice(2).map((p) => p.lines.map((l) => l.text))).toEqual([['Document page 1'], ['Document page 2']]);

    const three = await renderPrintProof(
      input({
        duplex: true,
        document: { bytes: await pdfOf([1, 2, 3].map((n) => ({ text: `p${n}` }))), kind: 'pdf', pageCount: 3 },
      }),
    );
    expect(three).toMatchObject({ pageCount: 5, sheets: 3 });
  });

  it('is the same bytes for the same input, dates included', async () => {
    const bytes = await pdfOf([{ text: 'Same' }]);
    const a = await renderPrintProof(input({ document: { bytes, kind: 'pdf', pageCount: 1 } }));
    const b = await renderPrintProof(input({ document: { bytes, kind: 'pdf', pageCount: 1 } }));
    expect(Buffer.from(a.pdf).equals(Buffer.from(b.pdf))).toBe(true);
    const later = await renderPrintProof(
      input({ createdAt: new Date('2026-03-05T00:00:00Z'), document: { bytes, kind: 'pdf', pageCount: 1 } }),
    );
    expect(Buffer.from(later.pdf).equals(Buffer.from(a.pdf))).toBe(false);
  });

  it('scales a non-Letter page to fit Letter and turns a rotated page as viewers show it', async () => {
    const a4: [number, number] = [595.28, 841.89];
    const proof = await renderPrintProof(
      input({
        document: {
          bytes: await pdfOf([
            { size: a4, text: 'A4 page' },
            { size: [a4[1], a4[0]], text: 'Turned page', rotate: 90 },
            { size: [792, 612], text: 'Landscape letter' },
          ]),
          kind: 'pdf',
          pageCount: 3,
        },
      }),
    );
    const doc = await PDFDocument.load(proof.pdf);
    expect(doc.getPages().map((p) => [p.getWidth(), p.getHeight()])).toEqual([
      [612, 792],
      [612, 792],
      [612, 792],
      [792, 612],
    ]);
    expect(proof.warnings).toEqual([
      'page 1 is 8.27 x 11.69 in, not US Letter; it is scaled to 94% to fit',
      'page 2 is 8.27 x 11.69 in, not US Letter; it is scaled to 94% to fit',
    ]);
    const pages = await textLines(proof.pdf);
    const [a4Line] = pages[1].lines;
    const [turned] = pages[2].lines;
    expect(a4Line.text).toBe('A4 page');
    // Drawn 72 pt in and 100 pt down on A4, scaled by 0.94 and centred (about 7 pt of side margin).
    expect(a4Line.xMin).toBeCloseTo((612 - 595.28 * (792 / 841.89)) / 2 + 72 * (792 / 841.89), 0);
    // Turned a quarter clockwise, as viewers show it: the page is portrait, the text runs down
    // the page, and what was the top edge (where the text was drawn) is now the right-hand side.
    expect(turned.text).toBe('Turned page');
    expect(turned.xMax - turned.xMin).toBeLessThan(turned.yMax - turned.yMin);
    expect(turned.xMin).toBeGreaterThan(306);
  });

  it('prints a blank non-Letter page (one without content) as a blank Letter page', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([595.28, 841.89]);
    doc.addPage([595.28, 841.89]).drawText('After the blank page', { x: 72, y: 700, size: 14 });
    const proof = await renderPrintProof(input({ document: { bytes: await doc.save(), kind: 'pdf', pageCount: 2 } }));
    const rendered = await PDFDocument.load(proof.pdf);
    expect(rendered.getPages().map((p) => [p.getWidth(), p.getHeight()])).toEqual([
      [612, 792],
      [612, 792],
      [612, 792],
    ]);
    const pages = await textLines(proof.pdf);
    expect(pages[1].lines).toEqual([]);
    expect(pages[2].lines.map((l) => l.text)).toEqual(['After the blank page']);
  });

  it('says when the piece is more sheets than a #10 envelope holds', async () => {
    const proof = await renderPrintProof(
      input({
        document: { bytes: await pdfOf([1, 2, 3, 4, 5, 6].map((n) => ({ text: `p${n}` }))), kind: 'pdf', pageCount: 6 },
      }),
    );
    expect(proof.sheets).toBe(7);
    expect(proof.warnings).toEqual([
      'the piece is 7 sheets; a #10 double window envelope holds at most 6, so the window positions shown may not match the envelope used',
    ]);
  });

  it('refuses a mail class that is not a letter class', async () => {
    await expect(
      renderPrintProof(
        input({
          mailClass: 'postcard_4x6',
          document: { bytes: await pdfOf([{ text: 'x' }]), kind: 'pdf', pageCount: 1 },
        }),
      ),
    ).rejects.toThrow(/not a letter mail class/);
  });
});

describe('renderPrintProof: the address page', () => {
  it('prints the recipient inside the recipient window and the return address inside the return window, nothing else in them', async () => {
    const proof = await renderPrintProof(
      input({ document: { bytes: await pdfOf([{ text: 'Body' }]), kind: 'pdf', pageCount: 1 } }),
    );
    const [addressPage] = await textLines(proof.pdf);
    expect(linesIn(addressPage, LAYOUT.recipientWindow)).toEqual(formatAddressLines(RECIPIENT));
    expect(linesIn(addressPage, LAYOUT.returnWindow)).toEqual(formatAddressLines(RETURN_ADDRESS));
    // Inset from the window's left and top edges by the documented clearance.
    const first = addressPage.lines.find((l) => l.text === 'Jane Doe')!;
    expect(first.xMin).toBeCloseTo(LAYOUT.recipientWindow.x + LAYOUT.windowInset, 1);
    expect(first.yMin).toBeGreaterThanOrEqual(LAYOUT.recipientWindow.y + LAYOUT.windowInset - 0.5);
    const mark = addressPage.lines.find((l) => l.text === 'Proof \u2014 postal-mail-api')!;
    expect(overlaps(mark, rectBox(LAYOUT.recipientWindow)) || overlaps(mark, rectBox(LAYOUT.returnWindow))).toBe(false);
    expect(addressPage.lines.map((l) => l.text)).toContain(
      'first_class \u00b7 color \u00b7 single-sided \u00b7 2 pages on 2 sheets, this address page included',
    );
    expect(proof.addressBlocks.recipient).toMatchObject({
      lines: formatAddressLines(RECIPIENT),
      fontSize: expect.any(Number),
    });
    expect(proof.addressBlocks.recipient.fontSize).toBeLessThanOrEqual(10);
    expect(proof.addressBlocks.recipient.fontSize).toBeGreaterThanOrEqual(8);
  });

  it('prints a 4-line address at 10 pt and leaves the return window empty without a return address', async () => {
    const recipient: MailAddress = {
      name: 'JANE DOE',
      line1: '123 MAIN ST',
      city: 'SPRINGFIELD',
      state: 'IL',
      zip: '62701',
    };
    const proof = await renderPrintProof(
      input({
        recipient,
        returnAddress: null,
        document: { bytes: await pdfOf([{ text: 'Body' }]), kind: 'pdf', pageCount: 1 },
      }),
    );
    const [addressPage] = await textLines(proof.pdf);
    expect(linesIn(addressPage, LAYOUT.recipientWindow)).toEqual(['JANE DOE', '123 MAIN ST', 'SPRINGFIELD, IL 62701']);
    expect(linesIn(addressPage, LAYOUT.returnWindow)).toEqual([]);
    expect(proof.addressBlocks).toEqual({ recipient: expect.objectContaining({ fontSize: 10 }), returnAddress: null });
  });

  it('fits six lines by shrinking, and cuts a line too long even at 8 pt with an ellipsis and a warning', async () => {
    const six: MailAddress = { ...RECIPIENT, country: 'PR' };
    const fitted = await renderPrintProof(
      input({ recipient: six, document: { bytes: await pdfOf([{ text: 'Body' }]), kind: 'pdf', pageCount: 1 } }),
    );
    expect(fitted.warnings).toEqual([]);
    expect(fitted.addressBlocks.recipient.fontSize).toBeLessThan(10);
    expect(linesIn((await textLines(fitted.pdf))[0], LAYOUT.recipientWindow)).toEqual(formatAddressLines(six));

    const long: MailAddress = {
      ...RECIPIENT,
      company: 'The Extraordinarily Long-Named International Consolidated Widget Manufacturing Company of Springfield',
    };
    const cut = await renderPrintProof(
      input({
        recipient: long,
        returnAddress: {
          ...RETURN_ADDRESS,
          line1: '1 Return Road, Building Seventeen, Floor Forty-Two, Austin Technology Park',
        },
        document: { bytes: await pdfOf([{ text: 'Body' }]), kind: 'pdf', pageCount: 1 },
      }),
    );
    expect(cut.addressBlocks.recipient.fontSize).toBe(8);
    const printedCompany = cut.addressBlocks.recipient.lines[1];
    expect(printedCompany.endsWith('\u2026')).toBe(true);
    expect(long.company!.startsWith(printedCompany.slice(0, -1))).toBe(true);
    expect(cut.warnings).toEqual([
      expect.stringMatching(
        /^return address line 2 is too long for the window at 8 pt and is cut to "1 Return Road, Building/,
      ),
      `recipient line 2 is too long for the window at 8 pt and is cut to "${printedCompany}"`,
    ]);
    const [addressPage] = await textLines(cut.pdf);
    expect(linesIn(addressPage, LAYOUT.recipientWindow)).toEqual(cut.addressBlocks.recipient.lines);
    expect(linesIn(addressPage, LAYOUT.returnWindow)).toEqual(cut.addressBlocks.returnAddress!.lines);
  });

  it('prints characters Helvetica lacks as their plain letter or ?, with a warning, instead of failing', async () => {
    const recipient: MailAddress = {
      name: 'Łukasz Żółć 😀',
      line1: 'Ōmura-dōri 5',
      city: 'São Paulo',
      state: 'NY',
      zip: '10001',
    };
    const proof = await renderPrintProof(
      input({ recipient, document: { bytes: await pdfOf([{ text: 'Body' }]), kind: 'pdf', pageCount: 1 } }),
    );
    expect(proof.addressBlocks.recipient.lines).toEqual(['?ukasz Zó?c ?', 'Omura-dori 5', 'São Paulo, NY 10001']);
    expect(proof.warnings).toEqual(["recipient line 1: characters the printer's font lacks print as '?'"]);
    expect(linesIn((await textLines(proof.pdf))[0], LAYOUT.recipientWindow)).toEqual([
      '?ukasz Zó?c ?',
      'Omura-dori 5',
      'São Paulo, NY 10001',
    ]);
  });
});

describe('renderPrintProof: documents other than PDF', () => {
  it('places a PNG scaled to fit inside the margins, centred; a black-and-white piece shows it in gray', async () => {
    const png = pngOf(300, 100, () => RED);
    const colour = await renderPrintProof(input({ document: { bytes: png, kind: 'png', pageCount: 1 } }));
    expect(colour).toMatchObject({ pageCount: 2, sheets: 2, grayscale: false, warnings: [] });
    const doc = await PDFDocument.load(colour.pdf);
    expect([doc.getPage(1).getWidth(), doc.getPage(1).getHeight()]).toEqual([612, 792]);
    // 3:1 fills the 7.5 in between the side margins: 540 x 180 pt, centred at 396 pt down.
    expect(isRed(await colourAt(colour.pdf, 2, 306, 396))).toBe(true);
    expect(isRed(await colourAt(colour.pdf, 2, 40, 396))).toBe(true);
    expect(isWhite(await colourAt(colour.pdf, 2, 30, 396))).toBe(true);
    expect(isWhite(await colourAt(colour.pdf, 2, 306, 396 - 100))).toBe(true);

    const gray = await renderPrintProof(input({ color: false, document: { bytes: png, kind: 'png', pageCount: 1 } }));
    expect(gray.grayscale).toBe(true);
    expect(isGray(await colourAt(gray.pdf, 2, 306, 396))).toBe(true);
    // The paper around the image stays white.
    expect(isWhite(await colourAt(gray.pdf, 2, 306, 396 - 100))).toBe(true);
    expect(isWhite(await colourAt(gray.pdf, 2, 20, 20))).toBe(true);
  });

  it('turns a JPEG upright by its EXIF orientation', async () => {
    // Stored 80 x 40, left half red, right half blue; orientation 6 shows it turned a quarter clockwise: 40 x 80, red on top.
    const photo = jpegWithOrientation(80, 40, 6, (x) => (x < 40 ? RED : BLUE));
    expect(jpegOrientation(photo)).toBe(6);
    const proof = await renderPrintProof(input({ document: { bytes: photo, kind: 'jpg', pageCount: 1 } }));
    expect(proof.warnings).toEqual([
      'the photo is stored turned (EXIF orientation 6); it is printed upright, as it is shown',
    ]);
    // 1:2 fills the 10 in between top and bottom margins: 360 x 720 pt, centred.
    expect(isRed(await colourAt(proof.pdf, 2, 306, 200))).toBe(true);
    expect(isBlue(await colourAt(proof.pdf, 2, 306, 600))).toBe(true);
    expect(isWhite(await colourAt(proof.pdf, 2, 110, 396))).toBe(true);
    expect(isRed(await colourAt(proof.pdf, 2, 140, 200))).toBe(true);

    const plain = await renderPrintProof(
      input({
        document: { bytes: jpegWithOrientation(80, 40, 1, (x) => (x < 40 ? RED : BLUE)), kind: 'jpg', pageCount: 1 },
      }),
    );
    expect(isRed(await colourAt(plain.pdf, 2, 100, 396))).toBe(true);
    expect(isBlue(await colourAt(plain.pdf, 2, 500, 396))).toBe(true);
  });

  it('typesets TXT in the counted lines: 80-column wrap, 66 lines a page, form feeds, ? for characters Courier lacks', async () => {
    const longLine = 'x'.repeat(100);
    const lines = [
      'Dear Sir,',
      longLine,
      'Café ✓ 😀 “quoted”',
      ...Array.from({ length: 70 }, (_, i) => `line ${i + 1}`),
    ];
    const text = `${lines.join('\n')}\n\fAfter the form feed\n`;
    const bytes = Buffer.from(text, 'utf8');
    const proof = await renderPrintProof(input({ document: { bytes, kind: 'txt', pageCount: textPageCount(text) } }));
    expect(textPageCount(text)).toBe(3);
    expect(proof).toMatchObject({ pageCount: 4, sheets: 4 });
    expect(proof.warnings).toEqual(["1 line of the text hold characters the printer's font lacks; they print as '?'"]);

    const pages = await textLines(proof.pdf);
    const first = pages[1].lines;
    expect(first.slice(0, 4).map((l) => l.text)).toEqual([
      'Dear Sir,',
      'x'.repeat(80),
      'x'.repeat(20),
      'Café ? ? “quoted”',
    ]);
    expect(first[0].xMin).toBeCloseTo(LAYOUT.text.left, 1);
    expect(first).toHaveLength(66);
    expect(first[65].text).toBe('line 62');
    expect(pages[2].lines.map((l) => l.text)).toEqual([
      'line 63',
      'line 64',
      'line 65',
      'line 66',
      'line 67',
      'line 68',
      'line 69',
      'line 70',
    ]);
    expect(pages[3].lines.map((l) => l.text)).toEqual(['After the form feed']);
  });

  it('typesets CSV the same way, and says when the printed pages differ from the counted ones', async () => {
    const csv = 'name,city\nAda,London\nGrace,Arlington\n';
    const proof = await renderPrintProof(input({ document: { bytes: Buffer.from(csv), kind: 'csv', pageCount: 2 } }));
    expect(proof.pageCount).toBe(2);
    expect((await textLines(proof.pdf))[1].lines.map((l) => l.text)).toEqual([
      'name,city',
      'Ada,London',
      'Grace,Arlington',
    ]);
    expect(proof.warnings).toEqual(['the document prints on 1 page; the piece is counted at 2']);
  });
});

describe('jpegOrientation', () => {
  it('is 1 without an Exif segment, for a cut-off segment and for a value out of range', () => {
    const plain = jpeg.encode({ data: Buffer.alloc(4 * 4 * 4, 255), width: 4, height: 4 }, 90).data;
    expect(jpegOrientation(plain)).toBe(1);
    const nine = jpegWithOrientation(4, 4, 9, () => RED);
    expect(jpegOrientation(nine)).toBe(1);
    const eight = jpegWithOrientation(4, 4, 8, () => RED);
    expect(jpegOrientation(eight)).toBe(8);
    expect(jpegOrientation(eight.subarray(0, 30))).toBe(1);
  });
});
