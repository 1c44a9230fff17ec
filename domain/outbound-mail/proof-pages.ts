// The document's pages in a print proof (print-proof.ts): a PDF's own pages on US Letter
// (other sizes scaled, /Rotate honoured), an image fitted on a page (JPEG turned upright by
// its EXIF orientation) and plain text typeset as it is counted and charged. HTML, Markdown
// and DOCX letters arrive here as the PDF they were laid out to at submission.
import {
  concatTransformationMatrix,
  degrees,
  drawObject,
  ParseSpeeds,
  PDFDocument,
  PDFEmbeddedPage,
  PDFFont,
  PDFImage,
  PDFPage,
  popGraphicsState,
  pushGraphicsState,
  type StandardFonts,
} from 'pdf-lib';
import type { MailAddress } from './address';
import { textPages, type DocumentType } from './documents';

export const INCH = 72;

/** A rectangle in PostScript points (1/72 in), measured from the page's top-left corner, as print specs and poppler's pdftotext -bbox measure. */
export interface PageRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Where everything goes on one form factor's proof. Letters only so far; postcards would add their own entry to PROOF_LAYOUT. */
export interface ProofLayout {
  formFactor: 'letter';
  page: { width: number; height: number };
  envelope: { name: string; width: number; height: number; maxSheets: number; source: string };
  /** The return-address window, upper left. */
  returnWindow: PageRect;
  /** The recipient window, below it. */
  recipientWindow: PageRect;
  /** Clear space kept between an address block and every edge of its window. */
  windowInset: number;
  /** Address blocks start at maxSize and shrink in sizeStep steps down to minSize before a line is cut short; lineHeight is the baseline-to-baseline distance per point of size. */
  addressFont: { font: StandardFonts; maxSize: number; minSize: number; sizeStep: number; lineHeight: number };
  /** The proof's own small print on the address page, well below the windows. */
  proofMark: { text: string; font: StandardFonts; size: number; x: number; baselinesFromTop: [number, number] };
  /** Image documents: the clear margin around an image scaled to fit the page. */
  imageMargin: number;
  /** TXT and CSV documents: the very lines domain/outbound-mail/documents.ts counts (80 columns, 66 lines a page), in Courier. */
  text: {
    font: StandardFonts;
    size: number;
    left: number;
    top: number;
    lineHeight: number;
    columns: number;
    linesPerPage: number;
  };
}

export interface PrintProofInput {
  /** The inspected document: its bytes, its type as inspectDocument recognised it, and the page count the piece is charged for. */
  document: { bytes: Uint8Array; kind: DocumentType; pageCount: number };
  recipient: MailAddress;
  returnAddress: MailAddress | null;
  mailClass: string;
  color: boolean;
  duplex: boolean;
  /** The proof's creation and modification date (the PDF's only varying bytes), so equal input gives equal output. */
  createdAt: Date;
}

export const plural = (n: number) => (n === 1 ? '' : 's');

const characterSets = new WeakMap<PDFFont, Set<number>>();

/**
 * `text` in the characters a standard font can encode (WinAnsi): others become their
 * unaccented letter when there is one, else '?', so no input can make drawText throw.
 * A byte-order mark is dropped.
 */
export function printable(text: string, font: PDFFont): { text: string; replaced: boolean } {
  let set = characterSets.get(font);
  if (!set) characterSets.set(font, (set = new Set(font.getCharacterSet())));
  const known = set;
  let replaced = false;
  let out = '';
  for (const ch of text) {
    if (ch === '\ufeff') continue;
    if (known.has(ch.codePointAt(0)!)) {
      out += ch;
      continue;
    }
    const base = ch.normalize('NFKD').replace(/\p{M}/gu, '');
    if (base && [...base].every((c) => known.has(c.codePointAt(0)!))) {
      out += base;
    } else {
      out += '?';
      replaced = true;
    }
  }
  return { text: out, replaced };
}

/** Appends the document's pages as they print; returns them. */
export async function addDocumentPages(
  doc: PDFDocument,
  document: PrintProofInput['document'],
  layout: ProofLayout,
  warnings: string[],
): Promise<PDFPage[]> {
  switch (document.kind) {
    case 'pdf':
      return addPdfPages(doc, document.bytes, layout, warnings);
    case 'jpg':
    case 'png':
      return [await addImagePage(doc, document.bytes, document.kind, layout, warnings)];
    case 'txt':
    case 'csv':
      return addTextPages(doc, new TextDecoder('utf-8').decode(document.bytes), layout, warnings);
  }
}

const isLetterSize = (w: number, h: number, layout: ProofLayout) => {
  const near = (a: number, b: number) => Math.abs(a - b) <= 1;
  const { width, height } = layout.page;
  return (near(w, width) && near(h, height)) || (near(w, height) && near(h, width));
};

/**
 * PDF pages are copied as they are when they are US Letter (either way round, as seen
 * after their /Rotate); any other size is scaled to fit a Letter page of the same
 * orientation, centred, as the facility's printer fits it. A scaled page is drawn as a
 * form, so its annotations (filled form fields, comments) are not shown on it.
 */
