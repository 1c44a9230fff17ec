// The offline recipient address check on the real stack (an extension beyond the spec):
// every dry run answers address_check and warns about a doubtful address; a piece stores
// its check and shows it on every read; strict_address=true refuses a doubtful address
// with 400 fields[] before anything is stored or debited, over REST and MCP; the piece is
// printed (recorded) with the address as sent, never the normalised lines.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestApp, TestApp } from '../helpers/app';
import { api, balance, ledger, letterForm, letterPdf, mailCount, newSender, sendLetter } from './mail-helpers';

interface Case {
  label: string;
  address: Record<string, string>;
  deliverability: 'likely' | 'doubtful';
  /** The recipient fields a strict submission is refused on (doubtful cases). */
  fields?: string[];
  /** A substring of each expected warning message, in order. */
  warnings?: string[];
}

// Real addresses, written the many ways senders write them.
const CASES: Case[] = [
  {
    label: 'ZIP of another city in the same state',
    address: {
      recipient_line1: '301 W 2nd Street',
      recipient_city: 'Austin',
      recipient_state: 'TX',
      recipient_zip: '75201',
    },
    deliverability: 'doubtful',
    fields: ['recipient_city'],
    warnings: ['ZIP 75201 belongs to DALLAS, TX, not AUSTIN'],
  },
  {
    label: 'ZIP of another state',
    address: {
      recipient_line1: '1600 Pennsylvania Avenue NW',
      recipient_city: 'Washington',
      recipient_state: 'DC',
      recipient_zip: '10001',
    },
    deliverability: 'doubtful',
    fields: ['recipient_zip'],
    warnings: ['10001'],
  },
  {
    label: 'a lower-case address with a long suffix and ZIP+4',
    address: {
      recipient_line1: '1600 pennsylvania avenue nw',
      recipient_city: 'washington',
      recipient_state: 'dc',
      recipient_zip: '20500-0003',
    },
    deliverability: 'likely',
  },
  {
    label: 'a suite on the second line and a 9-digit ZIP',
    address: {
      recipient_line1: '350 Fifth Avenue',
      recipient_line2: 'Suite 3300',
      recipient_city: 'New York',
      recipient_state: 'NY',
      recipient_zip: '101183300',
    },
    deliverability: 'likely',
  },
  {
    label: 'a PO Box',
    address: {
      recipient_line1: 'P.O. Box 1234',
      recipient_city: 'Springfield',
      recipient_state: 'IL',
      recipient_zip: '62701',
    },
    deliverability: 'likely',
  },
];

