// Document inspection: type by content, page counts, refusals of hostile or broken
// files. Binary samples come from test/fixtures/documents (scripts/make-fixtures.ts);
// edge cases are built here byte by byte.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import fc from 'fast-check';
import JSZip from 'jszip';
import { PDFDocument } from 'pdf-lib';
import { ApiError } from '../../domain/shared/errors';
import {
  inspectDocument,
  InspectedDocument,
  inspectUpload,
  MAX_DOCUMENT_BYTES,
  MAX_HTML_BYTES,
  textPageCount,
  Upload,
} from '../../domain/outbound-mail/documents';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'documents');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

async function refusal(promise: Promise<InspectedDocument | Upload>): Promise<{ path: string; message: string }> {
  try {
    await promise;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    expect(e.status).toBe(400);
    expect(e.options.fields).toHaveLength(1);
    return e.options.fields![0];
  }
  throw new Error('expected a 400');
}

/** A PDF with a correct cross-reference table around the given object bodies (object 1 is the catalog). */
function buildPdf(objects: (string | Buffer)[]): Buffer {
  const parts = [Buffer.from('%PDF-1.7\n', 'latin1')];
  let length = parts[0].length;
  const offsets: number[] = [];
  for (const [i, object] of objects.entries()) {
    offsets.push(length);
    const part = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`, 'latin1'),
      Buffer.from(object as string, typeof object === 'string' ? 'latin1' : undefined),
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    parts.push(part);
    length += part.length;
  }
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(
    Buffer.from(
      `${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(parts);
}

const CATALOG = '<< /Type /Catalog /Pages 2 0 R >>';

function pngChunk(type: string, body: Buffer): Buffer {
  const typeAndBody = Buffer.concat([Buffer.from(type, 'latin1'), body]);
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  typeAndBody.copy(out, 4);
  out.writeUInt32BE(zlib.crc32(typeAndBody), 8 + body.length);
  return out;
}

async function docxOf(parts: Record<string, string>): Promise<Buffer> {
  const zip = new JSZip();
  for (const [name, content] of Object.entries(parts)) zip.file(name, content);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

const DOCX_BASE = {
  '[Content_Types].xml': '<Types/>',
  'word/document.xml': '<w:document><w:body><w:p><w:r><w:t>Hi</w:t></w:r></w:p></w:body></w:document>',
};

describe('type by content', () => {
  it.each([
    ['one-page.pdf', 'pdf', 'application/pdf', 1, 'pdf'],
    ['three-page.pdf', 'pdf', 'application/pdf', 3, 'pdf'],
    ['image.png', 'png', 'image/png', 1, 'image'],
    ['image.jpg', 'jpg', 'image/jpeg', 1, 'image'],
    ['letter.txt', 'txt', 'text/plain', 1, 'text_layout'],
    ['recipients.csv', 'csv', 'text/csv', 1, 'text_layout'],
  ])('%s is %s (%s), %i page(s) from %s', async (name, type, contentType, pages, source) => {
    const bytes = fixture(name);
    const doc = await inspectDocument(bytes, name);
    expect(doc).toEqual({
      type,
      contentType,
      extension: type,
      pageCount: pages,
      pageCountSource: source,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      sizeBytes: bytes.length,
    });
  });

  it.each([
    ['image.png', 'report.pdf', 'png'],
    ['one-page.pdf', 'photo.png', 'pdf'],
    ['image.jpg', 'notes.txt', 'jpg'],
    ['letter.txt', 'letter.docx', 'txt'],
    ['recipients.csv', null, 'csv'],
  ])('%s named %s is still %s', async (name, filename, type) => {
    expect((await inspectDocument(fixture(name), filename)).type).toBe(type);
  });

  it.each([
    ['docx-3-pages.docx', 'archive.zip', null, 'docx'],
    ['docx-1-page.docx', null, null, 'docx'],
    ['letter.txt', 'letter.html', null, 'html'],
    ['letter.txt', 'LETTER.HTM', null, 'html'],
    ['letter.txt', null, 'text/html; charset=utf-8', 'html'],
    ['letter.txt', 'letter.md', null, 'markdown'],
    ['letter.txt', 'notes.markdown', null, 'markdown'],
    ['letter.txt', 'upload', 'text/markdown', 'markdown'],
  ])(
    '%s named %s (declared %s) is a %s source, laid out before it is counted',
    async (name, filename, declared, type) => {
      const bytes = fixture(name);
      const upload = await inspectUpload(bytes, filename, { contentType: declared });
      expect(upload).toEqual({
        kind: 'source',
        source: expect.objectContaining({
          type,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          sizeBytes: bytes.length,
          text: type === 'docx' ? null : bytes.toString('utf8'),
        }),
      });
      // inspectDocument takes only what prints as it is.
      expect((await refusal(inspectDocument(bytes, filename, { contentType: declared }))).message).toMatch(
        /must be laid out first/,
      );
    },
  );

  it('the bytes decide before the name: a PDF or an image named .html is still a PDF or an image', async () => {
    expect(await inspectUpload(fixture('one-page.pdf'), 'letter.html')).toMatchObject({
      kind: 'document',
      document: { type: 'pdf' },
    });
    expect(await inspectUpload(fixture('image.png'), 'letter.md')).toMatchObject({
      kind: 'document',
      document: { type: 'png' },
    });
  });

  it('refuses HTML and Markdown over 2 MB, not UTF-8, or with page_count', async () => {
    const big = Buffer.alloc(MAX_HTML_BYTES + 1, 'a');
    expect((await refusal(inspectUpload(big, 'big.html'))).message).toMatch(/at most 2097152 bytes \(2 MB\)/);
    expect(await inspectUpload(Buffer.alloc(MAX_HTML_BYTES, 'a'), 'ok.md')).toMatchObject({ kind: 'source' });
    expect((await refusal(inspectUpload(Buffer.from('caf\xe9', 'latin1'), 'a.html'))).message).toMatch(/not UTF-8/);
    expect(await refusal(inspectUpload(fixture('letter.txt'), 'a.md', { pageCountOverride: 2 }))).toEqual({
      path: 'page_count',
      message:
        "page_count applies only to DOCX, TXT and CSV documents; a Markdown letter's pages are counted from its layout",
    });
  });

  it('text is CSV by a .csv name or a consistent delimiter structure, otherwise TXT', async () => {
    expect((await inspectDocument(fixture('letter.txt'), 'LETTER.CSV')).type).toBe('csv');
    expect((await inspectDocument(fixture('letter.txt'), null)).type).toBe('txt');
    expect((await inspectDocument(Buffer.from('a;b;c\n1;2;3\n4;"5;6";7\n'), 'data.txt')).type).toBe('csv');
    expect((await inspectDocument(Buffer.from('Hello, world.\nHow are you, friend?\n'), null)).type).toBe('txt');
  });

  it('refuses unknown binary, legacy Word, non-UTF-8 text, control characters and empty files', async () => {
    expect((await refusal(inspectDocument(Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff]), 'a.pdf'))).message).toMatch(
      /unsupported document type/,
    );
    expect(
      (await refusal(inspectDocument(Buffer.from('d0cf11e0a1b11ae1' + '00'.repeat(100), 'hex'), 'old.doc'))).message,
    ).toMatch(/\.doc/);
    expect((await refusal(inspectDocument(Buffer.from('caf\xe9 au lait', 'latin1'), 'menu.txt'))).path).toBe(
      'document',
    );
    expect((await refusal(inspectDocument(Buffer.from('text with \x1b[31m colour'), 'a.txt'))).path).toBe('document');
    expect((await refusal(inspectDocument(Buffer.alloc(0), 'a.txt'))).message).toBe('the document is empty');
  });

  it('refuses 10 MB + 1 byte and accepts exactly 10 MB', async () => {
    const over = Buffer.alloc(MAX_DOCUMENT_BYTES + 1, 'a');
    expect((await refusal(inspectDocument(over, 'big.txt'))).message).toMatch(/10485761 bytes; the maximum is 10 MB/);
    const exact = Buffer.alloc(MAX_DOCUMENT_BYTES, 'a');
    expect(await inspectDocument(exact, 'big.txt', { pageCountOverride: 5 })).toMatchObject({
      type: 'txt',
      pageCount: 5,
      sizeBytes: MAX_DOCUMENT_BYTES,
    });
  });
});

describe('PDF', () => {
  it('counts pages from the file', async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < 7; i++) doc.addPage();
    expect((await inspectDocument(Buffer.from(await doc.save()), 'seven.pdf')).pageCount).toBe(7);
  });

  it('refuses an encrypted PDF', async () => {
    expect(await refusal(inspectDocument(fixture('encrypted.pdf'), 'secret.pdf'))).toEqual({
      path: 'document',
      message: 'encrypted PDFs are not accepted',
    });
  });

  it('refuses a truncated PDF', async () => {
    const three = fixture('three-page.pdf');
    for (const cut of [20, Math.floor(three.length / 2), three.length - 8]) {
      expect((await refusal(inspectDocument(three.subarray(0, cut), 'cut.pdf'))).message).toMatch(/truncated/);
    }
  });

  it('refuses a corrupt PDF that still ends in %%EOF', async () => {
    const three = Buffer.from(fixture('three-page.pdf'));
    three.fill('#', 15, three.length - 200);
    expect((await refusal(inspectDocument(three, 'bad.pdf'))).message).toMatch(/could not be read|page tree|catalog/);
  });

  it('refuses a PDF without pages', async () => {
    const pdf = buildPdf([CATALOG, '<< /Type /Pages /Kids [] /Count 0 >>']);
    expect((await refusal(inspectDocument(pdf, 'empty.pdf'))).message).toBe('the PDF has no pages');
  });

  it('refuses more than 200 pages and accepts 200', async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < 200; i++) doc.addPage();
    expect((await inspectDocument(Buffer.from(await doc.save()), 'a.pdf')).pageCount).toBe(200);
    doc.addPage();
    expect((await refusal(inspectDocument(Buffer.from(await doc.save()), 'a.pdf'))).message).toMatch(
      /more than 200 pages/,
    );
  });

  it('refuses page trees that loop or share a subtree', async () => {
    const loop = buildPdf([
      CATALOG,
      '<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R >>',
    ]);
    expect((await refusal(inspectDocument(loop, 'loop.pdf'))).message).toBe('the PDF page tree is malformed');
    // 1,000 x 1,000 references to one page would be a million pages to walk.
    const shared = buildPdf([
      CATALOG,
      `<< /Type /Pages /Kids [${'3 0 R '.repeat(1000)}] >>`,
      `<< /Type /Pages /Kids [${'4 0 R '.repeat(1000)}] >>`,
      '<< /Type /Page >>',
    ]);
    expect((await refusal(inspectDocument(shared, 'shared.pdf'))).message).toBe('the PDF page tree is malformed');
  });

  it('refuses an object stream that inflates past the budget', async () => {
    const bomb = zlib.deflateSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 });
    const objStm = (type: string) =>
      Buffer.concat([
        Buffer.from(
          `<< /Type /${type} /N 1 /First 4 /Filter /FlateDecode /Length ${bomb.length} >>\nstream\n`,
          'latin1',
        ),
        bomb,
        Buffer.from('\nendstream', 'latin1'),
      ]);
    const pages = [CATALOG, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R >>'];
    expect((await refusal(inspectDocument(buildPdf([...pages, objStm('ObjStm')]), 'bomb.pdf'))).message).toMatch(
      /expands to too much data/,
    );
    // The same with the name written in #-escapes, which pdf-lib decodes.
    expect((await refusal(inspectDocument(buildPdf([...pages, objStm('Obj#53tm')]), 'bomb.pdf'))).message).toMatch(
      /expands to too much data/,
    );
    // Large ordinary streams (page content, images) are not decoded while counting pages.
    const content = Buffer.concat([
      Buffer.from(`<< /Filter /FlateDecode /Length ${bomb.length} >>\nstream\n`, 'latin1'),
      bomb,
      Buffer.from('\nendstream', 'latin1'),
    ]);
    expect((await inspectDocument(buildPdf([...pages, content]), 'ok.pdf')).pageCount).toBe(1);
  });

  it('page_count is refused for a PDF', async () => {
    expect((await refusal(inspectDocument(fixture('three-page.pdf'), 'a.pdf', { pageCountOverride: 3 }))).path).toBe(
      'page_count',
    );
  });
});