async function addPdfPages(
  doc: PDFDocument,
  bytes: Uint8Array,
  layout: ProofLayout,
  warnings: string[],
): Promise<PDFPage[]> {
  const source = await PDFDocument.load(bytes, { updateMetadata: false, parseSpeed: ParseSpeeds.Fast });
  const copied = await doc.copyPages(source, source.getPageIndices());
  const pages: PDFPage[] = [];
  for (const [i, page] of copied.entries()) {
    const { box, quarter, w, h, letter, target, scale } = pageFit(page, layout);
    if (letter) {
      pages.push(doc.addPage(page));
      continue;
    }
    const sheet = doc.addPage(target as [number, number]);
    // A page without content (a blank page) cannot be embedded, and prints blank anyway.
    if (page.node.Contents()) {
      const embedded = await doc.embedPage(page, {
        left: box.x,
        bottom: box.y,
        right: box.x + box.width,
        top: box.y + box.height,
      });
      drawRotated(sheet, embedded, quarter, scale, (target[0] - w * scale) / 2, (target[1] - h * scale) / 2);
    }
    pages.push(sheet);
    warnings.push(scaledPageWarning(i, w, h, scale));
  }
  return pages;
}

/** How a PDF page prints: its crop box, its quarter turn, its size as seen, and the scale to a Letter page of the same orientation (1 when it is Letter). */
function pageFit(page: PDFPage, layout: ProofLayout) {
  const box = page.getCropBox();
  const rotation = ((page.getRotation().angle % 360) + 360) % 360;
  const quarter = rotation % 90 === 0 ? rotation : 0;
  const [w, h] = quarter === 90 || quarter === 270 ? [box.height, box.width] : [box.width, box.height];
  const letter = isLetterSize(w, h, layout);
  const target: [number, number] =
    h >= w ? [layout.page.width, layout.page.height] : [layout.page.height, layout.page.width];
  const scale = Math.min(target[0] / w, target[1] / h);
  return { box, quarter, w, h, letter, target, scale };
}

const scaledPageWarning = (i: number, w: number, h: number, scale: number) =>
  `page ${i + 1} is ${inches(w)} x ${inches(h)} in, not US Letter; it is scaled to ${Math.round(scale * 100)}% to fit`;

const turnedPhotoWarning = (orientation: number) =>
  `the photo is stored turned (EXIF orientation ${orientation}); it is printed upright, as it is shown`;

/** The plain text's lines as they print in `font`, page by page, and how many lines had characters replaced. */
function printableTextPages(text: string, font: PDFFont): { pages: string[][]; replaced: number } {
  let replaced = 0;
  const pages = textPages(text).map((lines) =>
    lines.map((line) => {
      const p = printable(line, font);
      if (p.replaced) replaced += 1;
      return p.text;
    }),
  );
  return { pages, replaced };
}

const replacedTextWarning = (replaced: number) =>
  `${replaced} line${plural(replaced)} of the text hold characters the printer's font lacks; they print as '?'`;

/**
 * What addDocumentPages would warn about, without laying anything out (a PDF's pages are
 * read for their boxes, never copied); returns how many pages the document prints on.
 */
export async function documentPageWarnings(
  document: PrintProofInput['document'],
  layout: ProofLayout,
  textFont: PDFFont,
  warnings: string[],
): Promise<number> {
  switch (document.kind) {
    case 'pdf': {
      const source = await PDFDocument.load(document.bytes, { updateMetadata: false, parseSpeed: ParseSpeeds.Fast });
      const pages = source.getPages();
      pages.forEach((page, i) => {
        const { letter, w, h, scale } = pageFit(page, layout);
        if (!letter) warnings.push(scaledPageWarning(i, w, h, scale));
      });
      return pages.length;
    }
    case 'jpg':
    case 'png': {
      const orientation = document.kind === 'jpg' ? jpegOrientation(document.bytes) : 1;
      if (orientation !== 1) warnings.push(turnedPhotoWarning(orientation));
      return 1;
    }
    case 'txt':
    case 'csv': {
      const { pages, replaced } = printableTextPages(new TextDecoder('utf-8').decode(document.bytes), textFont);
      if (replaced) warnings.push(replacedTextWarning(replaced));
      return pages.length;
    }
  }
}

const inches = (points: number) => String(Math.round((points / INCH) * 100) / 100);

/**
 * Draws an embedded page turned clockwise by its /Rotate (as viewers show it), scaled, with
 * the turned page's lower-left corner at (x, y). pdf-lib turns counter-clockwise about the
 * drawing origin, so the origin moves to the corner the turned page starts from.
 */
function drawRotated(
  page: PDFPage,
  embedded: PDFEmbeddedPage,
  rotation: number,
  scale: number,
  x: number,
  y: number,
): void {
  const w = embedded.width * scale;
  const h = embedded.height * scale;
  const origin: Record<number, [number, number]> = { 0: [x, y], 90: [x, y + w], 180: [x + w, y + h], 270: [x + h, y] };
  const [ox, oy] = origin[rotation];
  page.drawPage(embedded, { x: ox, y: oy, xScale: scale, yScale: scale, rotate: degrees(-rotation) });
}

