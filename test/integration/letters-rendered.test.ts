// Letters sent as HTML, Markdown and DOCX against the real stack: Debian's Chromium (through
// the API's renderer) and LibreOffice lay them out, and the PDF they become is priced,
// proofed, shown as console page images and kept as the piece's document. Every way out of
// the HTML renderer is tried while a listener on 127.0.0.1 records any connection; refused
// documents store and charge nothing; a browser killed mid-render is replaced.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PNG } from 'pngjs';
import { TestApp, useTestApp } from '../helpers/app';
import { consoleSession } from '../helpers/oauth';
import { balance, letterPdf, ledger, mailCount, newSender, RECIPIENT, Sender, sendLetter } from './mail-helpers';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'documents');
const work = mkdtempSync(path.join(tmpdir(), 'letters-rendered-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function form(document: Buffer, filename: string, fields: Record<string, string | number | boolean> = {}, type = '') {
  const f = new FormData();
  for (const [k, v] of Object.entries({ ...RECIPIENT, ...fields })) f.append(k, String(v));
  f.append('document', new Blob([new Uint8Array(document)], type ? { type } : {}), filename);
  return f;
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** pdfinfo's page count and pdftotext's text of a PDF. */
function pdfFacts(pdf: Buffer): { pages: number; text: string } {
  const file = path.join(work, `f-${Date.now()}-${Math.random().toString(16).slice(2)}.pdf`);
  writeFileSync(file, pdf);
  const info = execFileSync('pdfinfo', [file]).toString();
  const text = execFileSync('pdftotext', ['-layout', file, '-']).toString();
  return { pages: Number(/Pages:\s+(\d+)/.exec(info)![1]), text };
}

/** The cost of an N-page PDF letter to the same recipient: what a laid-out letter of N pages must cost. */
async function pdfCost(app: TestApp, s: Sender, pages: number): Promise<number> {
  const res = await sendLetter(app, s, form(await letterPdf(pages), 'ref.pdf', { dry_run: true }));
  expect(res.status).toBe(200);
  return res.body.cost_cents;
}

const TWO_PAGE_HTML = (marker: string) =>
  `<!DOCTYPE html><html><head><style>h1{font-family:Caladea} .next{break-before:page}</style></head>` +
  `<body><h1>Dear Ms. Rivera</h1><p>${marker}: thank you for your letter.</p>` +
  `<p class="next">Page two of the letter.</p></body></html>`;

describe('HTML, Markdown and DOCX letters', () => {
  const { app } = useTestApp({ worker: false });
  let sender: Sender;
  beforeAll(async () => {
    sender = await newSender(app, { creditsCents: 100_000 });
  });

  it('an HTML letter is priced by its rendered pages, with a proof, and the PDF it became is its document', async () => {
    const html = Buffer.from(TWO_PAGE_HTML(`html-${Date.now()}`));
    const dry = await sendLetter(app, sender, form(html, 'letter.html', { dry_run: true }));
    expect(dry.status).toBe(200);
    expect(dry.body.page_count).toBe(2);
    expect(dry.body.cost_cents).toBe(await pdfCost(app, sender, 2));
    const proof = pdfFacts(await download(dry.body.proof_url));
    expect(proof.pages).toBe(3); // the address page, then the letter's two
    expect(proof.text).toContain('Page two of the letter.');

    const before = await balance(app, sender.memberId);
    const sent = await sendLetter(app, sender, form(html, 'letter.html'));
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ page_count: 2, cost_cents: dry.body.cost_cents });
    expect(sent.body.human_review.document).toMatchObject({
      filename: 'letter.pdf',
      type: 'pdf',
      content_type: 'application/pdf',
      page_count: 2,
      page_count_source: 'html_layout',
      source: { type: 'html', filename: 'letter.html', content_type: 'text/html', layout_page_count: 2 },
    });
    expect(await ledger(app, sent.body.id)).toEqual([
      expect.objectContaining({ kind: 'debit', amount_cents: -dry.body.cost_cents }),
    ]);
    expect(await balance(app, sender.memberId)).toBe(before - dry.body.cost_cents);
    // pdf_url and the facility's file are the rendered PDF; what was sent is kept beside it.
    expect(pdfFacts(await download(sent.body.pdf_url)).pages).toBe(2);
    expect(sent.body.proof_url).toEqual(expect.any(String));
    const [row] = await app.deps.db.query(`SELECT source_key FROM outbound_mail WHERE id = $1`, [sent.body.id]);
    expect((await app.deps.storage.get(row.source_key)).equals(html)).toBe(true);

    // Duplicate protection compares what was sent, though each render's PDF has other bytes.
    const again = await sendLetter(app, sender, form(html, 'letter.html'));
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('DUPLICATE_OUTBOUND_MAIL');
  });

  it('a Markdown letter is laid out by the print stylesheet, raw HTML shown as text, and priced by its pages', async () => {
    const markdown = Buffer.from(
      `# Dear Ms. Rivera\n\nThank you, *truly*. <b>not bold</b> <img src="http://127.0.0.1:9/x.png">\n\n` +
        `| item | amount |\n|---|---|\n| rent | $1,200 |\n\n\\pagebreak\n\nPage two, md-${Date.now()}.\n`,
    );
    const dry = await sendLetter(app, sender, form(markdown, 'letter.md', { dry_run: true }));
    expect(dry.status).toBe(200);
    expect(dry.body.page_count).toBe(2);
    expect(dry.body.cost_cents).toBe(await pdfCost(app, sender, 2));
    const proof = pdfFacts(await download(dry.body.proof_url));
    expect(proof.pages).toBe(3);
    expect(proof.text).toContain('<b>not bold</b>');
    expect(proof.text).toMatch(/<img src=.http:\/\/127\.0\.0\.1:9\/x\.png.>/);
    expect(proof.text).toMatch(/rent\s+\$1,200/);

    const sent = await sendLetter(app, sender, form(markdown, 'notes.txt', {}, 'text/markdown'));
    expect(sent.status).toBe(201);
    expect(sent.body.human_review.document).toMatchObject({
      page_count: 2,
      page_count_source: 'markdown_layout',
      source: { type: 'markdown', filename: 'notes.txt' },
    });
  });

  it('MCP send_outbound_mail takes an HTML letter by its document_filename', async () => {
    const client = new Client({ name: 'letters-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${sender.key}` } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: 'send_outbound_mail',
        arguments: {
          ...RECIPIENT,
          service_md_version: 1,
          document_base64: Buffer.from(TWO_PAGE_HTML(`mcp-${Date.now()}`)).toString('base64'),
          document_filename: 'letter.htm',
          dry_run: true,
        },
      })) as { isError?: boolean; structuredContent?: { result?: Record<string, unknown> } };
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent!.result).toMatchObject({ dry_run: true, page_count: 2 });
    } finally {
      await client.close();
    }
  });

  describe('the renderer cannot be turned against us', () => {
    let listener: net.Server;
    const connections: string[] = [];
    let base = '';
    const secretFile = path.join(work, 'secret.html');
    const secret = `SECRET-${Date.now()}`;
    beforeAll(async () => {
      writeFileSync(secretFile, `<p>${secret}</p>`);
      listener = net.createServer((socket) => {
        connections.push(`connection from ${socket.remoteAddress}`);
        socket.on('data', (d) => connections.push(d.toString().split('\r\n')[0]));
        socket.on('error', () => undefined);
        socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/css\r\ncontent-length: 0\r\n\r\n');
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
      base = `http://127.0.0.1:${(listener.address() as net.AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

    const page = (head: string, body: string) =>
      `<!DOCTYPE html><html><head>${head}</head><body><p>Letter body ${Math.random()}</p>${body}</body></html>`;
    const ways: Array<[string, () => string, string | null]> = [
      ['a remote image', () => page('', `<img src="${base}/image.png">`), '/image.png'],
      ['a CSS @import', () => page(`<style>@import url("${base}/import.css");</style>`, ''), '/import.css'],
      ['an <iframe>', () => page('', `<iframe src="${base}/frame"></iframe>`), '127.0.0.1'],
      [
        'a file: URL',
        () => page('', `<iframe src="file://${secretFile}"></iframe><img src="file://${secretFile}">`),
        `file://${secretFile}`,
      ],
      ['a <link rel=stylesheet>', () => page(`<link rel="stylesheet" href="${base}/style.css">`, ''), '/style.css'],
      ['a CSS url() background', () => page(`<style>body{background:url(${base}/bg.png)}</style>`, ''), '/bg.png'],
      [
        '<object>, <embed>, <video> and a web font',
        () =>
          page(
            `<style>@font-face{font-family:X;src:url(${base}/font.woff)} p{font-family:X}</style><link rel="preconnect" href="${base}">`,
            `<object data="${base}/object"></object><embed src="${base}/embed"><video src="${base}/video" poster="${base}/poster"></video>`,
          ),
        '/font.woff',
      ],
      ['a script', () => page('', `<script>document.body.innerHTML = 'SCRIPT-RAN'</script>`), null],
    ];

    it.each(ways)('%s loads nothing and the letter still renders', async (_, html, blocked) => {
      const res = await sendLetter(app, sender, form(Buffer.from(html()), 'letter.html', { dry_run: true }));
      expect(res.status).toBe(200);
      const proof = pdfFacts(await download(res.body.proof_url));
      expect(proof.text).toContain('Letter body');
      expect(proof.text).not.toContain('SCRIPT-RAN');
      expect(proof.text).not.toContain(secret);
      const warning = res.body.warnings.find((w: { code: string }) => w.code === 'document_resources_blocked');
      if (blocked) expect(warning.urls.some((u: string) => u.includes(blocked))).toBe(true);
      else expect(warning).toBeUndefined();
      expect(connections).toEqual([]);
    });

    it('a meta refresh is refused with 400 on document, before anything is stored or charged', async () => {
      const before = { pieces: await mailCount(app, sender.memberId), balance: await balance(app, sender.memberId) };
      for (const target of [`${base}/refresh`, '']) {
        const meta = `<meta http-equiv="refresh" content="0${target ? `;url=${target}` : ''}">`;
        const res = await sendLetter(app, sender, form(Buffer.from(page(meta, '')), 'letter.html'));
        expect(res.status).toBe(400);
        expect(res.body.fields).toEqual([{ path: 'document', message: expect.stringMatching(/meta http-equiv/) }]);
        expect(res.body.details).toEqual({ render_refusal: 'navigation' });
      }
      expect(await mailCount(app, sender.memberId)).toBe(before.pieces);
      expect(await balance(app, sender.memberId)).toBe(before.balance);
      expect(connections).toEqual([]);
    });
  });

  it('a letter leaves nothing behind for the next one on the same page (its CSP included)', async () => {
    const renderer = app.deps.renderers.html;
    // An image of an odd size, to tell it from the browser's broken-image icon.
    const image = new PNG({ width: 37, height: 23 });
    image.data.fill(90);
    const png = PNG.sync.write(image).toString('base64');
    const withImage = `<!DOCTYPE html><p>Logo</p><img style="width:2in" src="data:image/png;base64,${png}">`;
    /** Images (and their masks) of 37 x 23 pixels in a PDF (pdfimages -list: width and height are columns 4 and 5). */
    const images = (pdf: Buffer) => {
      const file = path.join(work, `images-${Date.now()}.pdf`);
      writeFileSync(file, pdf);
      const lines = execFileSync('pdfimages', ['-list', file]).toString().trim().split('\n').slice(2);
      return lines.filter((l) => /^\s*\S+\s+\S+\s+\S+\s+37\s+23\s/.test(l)).length;
    };
    expect(images((await renderer.render(withImage)).pdf)).toBeGreaterThan(0);
    // A stricter policy of its own forbids data: images in this letter only.
    const strict = `<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="img-src 'none'">${withImage}`;
    expect(images((await renderer.render(strict)).pdf)).toBe(0);
    expect(images((await renderer.render(withImage)).pdf)).toBeGreaterThan(0);
  });

  it('HTML over 2 MB is refused with 400 on document; nothing is stored or charged', async () => {
    const before = { pieces: await mailCount(app, sender.memberId), balance: await balance(app, sender.memberId) };
    const big = Buffer.from(`<!DOCTYPE html><p>${'x'.repeat(2 * 1024 * 1024)}</p>`);
    const res = await sendLetter(app, sender, form(big, 'big.html'));
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual([{ path: 'document', message: expect.stringMatching(/at most 2097152 bytes/) }]);
    expect(await mailCount(app, sender.memberId)).toBe(before.pieces);
    expect(await balance(app, sender.memberId)).toBe(before.balance);
  });

  it('an HTML letter longer than 60 pages is refused with 400 on document', async () => {
    const long = `<!DOCTYPE html><style>p{break-after:page}</style>${'<p>page</p>'.repeat(61)}`;
    const res = await sendLetter(app, sender, form(Buffer.from(long), 'long.html', { dry_run: true }));
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ render_refusal: 'too_many_pages' });
    const sixty = `<!DOCTYPE html><style>p{break-after:page}</style>${'<p>page</p>'.repeat(59)}<p>last</p>`;
    const ok = await sendLetter(app, sender, form(Buffer.from(sixty), 'sixty.html', { dry_run: true }));
    expect(ok.status).toBe(200);
    expect(ok.body.page_count).toBe(60);
  });

  it('a browser killed mid-render is replaced: that render and the next one still answer', async () => {
    const renderer = app.deps.renderers.html;
    await sendLetter(app, sender, form(Buffer.from(TWO_PAGE_HTML('warm')), 'warm.html', { dry_run: true }));
    const pid = await renderer.browserPid();
    expect(pid).toEqual(expect.any(Number));
    // A letter heavy enough to be mid-render when the browser is killed.
    const heavy = `<!DOCTYPE html><style>p{font-size:4px;margin:0}</style>${'<p>A line of a long letter that takes the browser a while to lay out.</p>'.repeat(6000)}`;
    const inFlight = sendLetter(app, sender, form(Buffer.from(heavy), 'heavy.html', { dry_run: true }));
    await new Promise((resolve) => setTimeout(resolve, 150));
    process.kill(pid!, 'SIGKILL');
    const first = await inFlight;
    // Rendered again on a new browser (or, had it finished first, rendered already).
    expect(first.status).toBe(200);
    const next = await sendLetter(
      app,
      sender,
      form(Buffer.from(TWO_PAGE_HTML('next')), 'next.html', { dry_run: true }),
    );
    expect(next.status).toBe(200);
    expect(next.body.page_count).toBe(2);
    const newPid = await renderer.browserPid();
    expect(newPid).toEqual(expect.any(Number));
    expect(newPid).not.toBe(pid);
  });

  describe('DOCX laid out by LibreOffice', () => {
    it.each([
      ['docx-1-page.docx', 1],
      ['docx-3-pages.docx', 3],
      ['docx-12-pages.docx', 12],
    ])('%s is priced by its %i real pages and shown as console page images', async (name, pages) => {
      const docx = readFileSync(path.join(FIXTURES, name));
      const owner = await newSender(app, { creditsCents: 50_000 });
      const before = await balance(app, owner.memberId);
      const sent = await sendLetter(app, owner, form(docx, name));
      expect(sent.status).toBe(201);
      expect(sent.body.page_count).toBe(pages);
      expect(sent.body.human_review.document).toMatchObject({
        type: 'pdf',
        page_count_source: 'docx_layout',
        source: { type: 'docx', filename: name, layout_page_count: pages },
      });
      expect(sent.body.cost_cents).toBe(await pdfCost(app, owner, pages));
      expect(await balance(app, owner.memberId)).toBe(before - sent.body.cost_cents);
      expect(pdfFacts(await download(sent.body.pdf_url)).pages).toBe(pages);

      const { cookie } = await consoleSession(app.deps, owner.memberKey);
      for (const n of [1, pages]) {
        const image = await fetch(`${app.siteUrl}/console/mail/${sent.body.id}/pages/${n}.png`, {
          headers: { cookie },
        });
        expect(image.status).toBe(200);
        expect(image.headers.get('content-type')).toBe('image/png');
        const png = Buffer.from(await image.arrayBuffer());
        expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      }
      const beyond = await fetch(`${app.siteUrl}/console/mail/${sent.body.id}/pages/${pages + 1}.png`, {
        headers: { cookie },
      });
      expect(beyond.status).toBe(404);
    });

    it('an explicit page_count still prices a DOCX, with a warning that the layout disagrees', async () => {
      const docx = readFileSync(path.join(FIXTURES, 'docx-3-pages.docx'));
      const dry = await sendLetter(app, sender, form(docx, 'statement.docx', { dry_run: true, page_count: 2 }));
      expect(dry.status).toBe(200);
      expect(dry.body.page_count).toBe(2);
      expect(dry.body.cost_cents).toBe(await pdfCost(app, sender, 2));
      expect(dry.body.warnings).toContainEqual(
        expect.objectContaining({ code: 'page_count_differs_from_layout', page_count: 2, layout_page_count: 3 }),
      );
      const same = await sendLetter(app, sender, form(docx, 'statement.docx', { dry_run: true, page_count: 3 }));
      expect(same.body.warnings.map((w: { code: string }) => w.code)).not.toContain('page_count_differs_from_layout');
    });

    it('a DOCX that links an image on 127.0.0.1 is laid out without fetching it', async () => {
      const hits: string[] = [];
      const listener = net.createServer((socket) => {
        hits.push('connection');
        socket.end();
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
      const port = (listener.address() as net.AddressInfo).port;
      try {
        const docx = await linkedImageDocx(`http://127.0.0.1:${port}/linked.png`);
        const dry = await sendLetter(app, sender, form(docx, 'linked.docx', { dry_run: true }));
        expect(dry.status).toBe(200);
        expect(dry.body.page_count).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(hits).toEqual([]);
      } finally {
        await new Promise<void>((resolve) => listener.close(() => resolve()));
      }
    });

    it('a file LibreOffice cannot read is refused with 400 on document; nothing stored or charged', async () => {
      const before = { pieces: await mailCount(app, sender.memberId), balance: await balance(app, sender.memberId) };
      const JSZip = (await import('jszip')).default;
      const zip = new JSZip();
      zip.file('[Content_Types].xml', '<Types/>');
      zip.file('word/document.xml', 'this is not XML at all <<<');
      const res = await sendLetter(app, sender, form(await zip.generateAsync({ type: 'nodebuffer' }), 'broken.docx'));
      expect(res.status).toBe(400);
      expect(res.body.fields).toEqual([{ path: 'document', message: expect.stringMatching(/cannot read it/) }]);
      expect(res.body.details).toEqual({ render_refusal: 'unreadable' });
      expect(await mailCount(app, sender.memberId)).toBe(before.pieces);
      expect(await balance(app, sender.memberId)).toBe(before.balance);
    });
  });
});

