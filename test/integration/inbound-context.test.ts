// What an agent reads after forwarded mail arrives: extraction with lineage (PDF text,
// real OCR of a photo and of a scanned letter), category and suggested action, reply
// contact, deadlines and key facts, postal threads (a second letter joins the first),
// files and signed URLs, scoping between members and agents, and outbound replies
// linked back through inbound_capture_id.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';
import { RunningSmtpServer, startSmtpServer } from '../../api/smtp/server';

jest.setTimeout(300_000);

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'inbound');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('forwarded inbound context', () => {
  let app: TestApp;
  let smtp: RunningSmtpServer;
  let api: ReturnType<typeof client>;
  let member: { member_id: string; key: string };
  let agentKey: string;
  let agentId: string;
  let memberAlias: string;
  let agentAlias: string;
  const items: Record<string, any> = {};

  const intake = async (name: string, recipient: string) => {
    const res = await api('POST', `/v1/intake/email?recipient=${encodeURIComponent(recipient)}`, {
      raw: fixture(name),
      headers: { 'x-intake-secret': app.deps.config.intakeSecret },
    });
    if (res.status !== 202) throw new Error(`intake of ${name} answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.item_id as string;
  };

  const settled = async (id: string, query = 'include=drafting,files,ocr,lineage') => {
    for (let i = 0; i < 400; i++) {
      const res = await api('GET', `/v1/inbound/${id}?${query}`, { key: member.key });
      if (['extracted', 'needs_review', 'failed'].includes(res.body.status)) return res.body;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`item ${id} did not settle`);
  };

  beforeAll(async () => {
    app = await startTestApp();
    smtp = await startSmtpServer(app.deps, { port: 0, host: '127.0.0.1' });
    api = client(app.baseUrl);
    member = await newMember(app.deps, { creditsCents: 50_000 });
    const agent = await newAgentWithKey(app.baseUrl, member.key, {
      scopes: ['inbound.read', 'mailbox.write', 'mail.send', 'agent.read'],
    });
    agentKey = agent.credential.key;
    agentId = agent.agent.id;
    memberAlias = (await api('POST', '/v1/inbound-forwarding-addresses', { key: member.key, json: { label: 'Home' } }))
      .body.forwarding_address.email;
    agentAlias = (
      await api('POST', '/v1/inbound-forwarding-addresses', {
        key: member.key,
        json: { label: 'Agent bills', agent_id: agentId },
      })
    ).body.forwarding_address.email;

    // Sequential: OCR shares the machine's cores with everything else.
    items.bill = await settled(await intake('utility-bill.eml', agentAlias));
    items.followUp = await settled(await intake('utility-bill-followup.eml', agentAlias));
    const info = await nodemailer
      .createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true })
      .sendMail({ envelope: { from: 'jordan@example.test', to: [memberAlias] }, raw: fixture('photo-notice.eml') });
    items.photo = await settled(/[0-9a-f-]{36}$/.exec(info.response)![0]);
    items.scan = await settled(await intake('scanned-letter.eml', memberAlias));
    items.note = await settled(await intake('plain-note.eml', memberAlias));
  });
  afterAll(async () => {
    await smtp?.close();
    await app?.close();
  });

  const sources = (item: any) => new Set(item.extractions.map((e: { source: string }) => e.source));

  it('extracts a PDF bill: text with lineage, category, action, reply contact, deadline and key facts', () => {
    const bill = items.bill;
    expect(bill).toMatchObject({
      object: 'inbound_mail_item',
      status: 'extracted',
      subject: 'Fwd: electric bill',
      from: { name: 'Jordan Example', email: 'jordan@example.test' },
      note_preview: 'Forwarding the power bill that came in the mail today. Jordan',
      attachment_count: 1,
      category: 'bill',
      suggested_action: 'pay',
    });
    for (const s of [
      'email_subject',
      'email_body',
      'pdf_metadata',
      'pdf_text',
      'heuristic_classifier',
      'address_parser',
      'date_extractor',
      'amount_extractor',
      'reference_extractor',
      'thread_matcher',
    ]) {
      expect(sources(bill)).toContain(s);
    }
    const pdfText = bill.extractions.find((e: any) => e.source === 'pdf_text');
    expect(pdfText.value).toContain('Amount due: $123.45');
    expect(pdfText.inbound_mail_file_id).toBe(bill.files[1].id);
    expect(bill.extractions).toContainEqual(
      expect.objectContaining({
        source: 'pdf_metadata',
        field: 'title',
        value: 'Springfield Power & Light statement',
        confidence: 1,
      }),
    );
    const category = bill.extractions.find((e: any) => e.source === 'heuristic_classifier' && e.field === 'category');
    expect(category.confidence).toBeGreaterThan(0.5);
    expect(category.metadata.matched_keywords).toEqual(expect.arrayContaining(['amount due', 'kwh']));

    const dc = bill.draft_context;
    expect(dc).toMatchObject({
      category: 'bill',
      suggested_action: 'pay',
      inbound_capture_id: bill.id,
      postal_mail_thread_id: bill.thread.id,
      deadlines: ['2025-03-15'],
      sender: {
        name: 'Springfield Power & Light',
        email: null,
        address: { line1: 'PO Box 4410', city: 'Springfield', state: 'IL', postal_code: '62705' },
      },
      recipient: {
        name: 'Jordan Example',
        email: agentAlias,
        address: { line1: '742 Evergreen Terrace', postal_code: '62704' },
      },
      reply_contact: {
        name: 'SPL Payment Center',
        line1: '1200 Commerce Drive',
        line2: 'Suite 300',
        city: 'Peoria',
        state: 'IL',
        postal_code: '61602',
        country: 'US',
        source_type: 'pdf_text',
        verification_status: 'verified_format',
        formatted_address: 'SPL Payment Center\n1200 Commerce Drive\nSuite 300\nPeoria, IL 61602',
      },
      source_files: [
        {
          id: bill.files[1].id,
          filename: 'spl-statement-2025-02.pdf',
          content_type: 'application/pdf',
          extraction_status: 'extracted',
        },
      ],
      linked_outbound_mail: [],
    });
    expect(dc.reply_contact.id).toEqual(expect.any(String));
    expect(dc.reply_contact_confidence).toBe(dc.reply_contact.confidence);
    expect(dc.reply_contact_confidence).toBeGreaterThan(0.8);
    expect(dc.key_facts).toEqual(
      expect.arrayContaining([
        { kind: 'amount_due', label: 'amount due', value: '$123.45', amount_cents: 12345 },
        { kind: 'account_number', label: 'Account Number', value: '4410-2231-07' },
      ]),
    );
    expect(dc.summary).toBe(
      'Bill from Springfield Power & Light: $123.45 due, by 2025-03-15, account number 4410-2231-07.',
    );
  });

  it("links a second letter from the same sender into the first letter's postal thread", async () => {
    const { bill, followUp } = items;
    expect(followUp.thread.id).toBe(bill.thread.id);
    const matcher = followUp.extractions.find((e: any) => e.source === 'thread_matcher');
    expect(matcher).toMatchObject({
      value: bill.thread.id,
      metadata: { matched_existing: true, reasons: expect.arrayContaining(['reference_number', 'sender']) },
    });
    expect(followUp.draft_context.deadlines).toEqual(['2025-04-01']);

    const thread = await api('GET', `/v1/postal-threads/${bill.thread.id}?include=events`, { key: member.key });
    expect(thread.status).toBe(200);
    expect(thread.body).toMatchObject({
      object: 'postal_mail_thread',
      title: 'Springfield Power & Light',
      category: 'bill',
      status: 'open',
    });
    expect(thread.body.events.map((e: any) => e.inbound_mail_item_id)).toEqual([bill.id, followUp.id]);

    const inThread = await api('GET', `/v1/inbound?thread_id=${bill.thread.id}`, { key: member.key });
    expect(inThread.body.items.map((i: any) => i.id)).toEqual([followUp.id, bill.id]);
    // Other senders opened threads of their own.
    expect(new Set([items.photo.thread.id, items.scan.thread.id, items.note.thread.id, bill.thread.id]).size).toBe(4);
  });

  it('reads a photographed notice with Tesseract OCR', () => {
    const photo = items.photo;
    expect(photo.context.capture_method).toBe('smtp');
    expect(photo.files[1]).toMatchObject({
      filename: 'IMG_2041.jpg',
      content_type: 'image/jpeg',
      extraction_status: 'extracted',
    });
    expect(photo.ocr).toHaveLength(1);
    expect(photo.ocr[0]).toMatchObject({
      inbound_mail_file_id: photo.files[1].id,
      page_number: 1,
      unreadable: false,
      engine: 'tesseract',
    });
    expect(photo.ocr[0].text).toContain('NOTICE OF SERVICE INTERRUPTION');
    expect(photo.ocr[0].text).toContain('800 East Monroe Street');
    expect(photo.ocr[0].confidence).toBeGreaterThan(0.7);
    expect(photo.category).toBe('government');
    expect(photo.draft_context.deadlines).toEqual(['2025-04-02']);
    expect(photo.draft_context.reply_contact).toMatchObject({
      line1: '800 East Monroe Street',
      city: 'Springfield',
      state: 'IL',
      postal_code: '62701',
      source_type: 'ocr',
    });
  });

  it('OCRs every page of a scanned letter that has no text layer', () => {
    const scan = items.scan;
    const file = scan.files[1];
    expect(file).toMatchObject({
      filename: 'scan_0001.pdf',
      content_type: 'application/pdf',
      extraction_status: 'extracted',
    });
    expect(scan.extractions).toContainEqual(
      expect.objectContaining({ source: 'pdf_text', field: 'pages_without_text', value: '1,2' }),
    );
    expect(scan.ocr.map((p: any) => p.page_number)).toEqual([1, 2]);
    expect(scan.ocr[0].text).toMatch(/small claims/i);
    expect(scan.ocr[1].text).toContain('Sincerely');
    expect(scan).toMatchObject({ category: 'legal_notice', suggested_action: 'review_deadline' });
    expect(scan.draft_context.deadlines).toEqual(['2025-05-01']);
    expect(scan.draft_context.key_facts).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'case_number', value: '2025-SC-0042' })]),
    );
    expect(scan.draft_context.sender.name).toBe('Shelbyville Legal Services LLP');
  });

  it('classifies a note without attachments from its text alone', () => {
    const note = items.note;
    expect(note).toMatchObject({
      status: 'extracted',
      attachment_count: 0,
      category: 'personal',
      suggested_action: 'reply',
    });
    expect(note.files.map((f: any) => f.kind)).toEqual(['raw_email']);
    expect(note.draft_context.sender).toEqual({ name: 'Grandma', email: 'grandma@example.test', address: null });
    expect(note.draft_context.reply_contact).toBeNull();
  });

  it('lists items with filters and the default drafting include, and shapes include options', async () => {
    const list = await api('GET', '/v1/inbound?limit=2', { key: member.key });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toMatchObject({ limit: 2, offset: 0, has_more: true });
    expect(list.body.pagination.total).toBeGreaterThanOrEqual(5);
    expect(list.body.items[0].draft_context).toBeDefined();
    expect(list.body.items[0].extractions).toBeUndefined();
    expect(list.body.items[0].files[0].download_url).toBeUndefined();

    const bills = await api('GET', '/v1/inbound?category=bill&status=extracted&include=files', { key: member.key });
    expect(bills.body.items.map((i: any) => i.id).sort()).toEqual([items.bill.id, items.followUp.id].sort());
    expect(bills.body.items[0].draft_context).toBeUndefined();
    expect(bills.body.items[0].files[0].download_url).toMatch(/\/v1\/inbound\/.+\/files\//);

    const bad = await api('GET', '/v1/inbound?include=everything&limit=500', { key: member.key });
    expect(bad.status).toBe(400);
    expect(bad.body.fields.map((f: any) => f.path).sort()).toEqual(['query.include.0', 'query.limit']);
  });

  it('serves files by authenticated download and by signed URL, with matching SHA-256', async () => {
    const bill = await api('GET', `/v1/inbound/${items.bill.id}?signed_urls=true`, { key: member.key });
    const pdf = bill.body.files[1];
    expect(pdf.signed_url).toMatch(/^http/);
    const signed = Buffer.from(await (await fetch(pdf.signed_url)).arrayBuffer());
    expect(sha256(signed)).toBe(pdf.sha256);
    const download = await fetch(pdf.download_url, { headers: { authorization: `Bearer ${member.key}` } });
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(pdf.sha256);
  });

  it("shows agent keys only their agent's aliases and items, and other members nothing", async () => {
    const mine = await api('GET', '/v1/inbound', { key: agentKey });
    expect(mine.body.items.map((i: any) => i.id).sort()).toEqual([items.bill.id, items.followUp.id].sort());
    expect((await api('GET', `/v1/inbound/${items.note.id}`, { key: agentKey })).status).toBe(404);
    const threads = await api('GET', '/v1/postal-threads', { key: agentKey });
    expect(threads.body.threads.map((t: any) => t.id)).toEqual([items.bill.thread.id]);
    const aliases = await api('GET', '/v1/inbound-forwarding-addresses', { key: agentKey });
    expect(aliases.body.forwarding_addresses.map((a: any) => a.email)).toEqual([agentAlias]);

    const stranger = await newMember(app.deps);
    expect((await api('GET', `/v1/inbound/${items.bill.id}`, { key: stranger.key })).status).toBe(404);
    expect((await api('GET', `/v1/postal-threads/${items.bill.thread.id}`, { key: stranger.key })).status).toBe(404);
    expect(
      (await api('GET', `/v1/inbound/${items.bill.id}/files/${items.bill.files[1].id}`, { key: stranger.key })).status,
    ).toBe(404);
    expect((await api('GET', '/v1/inbound', { key: stranger.key })).body.items).toEqual([]);

    const noScope = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['mail.send'] });
    const refused = await api('GET', '/v1/inbound', { key: noScope.credential.key });
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe('insufficient_scope');
  });

  it('threads a reply by its In-Reply-To and References headers before any subject or sender heuristics', async () => {
    const reply = [
      'From: Uncle Bob <bob@example.test>',
      'To: intake@in.postal.localhost',
      'Subject: Wedding travel plans',
      'Message-ID: <reply-1@example.test>',
      'In-Reply-To: <plain-note@example.test>',
      'References: <unknown-root@example.test> <plain-note@example.test>',
      'Date: Tue, 25 Feb 2025 09:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'We land on Friday at noon; can someone pick us up from the station?',
      '',
    ].join('\r\n');
    const res = await api('POST', `/v1/intake/email?recipient=${encodeURIComponent(memberAlias)}`, {
      raw: reply,
      headers: { 'x-intake-secret': app.deps.config.intakeSecret },
    });
    expect(res.status).toBe(202);
    const item = await settled(res.body.item_id);
    expect(item.thread.id).toBe(items.note.thread.id);
    const matcher = item.extractions.find((e: any) => e.source === 'thread_matcher');
    expect(matcher).toMatchObject({
      confidence: 1,
      metadata: {
        matched_existing: true,
        reasons: ['message_reference'],
        reply_references: ['<plain-note@example.test>', '<unknown-root@example.test>'],
      },
    });
  });

  it('drafts from a real invoice layout and from a scan: key facts, due date, sender; a degraded scan needs review', async () => {
    const invoices = path.join(__dirname, '..', 'fixtures', 'invoices');
    const send = async (filename: string, content: Buffer, contentType: string, messageId: string) => {
      const raw = await new MailComposer({
        from: 'Jordan Example <jordan@example.test>',
        to: 'intake@in.postal.localhost',
        subject: 'Fwd: bill',
        messageId,
        text: 'Forwarding this bill.',
        attachments: [{ filename, content, contentType }],
      })
        .compile()
        .build();
      const res = await api('POST', `/v1/intake/email?recipient=${encodeURIComponent(memberAlias)}`, {
        raw,
        headers: { 'x-intake-secret': app.deps.config.intakeSecret },
      });
      expect(res.status).toBe(202);
      return settled(res.body.item_id);
    };
    const grid = await send(
      'invoice-10234.pdf',
      readFileSync(path.join(invoices, 'invoice-header-grid.pdf')),
      'application/pdf',
      '<grid-invoice@example.test>',
    );
    expect(grid.draft_context).toMatchObject({
      category: 'invoice',
      suggested_action: 'pay',
      deadlines: ['2026-03-03'],
      sender: {
        name: 'Brightline Office Supply Co.',
        address: { line1: '88 Commerce Park Drive', city: 'Columbus', state: 'OH', postal_code: '43215' },
      },
    });
    expect(grid.draft_context.key_facts).toEqual(
      expect.arrayContaining([
        { kind: 'amount_due', label: 'balance due', value: '$1,259.05', amount_cents: 125905 },
        { kind: 'due_date', label: 'due date', value: '2026-03-03' },
        { kind: 'invoice_number', label: 'Invoice #', value: '10234' },
      ]),
    );
    expect(grid.extractions).toContainEqual(
      expect.objectContaining({
        source: 'field_extractor',
        field: 'invoice_number',
        value: '10234',
        metadata: expect.objectContaining({ rule: 'column_below' }),
      }),
    );

    const scan = await send(
      'scan.png',
      readFileSync(path.join(invoices, 'scans', 'utility-bill.png')),
      'image/png',
      '<utility-scan@example.test>',
    );
    expect(scan.ocr[0]).toMatchObject({ status: 'ready', uncertain_spans: expect.any(Array) });
    expect(scan.draft_context.sender.name).toBe('Metro Water & Sewer Authority');
    expect(scan.draft_context.key_facts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'amount_due', amount_cents: 8745 }),
        { kind: 'due_date', label: 'due date', value: '2026-03-20' },
        expect.objectContaining({ kind: 'invoice_number', value: '7781203' }),
      ]),
    );

    const degraded = await send(
      'scan.png',
      readFileSync(path.join(invoices, 'scans', 'utility-bill-degraded.png')),
      'image/png',
      '<utility-degraded@example.test>',
    );
    expect(degraded.status).toBe('needs_review');
    expect(degraded.context.review_reasons).toContain('ocr_low_confidence');
    expect(degraded.ocr[0].status).toBe('needs_review');
    expect(degraded.ocr[0].confidence).toBeLessThan(0.85);
    expect(degraded.ocr[0].uncertain_spans.length).toBeGreaterThan(5);
  });

  it('lets the owner close a thread, and new mail from the same sender reopens it', async () => {
    const threadId = items.photo.thread.id;
    const closed = await api('PATCH', `/v1/postal-threads/${threadId}`, {
      key: member.key,
      json: { status: 'closed' },
    });
    expect(closed.body.status).toBe('closed');
    expect(
      (await api('GET', '/v1/postal-threads?status=closed', { key: member.key })).body.threads.map((t: any) => t.id),
    ).toEqual([threadId]);

    const again = fixture('photo-notice.eml')
      .toString('latin1')
      .replace('<photo-notice@example.test>', '<photo-notice-2@example.test>');
    const res = await api('POST', `/v1/intake/email?recipient=${encodeURIComponent(memberAlias)}`, {
      raw: Buffer.from(again, 'latin1'),
      headers: { 'x-intake-secret': app.deps.config.intakeSecret },
    });
    const second = await settled(res.body.item_id);
    expect(second.thread.id).toBe(threadId);
    const reopened = await api('GET', `/v1/postal-threads/${threadId}`, { key: member.key });
    expect(reopened.body.status).toBe('open');
    expect(new Date(reopened.body.last_event_at).getTime()).toBe(new Date(second.received_at).getTime());
  });

  it('lists outbound mail sent with inbound_capture_id in linked_outbound_mail and in the thread', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc.addPage([612, 792]).drawText('Payment enclosed for account 4410-2231-07.', { x: 72, y: 700, size: 12, font });
    const contact = items.bill.draft_context.reply_contact;
    const form = new FormData();
    const fields: Record<string, string> = {
      recipient_company: contact.name,
      recipient_line1: contact.line1,
      recipient_line2: contact.line2,
      recipient_city: contact.city,
      recipient_state: contact.state,
      recipient_zip: contact.postal_code,
      inbound_capture_id: items.bill.id,
      postal_mail_thread_id: items.bill.draft_context.postal_mail_thread_id,
    };
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('document', new Blob([new Uint8Array(await doc.save())], { type: 'application/pdf' }), 'reply.pdf');
    const sent = await api('POST', '/v1/mail', { key: agentKey, form, headers: { 'x-service-md-version': '1' } });
    expect(sent.status).toBe(201);

    const bill = await api('GET', `/v1/inbound/${items.bill.id}`, { key: agentKey });
    expect(bill.body.draft_context.linked_outbound_mail).toEqual([
      expect.objectContaining({
        id: sent.body.id,
        inbound_capture_id: items.bill.id,
        postal_mail_thread_id: items.bill.thread.id,
        recipient_company: 'SPL Payment Center',
      }),
    ]);
    // The follow-up shares the thread, so the reply is linked there too.
    const followUp = await api('GET', `/v1/inbound/${items.followUp.id}`, { key: agentKey });
    expect(followUp.body.draft_context.linked_outbound_mail.map((o: any) => o.id)).toEqual([sent.body.id]);
    const thread = await api('GET', `/v1/postal-threads/${items.bill.thread.id}?include=events`, { key: agentKey });
    expect(thread.body.events.map((e: any) => e.type)).toEqual([
      'inbound_mail_item',
      'inbound_mail_item',
      'outbound_mail',
    ]);
  });
});