/** The EXIF orientation (1-8) of a JPEG, 1 when it has none; only the first APP1 Exif segment is read, within bounds. */
export function jpegOrientation(data: Uint8Array): number {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 2;
  while (at + 4 <= data.length && data[at] === 0xff) {
    const marker = data[at + 1];
    if (marker === 0xda || marker === 0xd9) break; // image data follows: no metadata after this
    const length = view.getUint16(at + 2);
    const start = at + 4;
    const end = at + 2 + length;
    if (length < 2 || end > data.length) break;
    if (marker === 0xe1 && end - start > 14 && String.fromCharCode(...data.subarray(start, start + 6)) === 'Exif\0\0') {
      return tiffOrientation(view, start + 6, end);
    }
    at = end;
  }
  return 1;
}

function tiffOrientation(view: DataView, tiff: number, end: number): number {
  const order = view.getUint16(tiff);
  if (order !== 0x4949 && order !== 0x4d4d) return 1;
  const little = order === 0x4949;
  const u16 = (at: number) => (at + 2 <= end ? view.getUint16(at, little) : -1);
  const u32 = (at: number) => (at + 4 <= end ? view.getUint32(at, little) : -1);
  const ifd = tiff + u32(tiff + 4);
  const count = u16(ifd);
  if (ifd <= tiff || count < 0) return 1;
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > end) return 1;
    if (u16(entry) === 0x0112) {
      const value = u16(entry + 8);
      return value >= 1 && value <= 8 ? value : 1;
    }
  }
  return 1;
}

/**
 * For each EXIF orientation: where a stored pixel at (x, y) in [0, 1]² (y down) shows,
 * as X = ax·x + bx·y + cx and Y = ay·x + by·y + cy. 5 to 8 swap width and height.
 */
const ORIENTATIONS: Record<number, [number, number, number, number, number, number]> = {
  1: [1, 0, 0, 0, 1, 0],
  2: [-1, 0, 1, 0, 1, 0],
  3: [-1, 0, 1, 0, -1, 1],
  4: [1, 0, 0, 0, -1, 1],
  5: [0, 1, 0, 1, 0, 0],
  6: [0, -1, 1, 1, 0, 0],
  7: [0, -1, 1, -1, 0, 1],
  8: [0, 1, 0, -1, 0, 1],
};

/** One image on a Letter page, turned upright by its EXIF orientation, scaled to fit inside the margins and centred. */
async function addImagePage(
  doc: PDFDocument,
  bytes: Uint8Array,
  kind: 'jpg' | 'png',
  layout: ProofLayout,
  warnings: string[],
): Promise<PDFPage> {
  const image: PDFImage = kind === 'jpg' ? await doc.embedJpg(bytes) : await doc.embedPng(bytes);
  const orientation = kind === 'jpg' ? jpegOrientation(bytes) : 1;
  const [iw, ih] = orientation >= 5 ? [image.height, image.width] : [image.width, image.height];
  const page = doc.addPage([layout.page.width, layout.page.height]);
  const room = {
    width: layout.page.width - 2 * layout.imageMargin,
    height: layout.page.height - 2 * layout.imageMargin,
  };
  const scale = Math.min(room.width / iw, room.height / ih);
  const [dw, dh] = [iw * scale, ih * scale];
  const [ox, oy] = [(layout.page.width - dw) / 2, (layout.page.height - dh) / 2];
  // The image XObject fills the unit square, stored row 0 at the top (v = 1); with x = u
  // and y = 1 - v, page point = (ox + dw·X, oy + dh·(1 - Y)).
  const [ax, bx, cx, ay, by, cy] = ORIENTATIONS[orientation];
  const name = page.node.newXObject('Image', image.ref);
  page.pushOperators(
    pushGraphicsState(),
    concatTransformationMatrix(dw * ax, -dh * ay, -dw * bx, dh * by, ox + dw * (bx + cx), oy + dh * (1 - by - cy)),
    drawObject(name),
    popGraphicsState(),
  );
  if (orientation !== 1) warnings.push(turnedPhotoWarning(orientation));
  return page;
}

/**
 * Plain text typeset in exactly the lines domain/outbound-mail/documents.ts counts and charges for
 * (textPages: tabs expanded, 80-column wrap, 66 lines a page, form feeds), in Courier.
 */
async function addTextPages(
  doc: PDFDocument,
  text: string,
  layout: ProofLayout,
  warnings: string[],
): Promise<PDFPage[]> {
  const font = await doc.embedFont(layout.text.font);
  const t = layout.text;
  const printed = printableTextPages(text, font);
  const pages = printed.pages.map((lines) => {
    const page = doc.addPage([layout.page.width, layout.page.height]);
    lines.forEach((line, i) => {
      if (line.trim())
        page.drawText(line, {
          x: t.left,
          y: layout.page.height - t.top - t.lineHeight * (i + 1),
          size: t.size,
          font,
        });
    });
    return page;
  });
  if (printed.replaced) warnings.push(replacedTextWarning(printed.replaced));
  return pages;
}
