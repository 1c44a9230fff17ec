// The print-ready proof of an outbound letter: the PDF the facility prints, shown to the
// sender before paying. An address page comes first (the return address and the recipient
// placed in the windows of a #10 double-window envelope), with duplex a blank back so the
// letter starts on its own sheet, then the document's pages as they print on US Letter.
// Pure: bytes in, bytes out, no I/O and no clock (dates come from the input).
//
// The input document must already have passed inspectDocument (documents.ts): the
// type is trusted and the PDF guards (size, decompression budget, page limit, encryption)
// are not repeated here.
import {
  fill,
  PDFArray,
  PDFDocument,
  PDFFont,
  PDFName,
  PDFPage,
  popGraphicsState,
  pushGraphicsState,
  rectangle,
  setFillingGrayscaleColor,
  setGraphicsState,
  StandardFonts,
} from 'pdf-lib';
import { DocumentType, TEXT_COLUMNS, TEXT_LINES_PER_PAGE } from './documents';
import { formatAddressLines, MailAddress } from './address';
import { isMailClass, sheetCount } from './pricing';
import { addDocumentPages, documentPageWarnings, INCH, jpegOrientation, plural, printable } from './proof-pages';
import type { PageRect, PrintProofInput, ProofLayout } from './proof-pages';

export { jpegOrientation };
export type { PageRect, PrintProofInput, ProofLayout };

/**
 * The proof layout per form factor, in points from the page's top-left corner.
 *
 * Envelope: the standard #10 double-window outer envelope (face 9.5 x 4.125 in) as Lob
 * publishes it (help.lob.com, "Letter envelopes": window #1 0.875 x 3.25 in, 0.625 in from
 * the left edge and 2.375 in from the bottom; window #2 1 x 4 in, 0.625 in from the left
 * and 1 in from the bottom; up to 6 tri-folded sheets). From the top edge that puts the
 * return window at 0.875 in and the recipient window at 2.125 in. The proof assumes the
 * folded sheet's top panel sits in the envelope's top-left corner, so envelope and page
 * coordinates coincide. The 1/8 in inset is the clearance USPS asks between an address
 * and every window edge; it takes up only a little of the folded sheet's play in the
 * envelope, so keeping the sheet registered is the facility's folding and inserting.
 *
 * Address type: Helvetica 10 pt (USPS addressing guidance recommends 10-12 pt), shrinking
 * to 8 pt, where Helvetica's capitals (0.718 em) are 0.08 in high, the smallest character
 * height that guidance allows, before a line is cut.
 */
export const PROOF_LAYOUT: { readonly letter: ProofLayout } = {
  letter: {
    formFactor: 'letter',
    page: { width: 8.5 * INCH, height: 11 * INCH },
    envelope: {
      name: '#10 double window',
      width: 9.5 * INCH,
      height: 4.125 * INCH,
      maxSheets: 6,
      source: 'https://help.lob.com/print-and-mail/designing-mail-creatives/mail-piece-design-specs/letter-envelopes',
    },
    returnWindow: { x: 0.625 * INCH, y: 0.875 * INCH, width: 3.25 * INCH, height: 0.875 * INCH },
    recipientWindow: { x: 0.625 * INCH, y: 2.125 * INCH, width: 4 * INCH, height: 1 * INCH },
    windowInset: 0.125 * INCH,
    addressFont: { font: StandardFonts.Helvetica, maxSize: 10, minSize: 8, sizeStep: 0.5, lineHeight: 1.15 },
    proofMark: {
      text: 'Proof \u2014 postal-mail-api',
      font: StandardFonts.Helvetica,
      size: 7,
      x: 0.625 * INCH,
      baselinesFromTop: [10.25 * INCH, 10.4 * INCH],
    },
    imageMargin: 0.5 * INCH,
    // 66 lines fill the 10 in between half-inch margins; 80 Courier columns at 10 pt are 6.67 in wide.
    text: {
      font: StandardFonts.Courier,
      size: 10,
      left: 0.5 * INCH,
      top: 0.5 * INCH,
      lineHeight: (10 * INCH) / TEXT_LINES_PER_PAGE,
      columns: TEXT_COLUMNS,
      linesPerPage: TEXT_LINES_PER_PAGE,
    },
  },
};