describe('DOCX', () => {
  const check = async (bytes: Buffer) => refusal(inspectUpload(bytes, 'a.docx'));

  it('is recognised and checked, never counted here: LibreOffice lays it out', async () => {
    const withMetadata = await docxOf({
      ...DOCX_BASE,
      'docProps/app.xml': '<Properties><Pages>500</Pages></Properties>',
    });
    expect(await inspectUpload(withMetadata, 'big.docx')).toMatchObject({ kind: 'source', source: { type: 'docx' } });
  });

  it('refuses a zip bomb', async () => {
    expect((await check(fixture('zip-bomb.docx'))).message).toMatch(/more than 50 MB when decompressed/);
  });

  it('refuses parts that expand past 50 MB together, though each is smaller', async () => {
    const parts: Record<string, string> = { ...DOCX_BASE };
    for (let i = 0; i < 3; i++) parts[`word/media/part${i}.xml`] = ' '.repeat(20 * 1024 * 1024);
    expect((await check(await docxOf(parts))).message).toMatch(/more than 50 MB when decompressed/);
  });

  it('refuses an archive with absurdly many entries', async () => {
    const parts: Record<string, string> = { ...DOCX_BASE };
    for (let i = 0; i < 1001; i++) parts[`word/media/x${i}.txt`] = '';
    expect((await check(await docxOf(parts))).message).toMatch(/more than 1000 parts/);
  });

  it('refuses a ZIP that is not a Word document, and a broken ZIP', async () => {
    const xlsx = await docxOf({ '[Content_Types].xml': '<Types/>', 'xl/workbook.xml': '<workbook/>' });
    expect((await check(xlsx)).message).toMatch(/only as DOCX/);
    const broken = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(200, 7)]);
    expect((await check(broken)).path).toBe('document');
  });
});