describe('an HTML render that takes too long', () => {
  const { app } = useTestApp({ worker: false, env: { RENDER_HTML_TIMEOUT_MS: '1500' } });

  it('is refused with 400 on document, nothing stored or charged', async () => {
    const sender = await newSender(app, { creditsCents: 20_000 });
    const before = await balance(app, sender.memberId);
    // Blocks inside thousands of nested inline boxes: minutes of layout, far past 1.5 s on any machine.
    const slow = `<!DOCTYPE html>${'<span style="font-size:1px">'.repeat(3000)}${'<p>x y z</p>'.repeat(60000)}`;
    const res = await sendLetter(app, sender, form(Buffer.from(slow), 'slow.html'));
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual([{ path: 'document', message: expect.stringMatching(/longer than 1.5 s/) }]);
    expect(res.body.details).toEqual({ render_refusal: 'timeout' });
    expect(await mailCount(app, sender.memberId)).toBe(0);
    expect(await balance(app, sender.memberId)).toBe(before);
    // The renderer is still there for the next letter.
    const ok = await sendLetter(
      app,
      sender,
      form(Buffer.from('<!DOCTYPE html><p>short</p>'), 'short.html', { dry_run: true }),
    );
    expect(ok.status).toBe(200);
  });
});

/** A Word file whose only image is linked (r:link) to `url`, not embedded. */
async function linkedImageDocx(url: string): Promise<Buffer> {
  const JSZip = (await import('jszip')).default;
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  );
  zip.file(
    '_rels/.rels',
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
  );
  zip.file(
    'word/_rels/document.xml.rels',
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      `<Relationship Id="rId5" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="${url}" TargetMode="External"/></Relationships>`,
  );
  const ns =
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ' +
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' +
    'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"';
  const image =
    '<w:p><w:r><w:drawing><wp:inline><wp:extent cx="952500" cy="952500"/><wp:docPr id="1" name="Picture 1"/><a:graphic>' +
    '<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="0" name="linked.png"/><pic:cNvPicPr/></pic:nvPicPr>' +
    '<pic:blipFill><a:blip r:link="rId5"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="952500" cy="952500"/></a:xfrm>' +
    '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>';
  zip.file(
    'word/document.xml',
    `<?xml version="1.0" encoding="UTF-8"?><w:document ${ns}><w:body><w:p><w:r><w:t>A letter with a linked picture</w:t></w:r></w:p>${image}` +
      '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:body></w:document>',
  );
  return zip.generateAsync({ type: 'nodebuffer' });
}