/** One address block as printed: its lines after any cut, its size, and the box its glyphs occupy. */
export interface AddressBlock {
  lines: string[];
  fontSize: number;
  rect: PageRect;
}

export interface PrintProof {
  pdf: Uint8Array;
  /** Pages in the proof: the address page, its blank back with duplex, then the document's pages. */
  pageCount: number;
  /** Sheets of paper: pageCount, or ceil(pageCount / 2) with duplex. */
  sheets: number;
  addressPageAdded: boolean;
  /** The 1-based proof page the document begins on (2, or 3 with duplex). */
  firstDocumentPage: number;
  /** Black-and-white pieces are shown in gray, as printed. */
  grayscale: boolean;
  layout: ProofLayout;
  addressBlocks: { recipient: AddressBlock; returnAddress: AddressBlock | null };
  /** What the proof had to change or cannot show: cut address lines, replaced characters, scaled pages, a page count that differs from the charged one. */
  warnings: string[];
}

/**
 * The warnings of the document's page count against the charged one and of the sheets
 * against the envelope, given how many pages the document prints on; returns the sheets.
 */
function checkPageCounts(
  input: PrintProofInput,
  documentPages: number,
  layout: ProofLayout,
  warnings: string[],
): number {
  if (documentPages !== input.document.pageCount) {
    warnings.push(
      `the document prints on ${documentPages} page${plural(documentPages)}; the piece is counted at ${input.document.pageCount}`,
    );
  }
  const pageCount = (input.duplex ? 2 : 1) + documentPages;
  const sheets = sheetCount(pageCount, input.duplex);
  if (sheets > layout.envelope.maxSheets) {
    warnings.push(
      `the piece is ${sheets} sheets; a ${layout.envelope.name} envelope holds at most ${layout.envelope.maxSheets}, so the window positions shown may not match the envelope used`,
    );
  }
  return sheets;
}

/** Both address blocks laid out in their windows (the return address first, as warnings list them). */
function layoutAddressBlocks(
  input: PrintProofInput,
  font: PDFFont,
  layout: ProofLayout,
  warnings: string[],
): { recipient: AddressBlock; returnAddress: AddressBlock | null } {
  const returnAddress = input.returnAddress
    ? layoutAddressBlock(
        font,
        formatAddressLines(input.returnAddress),
        layout.returnWindow,
        layout,
        'return address',
        warnings,
      )
    : null;
  const recipient = layoutAddressBlock(
    font,
    formatAddressLines(input.recipient),
    layout.recipientWindow,
    layout,
    'recipient',
    warnings,
  );
  return { recipient, returnAddress };
}

function checkInput(input: PrintProofInput): void {
  if (!isMailClass(input.mailClass))
    throw new TypeError(`renderPrintProof lays out letters; ${input.mailClass} is not a letter mail class`);
  if (!Number.isInteger(input.document.pageCount) || input.document.pageCount < 1)
    throw new TypeError('document.pageCount must be a positive integer');
  if (Number.isNaN(input.createdAt.getTime())) throw new TypeError('createdAt must be a valid date');
}

/** Fonts measured without a proof to draw them in (one document, made once). */
let measuringFonts: Promise<{ address: PDFFont; text: PDFFont }> | undefined;

/**
 * The warnings renderPrintProof would give for `input`, in the same order, without
 * rendering: a PDF's page boxes and /Rotate (its pages are read, not copied or drawn), an
 * image's EXIF orientation, text's characters, the page and sheet counts, and the address
 * blocks measured in the proof's font. What a dry run says before anyone opens its proof.
 */