describe('recipient address check (extension)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it.each(CASES.map((c) => [c.label, c] as const))('dry run: %s', async (_label, c) => {
    const s = await newSender(app, { creditsCents: 100_000 });
    const dry = await sendLetter(app, s, letterForm(await letterPdf(), { ...c.address, dry_run: true }));
    expect(dry.status).toBe(200);
    expect(dry.body.address_check.deliverability).toBe(c.deliverability);
    const addressWarnings = dry.body.warnings.filter((w: { code: string }) => w.code === 'recipient_address');
    if (c.deliverability === 'likely') {
      expect(addressWarnings).toEqual([]);
    } else {
      expect(addressWarnings.map((w: { field: string }) => w.field)).toEqual(c.fields);
      c.warnings!.forEach((text, i) => expect(addressWarnings[i].message).toContain(text));
      expect(addressWarnings[0].message).toMatch(/^Recipient address: /);
      expect(addressWarnings[0]).toMatchObject({
        deliverability: 'doubtful',
        check_code: dry.body.address_check.warnings[0].code,
      });
    }
    // The dry run stores nothing and charges nothing, whatever the check says.
    expect(await mailCount(app, s.memberId)).toBe(0);
    expect(await balance(app, s.memberId)).toBe(100_000);
  });

  it('a wrong ZIP: the dry run warns and normalises; strict_address=true refuses with fields[], nothing stored or debited', async () => {
    const s = await newSender(app, { creditsCents: 100_000 });
    const wrongZip = {
      recipient_line1: '301 W 2nd Street',
      recipient_city: 'Austin',
      recipient_state: 'tx',
      recipient_zip: '75201',
    };
    const dry = await sendLetter(app, s, letterForm(await letterPdf(), { ...wrongZip, dry_run: true }));
    expect(dry.status).toBe(200);
    expect(dry.body.address_check).toEqual({
      deliverability: 'doubtful',
      normalized: { line1: '301 W 2ND ST', line2: null, city: 'AUSTIN', state: 'TX', zip: '75201' },
      changes: [{ field: 'line1', from: 'Street', to: 'ST', reason: expect.any(String) }],
      warnings: [
        {
          code: 'zip_city_mismatch',
          field: 'city',
          message: expect.stringContaining('ZIP 75201 belongs to DALLAS, TX, not AUSTIN'),
        },
      ],
    });
    expect(dry.body.warnings).toContainEqual(
      expect.objectContaining({ code: 'recipient_address', field: 'recipient_city' }),
    );

    const letter = await letterPdf();
    for (const dryRun of [true, false]) {
      const strict = await sendLetter(
        app,
        s,
        letterForm(letter, { ...wrongZip, strict_address: true, dry_run: dryRun }),
        { 'idempotency-key': `strict-${dryRun}` },
      );
      expect(strict.status).toBe(400);
      expect(strict.body.fields).toEqual([
        { path: 'recipient_city', message: expect.stringContaining('ZIP 75201 belongs to DALLAS') },
      ]);
      expect(strict.body.details.address_check.deliverability).toBe('doubtful');
      expect(strict.body.suggested_action).toContain('strict_address');
    }
    expect(await mailCount(app, s.memberId)).toBe(0);
    expect(await balance(app, s.memberId)).toBe(100_000);
    const [{ n }] = await app.deps.db.query(
      `SELECT count(*)::int AS n FROM credits_ledger WHERE member_id = $1 AND kind = 'debit'`,
      [s.memberId],
    );
    expect(n).toBe(0);

    // Without strict_address the same letter is mailed as written, its check kept with it.
    const sent = await sendLetter(app, s, letterForm(letter, wrongZip));
    expect(sent.status).toBe(201);
    expect(sent.body.address_check.deliverability).toBe('doubtful');
    expect(sent.body).toMatchObject({
      recipient_line1: '301 W 2nd Street',
      recipient_city: 'Austin',
      recipient_state: 'TX',
    });
  });

  it('a good address is likely: the piece stores its check, every read shows it, and the piece keeps the address as sent', async () => {
    const s = await newSender(app, { creditsCents: 100_000 });
    const written = {
      recipient_line1: '1600 pennsylvania avenue nw',
      recipient_city: 'washington',
      recipient_state: 'dc',
      recipient_zip: '20500',
    };
    const sent = await sendLetter(app, s, letterForm(await letterPdf(), { ...written, strict_address: true }));
    expect(sent.status).toBe(201);
    expect(sent.body.address_check).toEqual({
      deliverability: 'likely',
      normalized: { line1: '1600 PENNSYLVANIA AVE NW', line2: null, city: 'WASHINGTON', state: 'DC', zip: '20500' },
      changes: [{ field: 'line1', from: 'avenue', to: 'AVE', reason: expect.any(String) }],
      warnings: [],
    });
    expect(await ledger(app, sent.body.id)).toHaveLength(1);
    // Advice only: the record, its review and the stored row keep the sender's lines.
    expect(sent.body).toMatchObject({ recipient_line1: '1600 pennsylvania avenue nw', recipient_city: 'washington' });
    expect(sent.body.human_review.send_to.formatted).toContain('1600 pennsylvania avenue nw');

    const read = await api(app)('GET', `/v1/mail/${sent.body.id}`, { key: s.key });
    expect(read.body.address_check).toEqual(sent.body.address_check);
    const list = await api(app)('GET', '/v1/mail', { key: s.key });
    expect(list.body.mail[0].address_check).toEqual(sent.body.address_check);
    const [row] = await app.deps.db.query(`SELECT address_check FROM outbound_mail WHERE id = $1`, [sent.body.id]);
    expect(row.address_check.deliverability).toBe('likely');

    // A piece from before the check (no stored check) reads as null.
    await app.deps.db.query(`UPDATE outbound_mail SET address_check = NULL WHERE id = $1`, [sent.body.id]);
    expect((await api(app)('GET', `/v1/mail/${sent.body.id}`, { key: s.key })).body.address_check).toBeNull();
  });

  it('MCP: send_outbound_mail takes strict_address and answers address_check', async () => {
    const s = await newSender(app, { creditsCents: 100_000 });
    const client = new Client({ name: 'address-check-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${s.key}` } },
      }),
    );
    try {
      const tools = await client.listTools();
      const send = tools.tools.find((t) => t.name === 'send_outbound_mail')!;
      expect(send.inputSchema.properties).toHaveProperty('strict_address');
      expect(send.inputSchema.required ?? []).not.toContain('strict_address');

      const args = {
        recipient_name: 'Jane Doe',
        recipient_line1: '301 W 2nd St',
        recipient_city: 'Austin',
        recipient_state: 'TX',
        recipient_zip: '75201',
        document_base64: (await letterPdf()).toString('base64'),
        document_filename: 'letter.pdf',
        service_md_version: 1,
      };
      const dry = (await client.callTool({
        name: 'send_outbound_mail',
        arguments: { ...args, dry_run: true },
      })) as unknown as { structuredContent: { result: any } };
      expect(dry.structuredContent.result.address_check.deliverability).toBe('doubtful');
      const strict = (await client.callTool({
        name: 'send_outbound_mail',
        arguments: { ...args, strict_address: true },
      })) as unknown as { isError?: boolean; structuredContent: { error: any; status: number } };
      expect(strict.isError).toBe(true);
      expect(strict.structuredContent.status).toBe(400);
      expect(strict.structuredContent.error.fields.map((f: { path: string }) => f.path)).toEqual(['recipient_city']);
      expect(await mailCount(app, s.memberId)).toBe(0);
      expect(await balance(app, s.memberId)).toBe(100_000);
    } finally {
      await client.close();
    }
  });
});