describe('images', () => {
  it('refuses a PNG whose chunk checksum fails, a truncated PNG, and a missing header', async () => {
    const png = Buffer.from(fixture('image.png'));
    const flipped = Buffer.from(png);
    flipped[png.length - 20] ^= 0xff; // inside IDAT
    expect((await refusal(inspectDocument(flipped, 'a.png'))).message).toMatch(
      /PNG image is corrupt: chunk IDAT fails its checksum/,
    );
    expect((await refusal(inspectDocument(png.subarray(0, png.length - 12), 'a.png'))).message).toMatch(/truncated/);
    expect((await refusal(inspectDocument(png.subarray(0, 8), 'a.png'))).message).toMatch(/truncated/);
  });

  it('refuses a PNG whose image data does not fill its size', async () => {
    const header = Buffer.alloc(13);
    header.writeUInt32BE(100, 0);
    header.writeUInt32BE(100, 4);
    header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
    const tooShort = zlib.deflateSync(Buffer.alloc(50 * 301)); // 50 of 100 rows
    const png = Buffer.concat([
      fixture('image.png').subarray(0, 8),
      pngChunk('IHDR', header),
      pngChunk('IDAT', tooShort),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
    expect((await refusal(inspectDocument(png, 'a.png'))).message).toMatch(/does not match the image size/);
    const exact = Buffer.concat([
      fixture('image.png').subarray(0, 8),
      pngChunk('IHDR', header),
      pngChunk('IDAT', zlib.deflateSync(Buffer.alloc(100 * 301))),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
    expect((await inspectDocument(exact, 'a.png')).pageCount).toBe(1);
  });

  it('refuses a PNG over 50 megapixels without inflating it', async () => {
    const header = Buffer.alloc(13);
    header.writeUInt32BE(100000, 0);
    header.writeUInt32BE(100000, 4);
    header.set([8, 6, 0, 0, 0], 8);
    const png = Buffer.concat([
      fixture('image.png').subarray(0, 8),
      pngChunk('IHDR', header),
      pngChunk('IDAT', Buffer.alloc(10)),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
    expect((await refusal(inspectDocument(png, 'huge.png'))).message).toMatch(/100000x100000 pixels/);
  });

  it('refuses a truncated JPEG and one without a frame', async () => {
    const jpg = fixture('image.jpg');
    expect((await refusal(inspectDocument(jpg.subarray(0, jpg.length - 2), 'a.jpg'))).message).toMatch(
      /JPEG image is corrupt: the file is truncated/,
    );
    expect((await refusal(inspectDocument(jpg.subarray(0, 40), 'a.jpg'))).message).toMatch(/JPEG image is corrupt/);
    expect((await refusal(inspectDocument(Buffer.from([0xff, 0xd8, 0xff, 0xd9]), 'a.jpg'))).message).toMatch(
      /no image scan/,
    );
  });

  it('page_count is refused for an image', async () => {
    expect((await refusal(inspectDocument(fixture('image.jpg'), 'a.jpg', { pageCountOverride: 1 }))).path).toBe(
      'page_count',
    );
  });
});

describe('text layout', () => {
  const lines = (n: number, text = 'line') => Array.from({ length: n }, () => text).join('\n') + '\n';
  it.each([
    ['an empty string', '', 1],
    ['66 lines', lines(66), 1],
    ['67 lines', lines(67), 2],
    ['150 lines: 66 + 66 + 18', lines(150), 3],
    ['an 80-character line is one row, 81 is two: 33 x 2 = 66 rows', lines(33, 'x'.repeat(81)), 1],
    ['34 lines of 81 characters: 68 rows', lines(34, 'x'.repeat(81)), 2],
    ['a tab advances to the next stop of 8: 10 tabs + 1 = 81 columns', lines(34, '\t'.repeat(10) + 'x'), 2],
    ['CRLF line ends', lines(67).replace(/\n/g, '\r\n'), 2],
    ['a form feed starts a new page', 'page one\fpage two\fpage three', 3],
    ['a trailing form feed does not add a page', 'page one\n\f', 1],
  ])('%s -> %i', (_, text, pages) => {
    expect(textPageCount(text)).toBe(pages);
  });

  it('inspects TXT and CSV by layout', async () => {
    expect(await inspectDocument(Buffer.from(lines(150)), 'a.txt')).toMatchObject({
      type: 'txt',
      pageCount: 3,
      pageCountSource: 'text_layout',
    });
    expect(await inspectDocument(Buffer.from('\ufeffa,b\n1,2\n'), 'a.csv')).toMatchObject({
      type: 'csv',
      pageCount: 1,
    });
  });

  it('refuses text over 200 pages unless page_count is sent', async () => {
    const long = Buffer.from(lines(66 * 200 + 1));
    expect((await refusal(inspectDocument(long, 'long.txt'))).message).toMatch(/201 pages/);
    expect(await inspectDocument(long, 'long.txt', { pageCountOverride: 200 })).toMatchObject({
      pageCount: 200,
      pageCountSource: 'override',
    });
  });
});

describe('page_count override', () => {
  it.each([0, 201, 2.5, -1, Number.NaN])('refuses %p on page_count', async (n) => {
    expect(await refusal(inspectDocument(fixture('letter.txt'), 'a.txt', { pageCountOverride: n }))).toEqual({
      path: 'page_count',
      message: 'page_count must be an integer from 1 to 200',
    });
  });

  it('replaces detection for TXT and CSV (a DOCX is laid out, then priced by it: services/outbound-mail/documents.ts)', async () => {
    expect(await inspectUpload(fixture('docx-3-pages.docx'), null, { pageCountOverride: 2 })).toMatchObject({
      kind: 'source',
    });
    expect(await inspectDocument(fixture('letter.txt'), null, { pageCountOverride: 4 })).toMatchObject({
      type: 'txt',
      pageCount: 4,
      pageCountSource: 'override',
    });
    expect(await inspectDocument(fixture('recipients.csv'), 'r.csv', { pageCountOverride: 1 })).toMatchObject({
      type: 'csv',
      pageCountSource: 'override',
    });
  });
});

describe('hostile input', () => {
  const samples = [
    'one-page.pdf',
    'three-page.pdf',
    'image.png',
    'image.jpg',
    'docx-1-page.docx',
    'docx-3-pages.docx',
    'letter.txt',
  ].map(fixture);
  const prefixes = ['%PDF-1.7\n', '\x89PNG\r\n\x1a\n', '\xff\xd8\xff', 'PK\x03\x04', ''].map((p) =>
    Buffer.from(p, 'latin1'),
  );

  const randomBytes = fc
    .tuple(fc.constantFrom(...prefixes), fc.uint8Array({ minLength: 0, maxLength: 2048 }))
    .map(([prefix, rest]) => Buffer.concat([prefix, Buffer.from(rest)]));
  // A valid sample with bytes overwritten and possibly cut short.
  const mutatedSample = fc
    .tuple(
      fc.constantFrom(...samples),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
      fc.option(fc.nat()),
    )
    .map(([sample, edits, cut]) => {
      const bytes = Buffer.from(sample);
      for (const [at, value] of edits) bytes[at % bytes.length] = value;
      return cut === null ? bytes : bytes.subarray(0, Math.max(1, cut % bytes.length));
    });

  it('only ever resolves or throws a 400 ApiError', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(randomBytes, mutatedSample),
        fc.option(fc.constantFrom('a.pdf', 'b.csv', 'c.png', 'd.html', 'e.md')),
        async (bytes, name) => {
          try {
            const upload = await inspectUpload(bytes, name);
            if (upload.kind === 'document') expect(upload.document.pageCount).toBeGreaterThanOrEqual(1);
          } catch (e) {
            expect(e).toBeInstanceOf(ApiError);
            expect((e as ApiError).status).toBe(400);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('textPages (page previews)', () => {
  const fc = require('fast-check') as typeof import('fast-check');
  const { textPages, textPageCount, TEXT_COLUMNS, TEXT_LINES_PER_PAGE } =
    require('../../domain/outbound-mail/documents') as typeof import('../../domain/outbound-mail/documents');

  it('lays out exactly the pages textPageCount counts, lines no wider than the page', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.constantFrom('\n', '\t', '\f', '\r\n', 'x'.repeat(170), '😀'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 80 }), (parts) => {
        const text = parts.join('');
        const pages = textPages(text);
        expect(pages.length).toBe(textPageCount(text));
        for (const lines of pages) {
          expect(lines.length).toBeLessThanOrEqual(TEXT_LINES_PER_PAGE);
          for (const line of lines) expect([...line].length).toBeLessThanOrEqual(TEXT_COLUMNS);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('expands tabs to 8-column stops and starts a page at a form feed', () => {
    expect(textPages('a\tb\fsecond')).toEqual([['a       b'], ['second']]);
  });
});