export async function printProofWarnings(input: PrintProofInput): Promise<string[]> {
  checkInput(input);
  const layout = PROOF_LAYOUT.letter;
  const warnings: string[] = [];
  measuringFonts ??= (async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    return { address: await doc.embedFont(layout.addressFont.font), text: await doc.embedFont(layout.text.font) };
  })();
  const fonts = await measuringFonts;
  const documentPages = await documentPageWarnings(input.document, layout, fonts.text, warnings);
  checkPageCounts(input, documentPages, layout, warnings);
  layoutAddressBlocks(input, fonts.address, layout, warnings);
  return warnings;
}

/** Renders the proof of a letter; throws only on input no inspected document or accepted piece can have. */
export async function renderPrintProof(input: PrintProofInput): Promise<PrintProof> {
  checkInput(input);
  const layout = PROOF_LAYOUT.letter;
  const warnings: string[] = [];

  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle('Print proof');
  doc.setProducer('postal-mail-api print proof');
  doc.setCreator('postal-mail-api');
  doc.setCreationDate(input.createdAt);
  doc.setModificationDate(input.createdAt);

  const addressPage = doc.addPage([layout.page.width, layout.page.height]);
  if (input.duplex) doc.addPage([layout.page.width, layout.page.height]);
  const firstDocumentPage = doc.getPageCount() + 1;

  // pdf-lib's JPEG reader views the whole underlying ArrayBuffer, so a Buffer that is a
  // slice of a larger one (Node's pooled buffers, S3 bodies) must be copied out first.
  const { bytes } = input.document;
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
  const documentPages = await addDocumentPages(doc, { ...input.document, bytes: whole }, layout, warnings);
  const pageCount = doc.getPageCount();
  const sheets = checkPageCounts(input, documentPages.length, layout, warnings);
  if (!input.color) for (const page of documentPages) showInGray(doc, page);

  const addressFont = await doc.embedFont(layout.addressFont.font);
  const blocks = layoutAddressBlocks(input, addressFont, layout, warnings);
  const returnAddress = blocks.returnAddress
    ? drawAddressBlock(addressPage, addressFont, blocks.returnAddress, layout)
    : null;
  const recipient = drawAddressBlock(addressPage, addressFont, blocks.recipient, layout);
  const markFont =
    layout.proofMark.font === layout.addressFont.font ? addressFont : await doc.embedFont(layout.proofMark.font);
  const details = [
    input.mailClass,
    input.color ? 'color' : 'black and white',
    input.duplex ? 'double-sided' : 'single-sided',
    `${pageCount} page${plural(pageCount)} on ${sheets} sheet${plural(sheets)}, this address page included`,
  ].join(' \u00b7 ');
  [layout.proofMark.text, details].forEach((text, i) => {
    addressPage.drawText(printable(text, markFont).text, {
      x: layout.proofMark.x,
      y: layout.page.height - layout.proofMark.baselinesFromTop[i],
      size: layout.proofMark.size,
      font: markFont,
    });
  });

  const pdf = await doc.save();
  return {
    pdf,
    pageCount,
    sheets,
    addressPageAdded: true,
    firstDocumentPage,
    grayscale: !input.color,
    layout,
    addressBlocks: { recipient, returnAddress },
    warnings,
  };
}

// ---------------------------------------------------------------------------- address page

/**
 * Lays `lines` into `window` less the inset, at the largest size from maxSize down to
 * minSize at which every line fits; at minSize, lines that are still too wide end in an
 * ellipsis and, should there be more lines than fit, the middle ones go (the addressee and
 * the delivery and city lines are what the carrier needs). Each cut is a warning. Measures
 * only: drawAddressBlock prints the result.
 */
