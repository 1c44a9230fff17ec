// Property-based: SQL, path-traversal, template and control-character strings (plus random
// binary and grapheme strings) in every text field of POST /v1/mail, POST /v1/agents,
// POST /v1/signup and POST /v1/batch-mail (form fields, column_map and CSV cells). Every
// answer is a success or a 4xx in the spec's shape, never a 5xx; a refusal leaves no row
// and no object; an accepted value is stored as sent (after the documented trimming), so
// nothing was interpreted as SQL or as a path. Then text that would read or print as
// something else (decision 0110): bidi controls, invisible formatting characters and line
// breaks in single-line fields are refused by POST /v1/mail and the MCP send tool with the
// field's path and the character named, and a batch CSV row holding one is skipped.
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent } from '../helpers/agents';
import { insertMemberKey } from '../../services/accounts/accounts';
import { batchForm } from '../integration/batch-helpers';
import { HOSTILE_STRINGS, HostileApp, refusalProblem, snapshot, startHostileApp } from './helpers';

jest.setTimeout(180000);

const hostile = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ maxLength: 10 }))
      .map(([a, b]) => `${b}${a}${b}`),
  },
);

const RUNS = 25;
const MD = { 'x-service-md-version': '1' };

const MAIL_TEXT_FIELDS = [
  'recipient_name',
  'recipient_company',
  'recipient_line1',
  'recipient_line2',
  'recipient_city',
  'recipient_state',
  'recipient_zip',
  'recipient_country',
  'return_name',
  'return_company',
  'return_line1',
  'return_line2',
  'return_city',
  'return_state',
  'return_zip',
  'mail_class',
  'agent_notes',
  'metadata',
  'package_id',
  'inbound_capture_id',
  'postal_mail_thread_id',
  'mail_run_id',
  'color',
  'duplex',
  'page_count',
  'requires_approval',
  'dry_run',
  'allow_duplicate',
] as const;
/** Free text stored as sent (trimmed). */
const VERBATIM = new Set([
  'recipient_name',
  'recipient_company',
  'recipient_line1',
  'recipient_line2',
  'recipient_city',
  'agent_notes',
]);
/** What arrives over HTTP: UTF-8 cannot carry a lone surrogate, so it becomes U+FFFD. */
const wellFormed = (v: string) => Buffer.from(v, 'utf8').toString('utf8');
const RETURN_BLOCK = { return_line1: '9 Return Rd', return_city: 'Dallas', return_state: 'TX', return_zip: '75201' };

