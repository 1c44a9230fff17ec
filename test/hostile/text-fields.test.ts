// Property-based: SQL, path-traversal, template and control-character strings (plus random
// binary and grapheme strings) in every text field of POST /v1/mail, POST /v1/agents,
// POST /v1/signup and POST /v1/batch-mail (form fields, column_map and CSV cells). Every
// answer is a success or a 4xx in the spec's shape, never a 5xx; a refusal leaves no row
// and no object; an accepted value is stored as sent (after the documented trimming), so
// nothing was interpreted as SQL or as a path.
import fc from 'fast-check';
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