function layoutAddressBlock(
  font: PDFFont,
  given: string[],
  window: PageRect,
  layout: ProofLayout,
  label: string,
  warnings: string[],
): AddressBlock {
  const { maxSize, minSize, sizeStep, lineHeight } = layout.addressFont;
  const inner: PageRect = {
    x: window.x + layout.windowInset,
    y: window.y + layout.windowInset,
    width: window.width - 2 * layout.windowInset,
    height: window.height - 2 * layout.windowInset,
  };
  let lines = given.map((line, i) => {
    const p = printable(line, font);
    if (p.replaced) warnings.push(`${label} line ${i + 1}: characters the printer's font lacks print as '?'`);
    return p.text;
  });
  const blockHeight = (count: number, size: number) => font.heightAtSize(size) + (count - 1) * size * lineHeight;
  const fits = (size: number) =>
    blockHeight(lines.length, size) <= inner.height &&
    lines.every((l) => font.widthOfTextAtSize(l, size) <= inner.width);

  let size = maxSize;
  while (size > minSize && !fits(size)) size = Math.max(minSize, size - sizeStep);
  if (!fits(size)) {
    const room = Math.max(1, Math.floor((inner.height - font.heightAtSize(size)) / (size * lineHeight)) + 1);
    if (lines.length > room) {
      const dropped = lines.slice(1, lines.length - (room - 1));
      lines = room === 1 ? [lines[lines.length - 1]] : [lines[0], ...lines.slice(lines.length - (room - 1))];
      warnings.push(`${label}: only ${room} lines fit the window; left out: ${dropped.join(' / ')}`);
    }
    lines = lines.map((line, i) => {
      if (font.widthOfTextAtSize(line, size) <= inner.width) return line;
      const cut = truncateToWidth(line, font, size, inner.width);
      warnings.push(`${label} line ${i + 1} is too long for the window at ${size} pt and is cut to "${cut}"`);
      return cut;
    });
  }
  const width = Math.max(0, ...lines.map((l) => font.widthOfTextAtSize(l, size)));
  return { lines, fontSize: size, rect: { x: inner.x, y: inner.y, width, height: blockHeight(lines.length, size) } };
}

/** Prints a laid-out address block on the address page. */
function drawAddressBlock(page: PDFPage, font: PDFFont, block: AddressBlock, layout: ProofLayout): AddressBlock {
  const { fontSize: size, rect } = block;
  const ascent = font.heightAtSize(size, { descender: false });
  block.lines.forEach((line, i) => {
    const baselineFromTop = rect.y + ascent + i * size * layout.addressFont.lineHeight;
    page.drawText(line, { x: rect.x, y: layout.page.height - baselineFromTop, size, font });
  });
  return block;
}

/** The longest start of `line` that fits `width` with an ellipsis after it. */
function truncateToWidth(line: string, font: PDFFont, size: number, width: number): string {
  const chars = [...line];
  for (let n = chars.length - 1; n >= 0; n--) {
    const cut = `${chars.slice(0, n).join('').trimEnd()}\u2026`;
    if (font.widthOfTextAtSize(cut, size) <= width) return cut;
  }
  return '\u2026';
}

// ---------------------------------------------------------------------------- black and white

/**
 * Shows a page as a black-and-white printer prints it: white paper under the content, and
 * over it a gray fill in the Saturation blend mode, which keeps each colour's luminosity
 * and takes the gray's zero saturation. Annotations sit above page content and keep their
 * colour.
 */
function showInGray(doc: PDFDocument, page: PDFPage): void {
  const box = page.getMediaBox();
  const paint = [
    pushGraphicsState(),
    setFillingGrayscaleColor(1),
    rectangle(box.x, box.y, box.width, box.height),
    fill(),
    popGraphicsState(),
  ];
  const under = doc.context.register(doc.context.contentStream(paint));
  page.node.normalize();
  const contents = page.node.Contents();
  if (contents instanceof PDFArray) contents.insert(0, under);
  else page.node.addContentStream(under); // a page without content: the paper alone
  const state = page.node.newExtGState('GS', doc.context.obj({ Type: 'ExtGState', BM: PDFName.of('Saturation') }));
  page.pushOperators(
    pushGraphicsState(),
    setGraphicsState(state),
    setFillingGrayscaleColor(0.5),
    rectangle(box.x, box.y, box.width, box.height),
    fill(),
    popGraphicsState(),
  );
}