describe('hostile strings in every text field', () => {
  let app: HostileApp;
  let api: ReturnType<typeof client>;
  let memberId: string;
  let memberKey: string;
  let testKey: string;
  let pdf: Buffer;
  let template: Buffer;

  beforeAll(async () => {
    app = await startHostileApp();
    api = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 0 });
    memberId = member.member_id;
    memberKey = member.key;
    await newAgent(app.baseUrl, memberKey);
    testKey = (await insertMemberKey(app.deps.db, memberId, { name: 'sandbox', environment: 'test' })).key;
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    pdf = Buffer.from(await doc.save());
    const card = await PDFDocument.create();
    card.addPage([432, 288]);
    template = Buffer.from(await card.save());
  });
  afterAll(async () => {
    await app?.close();
  });

  /** A 5xx, a refusal not in the spec's shape, or a refusal that wrote something, is a failure. */
  async function judge(label: string, send: () => Promise<any>, ok: number[], refusals: number[]) {
    const before = await snapshot(app, memberId);
    const res = await send();
    if (ok.includes(res.status)) return res;
    const problem = refusalProblem(res, refusals);
    if (problem) throw new Error(`${label}: ${problem}`);
    const after = await snapshot(app, memberId);
    if (JSON.stringify(after) !== JSON.stringify(before))
      throw new Error(`${label}: refused but wrote ${JSON.stringify({ before, after })}`);
    return res;
  }

  it('POST /v1/mail', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...MAIL_TEXT_FIELDS), hostile, async (field, value) => {
        const form = new FormData();
        const fields: Record<string, string> = {
          recipient_name: 'Jane Doe',
          recipient_line1: '1 Main St',
          recipient_city: 'Austin',
          recipient_state: 'TX',
          recipient_zip: '78701',
          allow_duplicate: 'true',
          ...(field.startsWith('return_') ? RETURN_BLOCK : {}),
          [field]: value,
        };
        for (const [k, v] of Object.entries(fields)) form.append(k, v);
        form.append(
          'document',
          new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }),
          value.slice(0, 100) || 'letter.pdf',
        );
        const res = await judge(
          `${field}=${JSON.stringify(value).slice(0, 60)}`,
          () => api('POST', '/v1/mail', { key: testKey, form }),
          [200, 201],
          [400, 403, 404, 409, 422],
        );
        if (res.status === 201) {
          const stored = await api('GET', `/v1/mail/${res.body.id}`, { key: testKey });
          expect(stored.status).toBe(200);
          // multipart/form-data encoding (the HTML rule FormData follows) sends every line break as CRLF.
          if (VERBATIM.has(field) && value.trim() !== '')
            expect(stored.body[field]).toBe(wellFormed(value.trim()).replace(/\r\n|\r|\n/g, '\r\n'));
          const [row] = await app.deps.db.query(`SELECT document_key FROM outbound_mail WHERE id = $1`, [res.body.id]);
          expect(row.document_key).toBe(`mail/${res.body.id}/document.pdf`);
        }
      }),
      { numRuns: RUNS * 2 },
    );
    // Nothing was dropped or deleted along the way.
    expect((await snapshot(app, memberId)).members).toBe(1);
  });

  describe('text that reads as something else (decision 0110)', () => {
    const ADDRESS = {
      recipient_name: 'Jane Doe',
      recipient_line1: '1 Main St',
      recipient_city: 'Austin',
      recipient_state: 'TX',
      recipient_zip: '78701',
      allow_duplicate: 'true',
    };
    /** [field, value, what the message must say]; every one a 400 naming exactly that field. */
    const REFUSED: Array<[string, string, RegExp]> = [
      ['recipient_name', 'Ada\u202ELovelace', /U\+202E right-to-left override at character 4/],
      ['recipient_company', 'Acme\u2067 Corp\u2069', /U\+2067 right-to-left isolate at character 5/],
      [
        'recipient_line1',
        '1 Main St\nEvil Corp',
        /must be a single line: line breaks are refused \(U\+000[AD] .* at character 10\)/,
      ],
      ['recipient_line2', 'Apt\u200B4', /U\+200B zero-width space/],
      ['recipient_city', 'Aus\u00ADtin', /U\+00AD soft hyphen/],
      ['return_name', 'Ada\tLovelace', /control characters \(U\+0009 tab/],
      ['return_line1', '9 Return Rd\u{E0041}\u{E0042}', /U\+E0041 tag character/],
      ['return_line2', 'Suite 1\u2028Floor 2', /must be a single line/],
      ['agent_notes', 'Approve: \u202E005$ ot 5$\u202C', /U\+202E right-to-left override/],
    ];

    async function send(fields: Record<string, string>, filename = 'letter.pdf') {
      const form = new FormData();
      for (const [k, v] of Object.entries({ ...ADDRESS, ...fields })) form.append(k, v);
      form.append('document', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), filename);
      return api('POST', '/v1/mail', { key: testKey, form });
    }

    it('POST /v1/mail refuses each with 400 at its field, the character named, and writes nothing', async () => {
      for (const [field, value, message] of REFUSED) {
        const res = await judge(
          `${field}=${JSON.stringify(value)}`,
          () => send({ ...(field.startsWith('return_') ? RETURN_BLOCK : {}), [field]: value }),
          [],
          [400],
        );
        expect({ field, fields: res.body.fields }).toEqual({
          field,
          fields: [{ path: field, message: expect.stringMatching(message) }],
        });
      }
      // The document's file name is shown to the owner beside its pages: refused the same way.
      const named = await judge('filename', () => send({}, 'invoice\u202Efdp.exe'), [], [400]);
      expect(named.body.fields).toEqual([
        { path: 'document', message: expect.stringMatching(/^the file name .*U\+202E right-to-left override/) },
      ]);
      // Notes keep their line breaks; joiners inside a word (Persian, emoji) are text, not tricks.
      const kept = await send({
        agent_notes: 'Line one\nLine two',
        recipient_name: 'می\u200Cخواهم 👨\u200D👩\u200D👧',
      });
      expect(kept.status).toBe(201);
      expect(kept.body).toMatchObject({
        agent_notes: 'Line one\r\nLine two', // multipart sends line breaks as CRLF
        recipient_name: 'می\u200Cخواهم 👨\u200D👩\u200D👧',
      });
    });

    it('the MCP send tool refuses the same with the same field paths', async () => {
      const client = new Client({ name: 'hidden-characters', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${testKey}` } },
        }),
      );
      try {
        const { allow_duplicate: _unused, ...address } = ADDRESS;
        const document = { document_base64: pdf.toString('base64'), document_filename: 'letter.pdf' };
        for (const [field, value, message] of [
          ...REFUSED,
          ['document_filename', 'invoice\u202Efdp.exe', /U\+202E right-to-left override/] as [string, string, RegExp],
        ]) {
          const before = await snapshot(app, memberId);
          const r = (await client.callTool({
            name: 'send_outbound_mail',
            arguments: {
              ...address,
              ...document,
              allow_duplicate: true,
              ...(field.startsWith('return_') ? RETURN_BLOCK : {}),
              [field]: value,
            },
          })) as { isError?: boolean; structuredContent?: { error?: { fields?: unknown[] }; status?: number } };
          expect({ field, isError: r.isError, status: r.structuredContent?.status }).toEqual({
            field,
            isError: true,
            status: 400,
          });
          expect({ field, fields: r.structuredContent!.error!.fields }).toEqual({
            field,
            fields: [{ path: field, message: expect.stringMatching(message) }],
          });
          expect(await snapshot(app, memberId)).toEqual(before);
        }
      } finally {
        await client.close();
      }
    });

    it('a batch CSV row holding one is skipped with its reason; the other rows are kept', async () => {
      const csv = [
        'name,address,address2,city,state,zip',
        'Ada Lovelace,1 Main St,,Austin,TX,78701',
        '"Bob\u202Eyllas",2 Main St,,Austin,TX,78702',
        'Carol Shaw,3 Main St,"Apt\u2066 4",Austin,TX,78703',
        'Dan Ek,"4 Main St\nApt 4",,Austin,TX,78704',
      ].join('\n');
      const res = await api('POST', '/v1/batch-mail', {
        key: testKey,
        headers: MD,
        form: batchForm(template, Buffer.from(csv), { job_name: 'Hidden characters' }),
      });
      expect(res.status).toBe(201);
      expect(res.body.batch.recipients).toMatchObject({ total_rows: 4, valid: 2, skipped: 2 });
      expect(res.body.batch.recipients.skipped_rows).toEqual([
        {
          row: 3,
          field: 'name',
          value: 'Bob\u202Eyllas',
          error: expect.stringMatching(/U\+202E right-to-left override at character 4/),
        },
        {
          row: 4,
          field: 'address2',
          value: 'Apt\u2066 4',
          error: expect.stringMatching(/U\+2066 left-to-right isolate/),
        },
      ]);
      // And the batch's own name is one line too.
      const named = await judge(
        'job_name',
        () =>
          api('POST', '/v1/batch-mail', {
            key: testKey,
            headers: MD,
            form: batchForm(template, Buffer.from(csv), { job_name: 'Spring\u202E mailer' }),
          }),
        [],
        [400],
      );
      expect(named.body.fields).toEqual([{ path: 'job_name', message: expect.stringMatching(/U\+202E/) }]);
    });
  });

  it('POST /v1/agents', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('name', 'display_name', 'description', 'webhook_url'),
        hostile,
        async (field, value) => {
          const body: Record<string, string> = { name: `agent-${randomBytes(4).toString('hex')}`, [field]: value };
          const res = await judge(
            `${field}=${JSON.stringify(value).slice(0, 60)}`,
            () => api('POST', '/v1/agents', { key: memberKey, json: body }),
            [201],
            [400, 409],
          );
          if (res.status === 201) {
            const stored = await api('GET', `/v1/agents/${res.body.id}`, { key: memberKey });
            expect(stored.status).toBe(200);
            if (field !== 'webhook_url') expect([value, value.trim()].map(wellFormed)).toContain(stored.body[field]);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('POST /v1/signup', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('email', 'password', 'full_name', 'needs', 'lead_id'),
        hostile,
        async (field, value) => {
          const email = `hostile-${randomBytes(5).toString('hex')}@example.test`;
          const body: Record<string, string> = {
            email,
            password: 'long enough password',
            full_name: 'Hostile Tester',
            [field]: value,
          };
          // Scoped to the email sent: other test files create members in the same database meanwhile.
          // An email with NUL cannot be stored (nor looked up) at all: nothing to count.
          const countSent = async () =>
            body.email.includes('\u0000')
              ? 0
              : (await app.deps.db.query(`SELECT count(*)::int AS n FROM members WHERE email = $1`, [body.email]))[0].n;
          const before = await countSent();
          const res = await api('POST', '/v1/signup', { json: body });
          const label = `${field}=${JSON.stringify(value).slice(0, 60)}`;
          if (res.status !== 201) {
            const problem = refusalProblem(res, [400, 404, 409]);
            if (problem) throw new Error(`${label}: ${problem}`);
            expect(await countSent()).toBe(before);
            return;
          }
          const [member] = await app.deps.db.query(`SELECT full_name, password_hash FROM members WHERE email = $1`, [
            field === 'email' ? value.trim().toLowerCase() : email,
          ]);
          if (field === 'full_name') expect([value, value.trim()].map(wellFormed)).toContain(member.full_name);
          expect(member.password_hash).not.toContain(field === 'password' ? value : 'long enough password');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('POST /v1/batch-mail: form fields, column_map and CSV cells', async () => {
    const csvCell = (v: string) => `"${v.replace(/"/g, '""')}"`;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'job_name',
          'mail_type',
          'mailing_class',
          'duplex',
          'column_map',
          'csv_name',
          'csv_address',
          'csv_header',
        ),
        hostile,
        async (field, value) => {
          const fields: Record<string, string> = {};
          let csv =
            'name,address,city,state,zip\nAda Lovelace,1 Main St,Austin,TX,78701\nAlan Turing,2 Main St,Austin,TX,78702\n';
          if (field === 'csv_name') csv += `${csvCell(value)},3 Main St,Austin,TX,78703\n`;
          else if (field === 'csv_address') csv += `Grace Hopper,${csvCell(value)},Austin,TX,78703\n`;
          else if (field === 'csv_header') csv = csv.replace('name,', `${csvCell(value)},`);
          else if (field === 'column_map') fields.column_map = JSON.stringify({ name: value });
          else fields[field] = value;
          const res = await judge(
            `${field}=${JSON.stringify(value).slice(0, 60)}`,
            () =>
              api('POST', '/v1/batch-mail', {
                key: testKey,
                headers: MD,
                form: batchForm(template, Buffer.from(csv), fields),
              }),
            [201],
            [400, 409, 422],
          );
          // Sent as multipart/form-data: every line break arrives as CRLF (see the piece fields above).
          if (res.status === 201 && field === 'job_name')
            expect([value, value.trim()].map((v) => wellFormed(v).replace(/\r\n|\r|\n/g, '\r\n'))).toContain(
              res.body.batch.job_name,
            );
        },
      ),
      { numRuns: RUNS },
    );
  });
});
