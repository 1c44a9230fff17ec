// Email intake over SMTP and the HTTP hook: aliases, stored objects and their hashes,
// and every refusal (unknown, paused or archived alias, oversized or malformed message,
// a program named .pdf, a failing object store) leaving nothing half-stored.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import JSZip from 'jszip';
import { PNG } from 'pngjs';
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';
import { RunningSmtpServer, startSmtpServer } from '../../api/smtp/server';
import { errors } from '../../domain/shared/errors';
import { INBOUND_EXTRACTION_WORKFLOW, inboundExtractionWorkflowId } from '../../workflows/inbound-email/contracts';

jest.setTimeout(180_000);

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'inbound');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const LIMIT = 120_000;

describe('forwarded inbound intake', () => {
  let app: TestApp;
  let smtp: RunningSmtpServer;
  let api: ReturnType<typeof client>;
  let member: { member_id: string; key: string };
  let alias: { id: string; email: string };
  let putKeys: string[];

  const intake = (
    raw: Buffer | string,
    recipient: string | null,
    secret: string | null = app.deps.config.intakeSecret,
  ) =>
    api('POST', `/v1/intake/email${recipient ? `?recipient=${encodeURIComponent(recipient)}` : ''}`, {
      raw,
      headers: { 'content-type': 'message/rfc822', ...(secret ? { 'x-intake-secret': secret } : {}) },
    });

  const sendSmtp = (raw: Buffer, to: string[]) =>
    nodemailer
      .createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true })
      .sendMail({ envelope: { from: 'jordan@example.test', to }, raw });

  const itemCount = async () =>
    (
      await app.deps.db.query(`SELECT count(*)::int AS n FROM inbound_mail_items WHERE member_id = $1`, [
        member.member_id,
      ])
    )[0].n;

  const waitSettled = async (id: string) => {
    for (let i = 0; i < 300; i++) {
      const res = await api('GET', `/v1/inbound/${id}?include=files,lineage,drafting`, { key: member.key });
      if (['extracted', 'needs_review', 'failed'].includes(res.body.status)) return res.body;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`item ${id} did not settle`);
  };

  beforeAll(async () => {
    app = await startTestApp({ env: { INBOUND_MAX_MESSAGE_BYTES: String(LIMIT) } });
    smtp = await startSmtpServer(app.deps, { port: 0, host: '127.0.0.1' });
    api = client(app.baseUrl);
    member = await newMember(app.deps);
    const res = await api('POST', '/v1/inbound-forwarding-addresses', {
      key: member.key,
      json: { label: 'Household mail' },
    });
    expect(res.status).toBe(201);
    alias = res.body.forwarding_address;
    // Records every object key written, to prove refusals write nothing (or clean up).
    const put = app.deps.storage.put.bind(app.deps.storage);
    app.deps.storage.put = async (key, body, type) => {
      putKeys.push(key);
      return put(key, body, type);
    };
  });
  beforeEach(() => {
    putKeys = [];
  });
  afterAll(async () => {
    await smtp?.close();
    await app?.close();
  });

  describe('aliases', () => {
    it('creates a random alias on the intake domain with the spec fields', () => {
      expect(alias).toMatchObject({
        member_id: member.member_id,
        agent_id: null,
        label: 'Household mail',
        domain: 'in.postal.localhost',
        alias_type: 'random',
        requested_alias_local_part: null,
        source_type: 'email_forward',
        provider: null,
        handled_by: 'member',
        capture_method: 'any',
        automation_level: 'medium',
        approval_mode: 'always_require',
        status: 'active',
        last_received_at: null,
        metadata: {},
      });
      expect(alias.email).toBe(
        `${(alias as unknown as { alias_local_part: string }).alias_local_part}@in.postal.localhost`,
      );
      expect((alias as unknown as { alias_local_part: string }).alias_local_part).toMatch(/^[a-z][a-z2-7]{15}$/);
    });

    it('creates vanity aliases, refuses bad or taken local parts, and lists them', async () => {
      const vanity = await api('POST', '/v1/inbound-forwarding-addresses', {
        key: member.key,
        json: {
          alias_type: 'vanity',
          requested_alias_local_part: 'Example-Bills',
          label: 'Bills',
          automation_level: 'low',
          approval_mode: 'require_for_sensitive',
          metadata: { room: 'kitchen' },
        },
      });
      expect(vanity.status).toBe(201);
      expect(vanity.body.forwarding_address).toMatchObject({
        alias_local_part: 'example-bills',
        requested_alias_local_part: 'Example-Bills',
        email: 'example-bills@in.postal.localhost',
        alias_type: 'vanity',
        metadata: { room: 'kitchen' },
      });

      const taken = await api('POST', '/v1/inbound-forwarding-addresses', {
        key: member.key,
        json: { alias_type: 'vanity', requested_alias_local_part: 'example-bills' },
      });
      expect(taken.status).toBe(409);
      expect(taken.body.code).toBe('ALIAS_TAKEN');

      const bad = await api('POST', '/v1/inbound-forwarding-addresses', {
        key: member.key,
        json: { alias_type: 'vanity', requested_alias_local_part: 'postmaster' },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.fields).toEqual([{ path: 'requested_alias_local_part', message: 'is reserved' }]);

      const missing = await api('POST', '/v1/inbound-forwarding-addresses', {
        key: member.key,
        json: { alias_type: 'vanity' },
      });
      expect(missing.body.fields[0].path).toBe('requested_alias_local_part');

      const unknownField = await api('POST', '/v1/inbound-forwarding-addresses', {
        key: member.key,
        json: { street: '1 Main St' },
      });
      expect(unknownField.status).toBe(400);

      const list = await api('GET', '/v1/inbound-forwarding-addresses?status=active', { key: member.key });
      expect(list.status).toBe(200);
      expect(list.body.forwarding_addresses.map((a: { id: string }) => a.id)).toEqual(
        expect.arrayContaining([alias.id, vanity.body.forwarding_address.id]),
      );
      expect(list.body.pagination).toMatchObject({ limit: 20, offset: 0 });
    });

    it('lets an agent key with mailbox.write create aliases for its own agent only, and others none', async () => {
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key, {
        scopes: ['inbound.read', 'mailbox.write'],
      });
      const created = await api('POST', '/v1/inbound-forwarding-addresses', {
        key: credential.key,
        headers: { 'x-service-md-version': '1' },
        json: { label: 'Agent intake', agent_id: null },
      });
      expect(created.status).toBe(201);
      expect(created.body.forwarding_address).toMatchObject({ agent_id: agent.id, handled_by: 'agent' });
      const noVersion = await api('POST', '/v1/inbound-forwarding-addresses', { key: credential.key, json: {} });
      expect(noVersion.status).toBe(400);

      const reader = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['inbound.read'] });
      const refused = await api('POST', '/v1/inbound-forwarding-addresses', {
        key: reader.credential.key,
        headers: { 'x-service-md-version': '1' },
        json: {},
      });
      expect(refused.status).toBe(403);
      expect(refused.body.reason).toBe('insufficient_scope');
      // The other agent cannot see or change the first agent's alias.
      const hidden = await api('GET', `/v1/inbound-forwarding-addresses/${created.body.forwarding_address.id}`, {
        key: reader.credential.key,
      });
      expect(hidden.status).toBe(404);
      const reassign = await api('PATCH', `/v1/inbound-forwarding-addresses/${created.body.forwarding_address.id}`, {
        key: credential.key,
        headers: { 'x-service-md-version': '1' },
        json: { agent_id: reader.agent.id },
      });
      expect(reassign.status).toBe(403);
    });
  });

  describe('SMTP receiver', () => {
    it('accepts a bill for an alias, stores the raw email and the PDF with matching SHA-256, and extracts it', async () => {
      const raw = fixture('utility-bill.eml');
      const before = await itemCount();
      const info = await sendSmtp(raw, [alias.email.toUpperCase()]);
      expect(info.response).toMatch(/^250 2\.0\.0 Accepted as [0-9a-f-]{36}$/);
      const itemId = /[0-9a-f-]{36}$/.exec(info.response)![0];
      expect(await itemCount()).toBe(before + 1);

      const files = await app.deps.db.query(
        `SELECT kind, filename, size_bytes, sha256, storage_key FROM inbound_mail_files WHERE inbound_mail_item_id = $1 ORDER BY position`,
        [itemId],
      );
      expect(files.map((f: { storage_key: string }) => f.storage_key)).toEqual([
        `inbound/${itemId}/raw.eml`,
        expect.stringMatching(new RegExp(`^inbound/${itemId}/files/[0-9a-f-]{36}-spl-statement-2025-02\\.pdf$`)),
      ]);
      const pdf = (await simpleParser(raw)).attachments[0].content;
      for (const f of files) {
        const stored = await app.deps.storage.get(f.storage_key);
        expect(sha256(stored)).toBe(f.sha256);
        expect(stored.length).toBe(Number(f.size_bytes));
      }
      expect(files[1].sha256).toBe(sha256(pdf));
      expect(files[0].sha256).toBe(sha256(raw));

      const item = await waitSettled(itemId);
      expect(item).toMatchObject({
        status: 'extracted',
        category: 'bill',
        suggested_action: 'pay',
        attachment_count: 1,
        context: { capture_method: 'smtp' },
      });
      expect(item.files.map((f: { extraction_status: string }) => f.extraction_status)).toEqual([
        'extracted',
        'extracted',
      ]);
      const aliasNow = await api('GET', `/v1/inbound-forwarding-addresses/${alias.id}`, { key: member.key });
      expect(aliasNow.body.forwarding_address.last_received_at).not.toBeNull();
    });

    it('refuses unknown aliases with 550 5.1.1, paused with 450 and archived with 550 5.2.1', async () => {
      await expect(sendSmtp(fixture('plain-note.eml'), ['nobody-here@in.postal.localhost'])).rejects.toMatchObject({
        responseCode: 550,
        response: expect.stringContaining('5.1.1'),
      });
      await expect(sendSmtp(fixture('plain-note.eml'), ['someone@other-domain.test'])).rejects.toMatchObject({
        responseCode: 550,
      });

      const created = await api('POST', '/v1/inbound-forwarding-addresses', {
        key: member.key,
        json: { label: 'to pause' },
      });
      const target = created.body.forwarding_address;
      const paused = await api('PATCH', `/v1/inbound-forwarding-addresses/${target.id}`, {
        key: member.key,
        json: { status: 'paused' },
      });
      expect(paused.body.forwarding_address.status).toBe('paused');
      await expect(sendSmtp(fixture('plain-note.eml'), [target.email])).rejects.toMatchObject({
        responseCode: 450,
        response: expect.stringMatching(/4\.2\.1 .*paused/),
      });
      // The intake webhook refuses the same way: 409 ALIAS_PAUSED (retryable later), then 410 once archived.
      const pausedHook = await intake(fixture('plain-note.eml'), target.email);
      expect({ status: pausedHook.status, code: pausedHook.body.code }).toEqual({ status: 409, code: 'ALIAS_PAUSED' });

      await api('PATCH', `/v1/inbound-forwarding-addresses/${target.id}`, {
        key: member.key,
        json: { status: 'archived' },
      });
      await expect(sendSmtp(fixture('plain-note.eml'), [target.email])).rejects.toMatchObject({
        responseCode: 550,
        response: expect.stringMatching(/5\.2\.1 .*archived/),
      });
      expect((await intake(fixture('plain-note.eml'), target.email)).status).toBe(410);
      const reactivate = await api('PATCH', `/v1/inbound-forwarding-addresses/${target.id}`, {
        key: member.key,
        json: { status: 'active' },
      });
      expect(reactivate.status).toBe(409);
      expect(reactivate.body.code).toBe('ALIAS_ARCHIVED');
      expect(putKeys).toEqual([]);
    });

    it('refuses an oversized message with 552 and stores nothing', async () => {
      const before = await itemCount();
      const raw = fixture('scanned-letter.eml');
      expect(raw.length).toBeGreaterThan(LIMIT);
      await expect(sendSmtp(raw, [alias.email])).rejects.toMatchObject({ responseCode: 552 });
      expect(await itemCount()).toBe(before);
      expect(putKeys).toEqual([]);
    });

    it('refuses a program named .pdf with 554 5.7.1 and stores nothing', async () => {
      const before = await itemCount();
      await expect(sendSmtp(fixture('program-named-pdf.eml'), [alias.email])).rejects.toMatchObject({
        responseCode: 554,
        response: expect.stringContaining('5.7.1'),
      });
      expect(await itemCount()).toBe(before);
      expect(putKeys).toEqual([]);
    });
  });

  describe('HTTP intake', () => {
    it('needs the intake secret', async () => {
      const missing = await intake(fixture('plain-note.eml'), alias.email, null);
      expect(missing.status).toBe(401);
      expect(missing.body.reason).toBe('intake_secret_missing');
      const wrong = await intake(fixture('plain-note.eml'), alias.email, 'not-the-secret');
      expect(wrong.status).toBe(401);
      expect(wrong.body.reason).toBe('intake_secret_invalid');
      expect(putKeys).toEqual([]);
    });

    it('refuses unknown aliases (404), malformed MIME (400) and oversized bodies (413) without storing anything', async () => {
      const before = await itemCount();
      const unknown = await intake(fixture('plain-note.eml'), 'nobody-here@in.postal.localhost');
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('ALIAS_NOT_FOUND');
      // The fixture's own To is the reserved intake@ placeholder, which is never an alias.
      const fromHeaders = await intake(fixture('plain-note.eml'), null);
      expect(fromHeaders.status).toBe(404);

      for (const body of ['{"to":"x","text":"hello"}', '', 'Subject: no sender\r\n\r\nbody']) {
        const malformed = await intake(body, alias.email);
        expect(malformed.status).toBe(400);
        expect(malformed.body).toMatchObject({ code: 'MALFORMED_MESSAGE', retryable: false });
      }
      const tooLarge = await intake(fixture('scanned-letter.eml'), alias.email);
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.body.code).toBe('MESSAGE_TOO_LARGE');
      expect(await itemCount()).toBe(before);
      expect(putKeys).toEqual([]);
    });

    it('refuses a program named .pdf with 422 before storing any part of the message', async () => {
      const before = await itemCount();
      const res = await intake(fixture('program-named-pdf.eml'), alias.email);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'ATTACHMENT_REFUSED', error: expect.stringContaining('invoice.pdf') });
      expect(await itemCount()).toBe(before);
      expect(putKeys).toEqual([]);
    });

    it('removes what it wrote and records nothing when the object store fails mid-message', async () => {
      const before = await itemCount();
      const put = app.deps.storage.put;
      let calls = 0;
      app.deps.storage.put = async (key, body, type) => {
        calls += 1;
        if (calls === 2) {
          putKeys.push(key);
          throw errors.unavailable('STORAGE_UNAVAILABLE', 'injected failure');
        }
        return put(key, body, type);
      };
      try {
        const res = await intake(fixture('utility-bill-followup.eml'), alias.email);
        expect(res.status).toBe(503);
        expect(res.body.retryable).toBe(true);
      } finally {
        app.deps.storage.put = put;
      }
      expect(putKeys).toHaveLength(2);
      await expect(app.deps.storage.get(putKeys[0])).rejects.toMatchObject({ status: 503 });
      expect(await itemCount()).toBe(before);
    });

    it('accepts a PNG named .pdf under its real type, flags it, and reads it with OCR', async () => {
      const res = await intake(fixture('png-named-pdf.eml'), alias.email);
      expect(res.status).toBe(202);
      const item = await waitSettled(res.body.item_id);
      const file = item.files.find((f: { kind: string }) => f.kind === 'attachment');
      expect(file).toMatchObject({
        filename: 'receipt.pdf',
        content_type: 'image/png',
        extraction_status: 'extracted',
      });
      expect(item.status).toBe('needs_review');
      expect(item.context.review_reasons).toContain('attachment_content_type_mismatch');
      expect(item.context.attachment_flags).toEqual([
        {
          inbound_mail_file_id: file.id,
          declared_content_type: 'application/pdf',
          detected_content_type: 'image/png',
          reason: 'content_type_mismatch',
        },
      ]);
      const ocr = item.extractions.filter((e: { source: string }) => e.source === 'ocr');
      expect(ocr[0].value).toMatch(/RECEIPT/);
      expect(item.extractions).toContainEqual(
        expect.objectContaining({ source: 'content_sniffer', field: 'content_type_mismatch', value: 'image/png' }),
      );
    });

    it('extracts the text of a DOCX attachment', async () => {
      const zip = new JSZip();
      zip.file(
        '[Content_Types].xml',
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
      );
      zip.file(
        'word/document.xml',
        '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>' +
          '<w:p><w:r><w:t>Invoice number INV-2291</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">Total due: </w:t></w:r><w:r><w:t>$310.00 &amp; net 30</w:t></w:r></w:p>' +
          '</w:body></w:document>',
      );
      const docx = await zip.generateAsync({ type: 'nodebuffer' });
      const raw = await new MailComposer({
        from: 'jordan@example.test',
        to: alias.email,
        subject: 'invoice from the plumber',
        messageId: `<${randomUUID()}@example.test>`,
        text: 'see attached',
        attachments: [{ filename: 'invoice.docx', content: docx }],
      })
        .compile()
        .build();
      const res = await intake(raw, null);
      expect(res.status).toBe(202);
      const item = await waitSettled(res.body.item_id);
      expect(item.files[1]).toMatchObject({
        filename: 'invoice.docx',
        content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        extraction_status: 'extracted',
      });
      expect(item.extractions).toContainEqual(
        expect.objectContaining({
          source: 'docx_text',
          field: 'text',
          value: 'Invoice number INV-2291\nTotal due: $310.00 & net 30',
        }),
      );
      expect(item).toMatchObject({ category: 'invoice', suggested_action: 'pay' });
    });

    it('sends an item whose image has no readable text to review', async () => {
      const png = new PNG({ width: 400, height: 300 });
      png.data.fill(255);
      const raw = await new MailComposer({
        from: 'jordan@example.test',
        to: alias.email,
        subject: 'photo',
        messageId: `<${randomUUID()}@example.test>`,
        text: '',
        attachments: [{ filename: 'blank.png', content: PNG.sync.write(png) }],
      })
        .compile()
        .build();
      const res = await intake(raw, alias.email);
      const item = await waitSettled(res.body.item_id);
      expect(item.status).toBe('needs_review');
      expect(item.files[1].extraction_status).toBe('failed');
      expect(item.context.review_reasons).toEqual(expect.arrayContaining(['ocr_unreadable', 'file_extraction_failed']));
      expect(item.extractions).toContainEqual(
        expect.objectContaining({ source: 'ocr', metadata: expect.objectContaining({ unreadable: true }) }),
      );
    });

    it('a workflow whose intake never committed removes the objects it was given', async () => {
      const itemId = randomUUID();
      const keys = [`inbound/${itemId}/raw.eml`, `inbound/${itemId}/files/x-a.pdf`];
      for (const key of keys) await app.deps.storage.put(key, 'orphan', 'text/plain');
      const handle = await app.deps.temporal.workflow.start(INBOUND_EXTRACTION_WORKFLOW, {
        taskQueue: app.deps.config.taskQueue,
        workflowId: inboundExtractionWorkflowId(itemId),
        args: [
          {
            itemId,
            memberId: member.member_id,
            agentId: null,
            testMode: false,
            storageKeys: keys,
            commitWait: { attempts: 3, initialIntervalMs: 50, maxIntervalMs: 100 },
          },
        ],
      });
      expect(await handle.result()).toEqual({ status: 'abandoned' });
      for (const key of keys) await expect(app.deps.storage.get(key)).rejects.toMatchObject({ status: 503 });
    });

    it('decodes an ISO-8859-1 email and answers a repeated Message-ID with the first item', async () => {
      const first = await intake(fixture('latin1-letter.eml'), alias.email);
      expect(first.status).toBe(202);
      expect(first.body).toMatchObject({ duplicate: false, attachment_count: 0, status: 'captured' });
      const again = await intake(fixture('latin1-letter.eml'), alias.email);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ item_id: first.body.item_id, duplicate: true });
      const item = await waitSettled(first.body.item_id);
      expect(item.subject).toBe('Réunion de famille à Noël');
      expect(item.from).toEqual({ name: 'José Müller', email: 'jose@example.test' });
      expect(item.note_preview).toContain('Chère Jordan, La réunion de famille aura lieu au Café Müller à Noël.');
      expect(item.context.capture_method).toBe('http');
    });
  });
});
