// Writes the small sample documents under test/fixtures/documents that the document
// inspection tests read. Idempotent: the output is byte-for-byte the same on every run
// (fixed dates, no random ids), and a file is only rewritten when its bytes differ.
//   npx tsx scripts/make-fixtures.ts
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import JSZip from 'jszip';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { PNG } from 'pngjs';

const OUT = path.join(__dirname, '..', 'test', 'fixtures', 'documents');
const FIXED_DATE = new Date(Date.UTC(2026, 0, 1));

async function samplePdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    const page = doc.addPage([612, 792]);
    page.drawText(`Sample letter, page ${i} of ${pages}`, { x: 72, y: 700, size: 14, font });
  }
  return Buffer.from(await doc.save());
}

/**
 * A one-page PDF whose trailer names a standard security handler. pdf-lib cannot
 * encrypt, so the file is written by hand with a correct cross-reference table.
 */
function encryptedPdf(): Buffer {
  const zeros = '00'.repeat(32);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
    `<< /Filter /Standard /V 1 /R 2 /O <${zeros}> /U <${zeros}> /P -4 >>`,
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xrefAt = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  const id = '0123456789abcdef0123456789abcdef';
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [<${id}> <${id}>] >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

function samplePng(): Buffer {
  const png = new PNG({ width: 16, height: 16, colorType: 2, inputHasAlpha: true });
  for (let y = 0; y < 16; y++) {
    for (let x = 0; x < 16; x++) {
      const i = (y * 16 + x) * 4;
      png.data[i] = x * 16;
      png.data[i + 1] = y * 16;
      png.data[i + 2] = 128;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png, { colorType: 2 });
}

/** A 1x1 mid-grey baseline JPEG, written marker by marker. */
function sampleJpeg(): Buffer {
  return Buffer.from([
    0xff,
    0xd8, // SOI
    0xff,
    0xe0,
    0x00,
    0x10,
    0x4a,
    0x46,
    0x49,
    0x46,
    0x00,
    0x01,
    0x01,
    0x00,
    0x00,
    0x01,
    0x00,
    0x01,
    0x00,
    0x00, // APP0 "JFIF" 1.1
    0xff,
    0xdb,
    0x00,
    0x43,
    0x00,
    ...new Array(64).fill(0x01), // DQT: table 0, every quantiser 1
    0xff,
    0xc0,
    0x00,
    0x0b,
    0x08,
    0x00,
    0x01,
    0x00,
    0x01,
    0x01,
    0x01,
    0x11,
    0x00, // SOF0: 8-bit, 1x1, one component
    // DHT: DC table 0, the standard luminance code lengths and symbols 0-11 (category 0 = code 00).
    0xff,
    0xc4,
    0x00,
    0x1f,
    0x00,
    0,
    1,
    5,
    1,
    1,
    1,
    1,
    1,
    1,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
    // DHT: AC table 0 with one symbol, end-of-block (0x00), code 0.
    0xff,
    0xc4,
    0x00,
    0x14,
    0x10,
    1,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0x00,
    0xff,
    0xda,
    0x00,
    0x08,
    0x01,
    0x01,
    0x00,
    0x00,
    0x3f,
    0x00, // SOS: one component, tables 0/0, spectral 0-63
    0x1f, // scan: DC diff 0 (00), EOB (0), padded with ones: 000 11111
    0xff,
    0xd9, // EOI
  ]);
}

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
  '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>' +
  '<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/></Types>';
const ROOT_RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';
const DOCUMENT_RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>';
const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
/**
 * Word's own defaults for a new document: Calibri 11 pt (LibreOffice lays it out with
 * Carlito, its metric twin), single spacing with no space after paragraphs, so a page
 * holds 48 lines between 1 in margins in Word and in LibreOffice alike.
 */
const STYLES_XML =
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles ${W}><w:docDefaults>` +
  '<w:rPrDefault><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri" w:cs="Calibri"/><w:sz w:val="22"/><w:szCs w:val="22"/><w:lang w:val="en-US"/></w:rPr></w:rPrDefault>' +
  '<w:pPrDefault><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr></w:pPrDefault></w:docDefaults>' +
  '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style></w:styles>';
const para = (text: string) => `<w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
const PAGE_BREAK = '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';
/** US Letter, 1 in margins all round. */
const BODY_SECTION =
  '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr>';
const documentXml = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document ${W}><w:body>${body}${BODY_SECTION}</w:body></w:document>`;
const appXml = (pages: number) =>
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">' +
  `<Application>Microsoft Office Word</Application><Pages>${pages}</Pages></Properties>`;

async function docx(parts: Record<string, string>): Promise<Buffer> {
  const zip = new JSZip();
  for (const [name, content] of Object.entries(parts))
    zip.file(name, content, { date: FIXED_DATE, createFolders: false });
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 9 } });
}

/** A Word letter: the package parts around a body (and docProps/app.xml when `declaredPages` is given). */
function wordLetter(body: string, declaredPages?: number): Promise<Buffer> {
  return docx({
    '[Content_Types].xml': CONTENT_TYPES,
    '_rels/.rels': ROOT_RELS,
    'word/_rels/document.xml.rels': DOCUMENT_RELS,
    'word/styles.xml': STYLES_XML,
    'word/document.xml': documentXml(body),
    ...(declaredPages !== undefined ? { 'docProps/app.xml': appXml(declaredPages) } : {}),
  });
}

/** `n` one-line paragraphs (short enough never to wrap), numbered from `from`. */
const statementLines = (n: number, from = 1) =>
  Array.from({ length: n }, (_, i) => para(`Line ${from + i} of the statement: item received and recorded.`)).join('');

async function main() {
  const letterText =
    'Dear Ms. Rivera, thank you for your letter of June 3. We have reviewed the enclosed documents and confirm the details below. ';
  const files: Record<string, Buffer> = {
    'one-page.pdf': await samplePdf(1),
    'three-page.pdf': await samplePdf(3),
    'encrypted.pdf': encryptedPdf(),
    'image.png': samplePng(),
    'image.jpg': sampleJpeg(),
    // Word letters whose pages follow from their layout (48 lines a page, see STYLES_XML),
    // each with a margin of a few lines either way: one page of letter; 120 lines (2.5
    // pages); a title page, a page break and 504 lines (10.5 pages), whose docProps/app.xml
    // still says 1 page, as a file saved before it grew would.
    'docx-1-page.docx': await wordLetter(
      para('June 12, 2026') +
        para('') +
        para('Ms. Ada Rivera') +
        para('1 Main Street') +
        para('Austin, TX 78701') +
        para('') +
        para('Dear Ms. Rivera,') +
        para('') +
        para(letterText.repeat(3)) +
        para('') +
        para(letterText.repeat(2)) +
        para('') +
        para('Sincerely,') +
        para('The Service'),
    ),
    'docx-3-pages.docx': await wordLetter(statementLines(120)),
    'docx-12-pages.docx': await wordLetter(para('Annual statement') + PAGE_BREAK + statementLines(504), 1),
    // document.xml inflates to 60 MB from about 60 KB.
    'zip-bomb.docx': await docx({
      '[Content_Types].xml': CONTENT_TYPES,
      '_rels/.rels': ROOT_RELS,
      'word/document.xml': documentXml(para('A'.repeat(60 * 1024 * 1024))),
    }),
    'letter.txt': Buffer.from(`Dear Ms. Rivera,\n\n${letterText}\n\nSincerely,\nThe Service\n`, 'utf8'),
    'recipients.csv': Buffer.from(
      'name,address,city,state,zip\nAda Lovelace,1 Main St,Austin,TX,78701\nAlan Turing,2 Elm St,Chicago,IL,60601\n',
      'utf8',
    ),
  };

  mkdirSync(OUT, { recursive: true });
  for (const [name, bytes] of Object.entries(files)) {
    const file = path.join(OUT, name);
    const same = existsSync(file) && readFileSync(file).equals(bytes);
    if (!same) writeFileSync(file, bytes);
    console.log(`${same ? 'unchanged' : 'written  '} ${path.relative(process.cwd(), file)} (${bytes.length} bytes)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
