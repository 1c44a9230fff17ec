// Hostile uploads to POST /v1/mail and POST /v1/batch-mail: the fixtures of
// test/fixtures/hostile (absurd PDF page trees, truncated and bomb DOCX files, a pixel-bomb
// PNG, text that is not UTF-8), 10 MB + 1 byte, a CSV of 10,001 rows, and malformed
// multipart bodies. Each refusal is a 4xx in the spec's shape that says what is wrong
// (too many fields, a file sent twice, a field too large, a file too large), reaches the
// client even while it is still sending (no reset), and leaves no row, no ledger entry
// and no stored object behind.
import fs, { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { client } from '../helpers/http';
import { HOSTILE_EXPECTATIONS } from '../fixtures/hostile/generate';
import { letterForm } from '../integration/mail-helpers';
import { batchForm, recipientsCsv } from '../integration/batch-helpers';
import {
  HostileApp,
  hostileMember,
  rawPost,
  RawAnswer,
  refusalProblem,
  sleep,
  snapshot,
  startHostileApp,
} from './helpers';
import { IN_MEMORY_BODY_BYTES } from '../../api/multipart';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'hostile');

/** A multipart body built by hand (so parts may repeat or be huge). */
function multipart(parts: Array<{ name: string; value: Buffer | string; filename?: string; type?: string }>) {
  const boundary = '----uploadBoundary4b7e9f';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.filename ? `Content-Type: ${p.type ?? 'application/pdf'}\r\n` : ''}\r\n`,
      ),
    );
    chunks.push(Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const LETTER_FIELDS = [
  { name: 'recipient_name', value: 'Jane Doe' },
  { name: 'recipient_line1', value: '1 Main St' },
  { name: 'recipient_city', value: 'Austin' },
  { name: 'recipient_state', value: 'TX' },
  { name: 'recipient_zip', value: '78701' },
];
const TEN_MB = 10 * 1024 * 1024;

async function onePagePdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([432, 288]);
  return Buffer.from(await doc.save());
}

/** A valid PDF padded with a trailing comment to exactly `size` bytes. */
async function pdfOfSize(size: number): Promise<Buffer> {
  const base = await onePagePdf();
  const eof = Buffer.from('\n%%EOF\n');
  return Buffer.concat([base, Buffer.from('%'), Buffer.alloc(size - base.length - 1 - eof.length, 0x41), eof]);
}

describe('hostile uploads', () => {
  let app: HostileApp;
  let api: ReturnType<typeof client>;
  let memberId: string;
  let key: string;
  let testKey: string;
  let template: Buffer;

  beforeAll(async () => {
    app = await startHostileApp();
    api = client(app.baseUrl);
    ({ memberId, key, testKey } = await hostileMember(app));
    template = await onePagePdf();
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Sends, expects a clean refusal, and checks that nothing was written. */
  async function refused(send: () => Promise<any>, allowed: number[] = [400]) {
    const before = await snapshot(app, memberId);
    const res = await send();
    expect(refusalProblem(res, allowed)).toBeNull();
    expect(await snapshot(app, memberId)).toEqual(before);
    return res;
  }

  describe.each(Object.entries(HOSTILE_EXPECTATIONS))('%s', (name, expected) => {
    const data = () => readFileSync(path.join(FIXTURES, name));

    if (expected === 'refused') {
      it('is refused as a letter with a 400 naming the document, nothing stored or charged', async () => {
        const res = await refused(() => api('POST', '/v1/mail', { key, form: letterForm(data(), {}, name) }));
        expect(res.body.fields.map((f: { path: string }) => f.path)).toContain('document');
      });
    } else {
      it(`is counted from its page tree as ${expected} page(s) on a dry run`, async () => {
        const res = await api('POST', '/v1/mail', { key, form: letterForm(data(), { dry_run: true }, name) });
        expect(res.status).toBe(200);
        expect(res.body.page_count).toBe(expected);
      });
    }

    if (name.endsWith('.pdf') && expected === 'refused') {
      it('is refused as a batch template, nothing stored', async () => {
        const res = await refused(() =>
          api('POST', '/v1/batch-mail', { key: testKey, form: batchForm(data(), recipientsCsv(3)) }),
        );
        expect(res.body.fields.map((f: { path: string }) => f.path)).toContain('template');
      });
    }
  });

  it('refuses a document of 10 MB + 1 byte and accepts one of exactly 10 MB', async () => {
    const res = await refused(() =>
      api('POST', '/v1/mail', { key, form: letterForm(Buffer.alloc(TEN_MB + 1, 0x41), {}, 'big.txt') }),
    );
    expect(res.body.fields[0].path).toBe('document');
    const exactly = await pdfOfSize(TEN_MB);
    expect(exactly.length).toBe(TEN_MB);
    const exact = await api('POST', '/v1/mail', { key, form: letterForm(exactly, { dry_run: true }) });
    expect([exact.status, exact.body.page_count]).toEqual([200, 1]);
  });

  it('refuses a batch template of 10 MB + 1 byte', async () => {
    const res = await refused(() =>
      api('POST', '/v1/batch-mail', {
        key: testKey,
        form: batchForm(Buffer.alloc(TEN_MB + 1, 0x41), recipientsCsv(3)),
      }),
    );
    expect(res.body.fields[0].path).toBe('template');
  });

  it('refuses a recipients CSV of 10,001 rows', async () => {
    const res = await refused(() =>
      api('POST', '/v1/batch-mail', { key: testKey, form: batchForm(template, recipientsCsv(10001)) }),
    );
    expect(JSON.stringify(res.body)).toMatch(/10,000/);
  });

  it('refuses a recipients CSV of 5 MB + 1 byte', async () => {
    const row = 'Recipient,1 Main St,,Austin,TX,78701\n';
    const csv = Buffer.concat([
      Buffer.from('name,address,address2,city,state,zip\n'),
      Buffer.alloc(5 * 1024 * 1024 + 1 - 38, row.repeat(1)),
    ]);
    await refused(() => api('POST', '/v1/batch-mail', { key: testKey, form: batchForm(template, csv) }));
  });

  describe('refusals say what is wrong and reach the client', () => {
    const post = (parts: Parameters<typeof multipart>[0], opts: { chunked?: boolean; path?: string } = {}) => {
      const { body, contentType } = multipart(parts);
      return rawPost(
        `${app.baseUrl}${opts.path ?? '/v1/mail'}`,
        { authorization: `Bearer ${key}`, 'content-type': contentType },
        body,
        opts,
      );
    };
    /** The refusal arrived (no reset), in the spec's shape, with `error` and `fields` that say what is wrong. */
    const expectRefusal = async (
      res: RawAnswer,
      status: number,
      error: RegExp,
      fields: Array<{ path: string; message: RegExp }>,
    ) => {
      expect(res.error).toBeUndefined();
      expect(res.sentAll).toBe(true);
      expect(refusalProblem({ status: res.status!, body: res.body, headers: new Headers() }, [status])).toBeNull();
      expect(res.body.error).toMatch(error);
      expect(res.body.fields).toEqual(fields.map((f) => ({ path: f.path, message: expect.stringMatching(f.message) })));
    };

    it('1,000 fields: 400 "at most 100 form fields"', async () => {
      const before = await snapshot(app, memberId);
      const res = await post([
        ...LETTER_FIELDS,
        ...Array.from({ length: 1000 }, (_, i) => ({ name: `f${i}`, value: 'v' })),
      ]);
      await expectRefusal(res, 400, /Too many form fields/, [{ path: 'body', message: /at most 100 form fields/ }]);
      expect(await snapshot(app, memberId)).toEqual(before);
    });

    it('two document parts: 400 naming document, "send one file"', async () => {
      const res = await post([
        ...LETTER_FIELDS,
        { name: 'document', value: template, filename: 'a.pdf' },
        { name: 'document', value: template, filename: 'b.pdf' },
      ]);
      await expectRefusal(res, 400, /More than one document file/, [{ path: 'document', message: /one file/ }]);
    });

    it('a file in a field that takes none: 400 naming it', async () => {
      const res = await post([
        ...LETTER_FIELDS,
        { name: 'document', value: template, filename: 'a.pdf' },
        { name: 'metadata', value: '{}', filename: 'm.json', type: 'application/json' },
      ]);
      await expectRefusal(res, 400, /Unexpected file/, [{ path: 'metadata', message: /not a file field/ }]);
    });

    it('70 KiB of agent_notes: 400 naming agent_notes (form fields hold at most 64 KiB)', async () => {
      const res = await post([
        ...LETTER_FIELDS,
        { name: 'agent_notes', value: 'n'.repeat(70 * 1024) },
        { name: 'document', value: template, filename: 'a.pdf' },
      ]);
      await expectRefusal(res, 400, /Form fields too large/, [{ path: 'agent_notes', message: /64 KiB/ }]);
    });

    it('a 12 MB document sent without a length (chunked) is refused naming document, and the answer arrives', async () => {
      const res = await post(
        [
          ...LETTER_FIELDS,
          { name: 'document', value: Buffer.alloc(12 * 1024 * 1024, 0x41), filename: 'big.txt', type: 'text/plain' },
        ],
        { chunked: true },
      );
      await expectRefusal(res, 400, /document may be at most 10 MB/, [{ path: 'document', message: /at most 10 MB/ }]);
    });

    it('a 40 MB body whose Content-Length is over the limit: 413 before it is read, and the answer arrives', async () => {
      const res = await post([
        ...LETTER_FIELDS,
        { name: 'document', value: Buffer.alloc(40 * 1024 * 1024, 0x41), filename: 'big.pdf' },
      ]);
      expect([res.error, res.sentAll]).toEqual([undefined, true]);
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({
        code: 'BODY_TOO_LARGE',
        retryable: false,
        fields: [{ path: 'body', message: expect.stringMatching(/at most/) }],
      });
      // The connection was drained, not reset: the server still answers.
      expect((await api('GET', '/v1/credits', { key })).status).toBe(200);
    });

    it('oversize JSON (2 MB) and an oversize intake email (40 MB) end with 413, not a reset', async () => {
      const json = await rawPost(
        `${app.baseUrl}/v1/agents`,
        { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        Buffer.from(JSON.stringify({ name: 'Big', description: 'd'.repeat(2 * 1024 * 1024) })),
        { chunked: true },
      );
      expect([json.error, json.sentAll, json.status, json.body?.code]).toEqual([
        undefined,
        true,
        413,
        'BODY_TOO_LARGE',
      ]);
      const email = await rawPost(
        `${app.baseUrl}/v1/intake/email`,
        { 'x-intake-secret': app.deps.config.intakeSecret, 'content-type': 'message/rfc822' },
        Buffer.alloc(40 * 1024 * 1024, 0x41),
      );
      expect([email.error, email.sentAll, email.status, email.body?.code]).toEqual([
        undefined,
        true,
        413,
        'MESSAGE_TOO_LARGE',
      ]);
    });

    it('a 10 MB template and a 4.9 MB CSV together are accepted (each within its own limit)', async () => {
      const exactly = await pdfOfSize(TEN_MB);
      const padding = 'p'.repeat(Math.floor((4.9 * 1024 * 1024) / 3));
      const csv = Buffer.from(
        `name,address,city,state,zip,notes\n${[1, 2, 3].map((i) => `Recipient ${i},${i} Main St,Austin,TX,7870${i},${padding}`).join('\n')}\n`,
      );
      const res = await api('POST', '/v1/batch-mail', { key: testKey, form: batchForm(exactly, csv) });
      expect([res.status, res.body.batch?.recipients?.valid]).toEqual([201, 3]);
    });
  });

  describe('malformed multipart bodies', () => {
    const boundary = '----hostileBoundary7MA4YWxkTrZu0gW';
    const raw =
      (body: string | Buffer, contentType = `multipart/form-data; boundary=${boundary}`) =>
      () =>
        api('POST', '/v1/mail', { key, raw: body, headers: { 'content-type': contentType } });
    const part = (name: string, value: string, filename?: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n${filename ? 'Content-Type: application/pdf\r\n' : ''}\r\n${value}\r\n`;
    const fields = ['recipient_name', 'recipient_line1', 'recipient_city', 'recipient_state', 'recipient_zip']
      .map((n, i) => part(n, ['Jane', '1 Main St', 'Austin', 'TX', '78701'][i]))
      .join('');

    it.each([
      ['no closing boundary', () => raw(`${fields}${part('document', '%PDF-1.4 truncated', 'a.pdf').slice(0, -2)}`)],
      ['a body cut off inside a part header', () => raw(`${fields}--${boundary}\r\nContent-Disposition: form-da`)],
      ['a boundary that never appears', () => raw('just some bytes\r\n')],
      ['no boundary parameter', () => raw(fields, 'multipart/form-data')],
      ['JSON sent as multipart', () => raw('{"recipient_name":"Jane"}')],
      ['an empty body', () => raw('')],
      [
        'a 100 KB part header',
        () =>
          raw(
            `--${boundary}\r\nContent-Disposition: form-data; name="${'x'.repeat(100 * 1024)}"\r\n\r\nv\r\n--${boundary}--\r\n`,
          ),
      ],
      [
        'two documents',
        () =>
          raw(
            `${fields}${part('document', '%PDF-1.4', 'a.pdf')}${part('document', '%PDF-1.4', 'b.pdf')}--${boundary}--\r\n`,
          ),
      ],
      [
        '101 fields',
        () => raw(`${Array.from({ length: 101 }, (_, i) => part(`f${i}`, 'v')).join('')}--${boundary}--\r\n`),
      ],
      [
        '3 MB of field values',
        () => raw(`${fields}${part('agent_notes', 'n'.repeat(3 * 1024 * 1024))}--${boundary}--\r\n`),
      ],
      ['a file where a field belongs', () => raw(`${part('recipient_name', 'Jane', 'name.txt')}--${boundary}--\r\n`)],
      ['text/plain instead of multipart', () => raw('recipient_name=Jane', 'text/plain')],
    ])('%s: 4xx, nothing stored', async (_label, make) => {
      await refused(make(), [400, 413, 415]);
    });
  });

  describe('where file parts go: memory for a small body, temporary files (always removed) for a larger one', () => {
    let spy: jest.SpyInstance;
    /** Temporary files the parser opened (formidable names them in the OS temp directory). */
    const tempFilesOpened = () => spy.mock.calls.map(([p]) => String(p)).filter((p) => path.dirname(p) === os.tmpdir());
    beforeEach(() => {
      spy = jest.spyOn(fs, 'createWriteStream');
    });
    afterEach(() => {
      spy.mockRestore();
    });
    const post = (parts: Parameters<typeof multipart>[0], opts: { chunked?: boolean } = {}) => {
      const { body, contentType } = multipart([{ name: 'allow_duplicate', value: 'true' }, ...parts]);
      return {
        size: body.length,
        answer: rawPost(
          `${app.baseUrl}/v1/mail`,
          { authorization: `Bearer ${testKey}`, 'content-type': contentType },
          body,
          opts,
        ),
      };
    };

    it('a 1-page letter is parsed in memory: no temporary file is opened, and the piece is stored', async () => {
      const sent = post([...LETTER_FIELDS, { name: 'document', value: template, filename: 'a.pdf' }]);
      expect(sent.size).toBeLessThan(IN_MEMORY_BODY_BYTES);
      const res = await sent.answer;
      expect([res.status, res.body.page_count]).toEqual([201, 1]);
      expect(tempFilesOpened()).toEqual([]);
    });

    it('a body just over the threshold, or one without a length, streams to a temporary file that is gone after the answer', async () => {
      const big = await pdfOfSize(IN_MEMORY_BODY_BYTES + 1);
      const sized = await post([...LETTER_FIELDS, { name: 'document', value: big, filename: 'a.pdf' }]).answer;
      const chunked = await post([...LETTER_FIELDS, { name: 'document', value: template, filename: 'b.pdf' }], {
        chunked: true,
      }).answer;
      expect([sized.status, chunked.status]).toEqual([201, 201]);
      const opened = tempFilesOpened();
      expect(opened).toHaveLength(2);
      expect(opened.filter((p) => existsSync(p))).toEqual([]);
    });

    it('refusals answer the same from memory and from temporary files, and leave no file behind', async () => {
      const small = template;
      const large = await pdfOfSize(Math.ceil(IN_MEMORY_BODY_BYTES / 2) + 1024);
      const answers: RawAnswer[] = [];
      for (const doc of [small, large]) {
        answers.push(
          await post([
            ...LETTER_FIELDS,
            { name: 'document', value: doc, filename: 'a.pdf' },
            { name: 'document', value: doc, filename: 'b.pdf' },
          ]).answer,
        );
      }
      expect(answers.map((a) => [a.status, a.body.error, a.body.fields])).toEqual([
        [
          400,
          'More than one document file',
          [{ path: 'document', message: 'send one file in this field, not several' }],
        ],
        [
          400,
          'More than one document file',
          [{ path: 'document', message: 'send one file in this field, not several' }],
        ],
      ]);
      // Only the large body's two parts went to disk; the wrong-field part of a large body too.
      const wrongField = await post([
        ...LETTER_FIELDS,
        { name: 'document', value: large, filename: 'a.pdf' },
        { name: 'metadata', value: large, filename: 'm.json', type: 'application/json' },
      ]).answer;
      expect([wrongField.status, wrongField.body.fields]).toEqual([
        400,
        [{ path: 'metadata', message: expect.stringMatching(/not a file field/) }],
      ]);
      const opened = tempFilesOpened();
      expect(opened.length).toBeGreaterThanOrEqual(3);
      expect(opened.filter((p) => existsSync(p))).toEqual([]);
    });

    it('an upload the client aborts halfway leaves no temporary file', async () => {
      const { body, contentType } = multipart([
        ...LETTER_FIELDS,
        { name: 'document', value: await pdfOfSize(3 * 1024 * 1024), filename: 'a.pdf' },
      ]);
      const { hostname, port } = new URL(app.baseUrl);
      const socket = net.connect(Number(port), hostname);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST ${new URL(app.baseUrl).pathname}/v1/mail HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${testKey}\r\ncontent-type: ${contentType}\r\ncontent-length: ${body.length}\r\n\r\n`,
      );
      socket.write(body.subarray(0, 1536 * 1024));
      for (let i = 0; i < 100 && tempFilesOpened().length === 0; i++) await sleep(50);
      const opened = tempFilesOpened();
      expect(opened).toHaveLength(1);
      socket.destroy();
      for (let i = 0; i < 100 && existsSync(opened[0]); i++) await sleep(50);
      expect(existsSync(opened[0])).toBe(false);
    });
  });
});
