// Files keep the names their senders gave them, whatever the script: an emailed attachment
// named 中文.txt (RFC 2231 `filename*`) goes through the intake and downloads under that
// name, directly and from its signed URL; a letter uploaded as 账单 März.pdf and a support
// attachment named Ångström 中文.txt are offered under theirs. Every Content-Disposition is
// RFC 6266: the UTF-8 name as `filename*` plus an ASCII `filename` fallback.
import { randomUUID } from 'node:crypto';
import { parse } from 'content-disposition';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { insertMemberKey } from '../../services/accounts/accounts';
import { newAgent } from '../helpers/agents';
import { letterForm, letterPdf } from './mail-helpers';
import { contentDisposition } from '../../domain/shared/downloads';

/** The filename a client reads from a Content-Disposition header (filename* wins, as RFC 6266 says). */
function offeredName(header: string | null): { type: string; filename: string | undefined; ascii: string | undefined } {
  expect(header).not.toBeNull();
  expect(header).toMatch(/^[\x20-\x7e]+$/);
  const { type, parameters } = parse(header!);
  return { type, filename: parameters.filename, ascii: /filename="?([^";]*)/.exec(header!)?.[1] };
}

describe('download file names', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
  });
  afterAll(async () => {
    await app?.close();
  });

  it("an emailed attachment named with filename*=UTF-8''%E4%B8%AD%E6%96%87.txt downloads as 中文.txt", async () => {
    const member = await newMember(app.deps);
    const alias = (await api('POST', '/v1/inbound-forwarding-addresses', { key: member.key, json: { label: 'Home' } }))
      .body.forwarding_address.email;
    const raw = [
      'From: Jordan <jordan@example.test>',
      `To: ${alias}`,
      'Subject: Notice',
      `Message-ID: <${randomUUID()}@example.test>`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The notice is attached.',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      "Content-Disposition: attachment; filename*=UTF-8''%E4%B8%AD%E6%96%87.txt",
      '',
      '中文 notice text',
      '--b1--',
      '',
    ].join('\r\n');
    const captured = await api('POST', '/v1/intake/email', {
      raw,
      headers: { 'content-type': 'message/rfc822', 'x-intake-secret': app.deps.config.intakeSecret },
    });
    expect(captured.status).toBe(202);

    const item = await api('GET', `/v1/inbound/${captured.body.item_id}?include=files&signed_urls=true`, {
      key: member.key,
    });
    const file = item.body.files.find((f: { kind: string }) => f.kind === 'attachment');
    expect(file.filename).toBe('中文.txt');

    const download = await fetch(file.download_url, { headers: { authorization: `Bearer ${member.key}` } });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('中文 notice text');
    expect(offeredName(download.headers.get('content-disposition'))).toEqual({
      type: 'attachment',
      filename: '中文.txt',
      ascii: '__.txt',
    });

    const signed = await fetch(file.signed_url);
    expect(signed.status).toBe(200);
    expect(offeredName(signed.headers.get('content-disposition'))).toMatchObject({
      type: 'attachment',
      filename: '中文.txt',
    });
  });

  it('a letter uploaded as 账单 März.pdf is shown inline under that name (document redirect and pdf_url)', async () => {
    const member = await newMember(app.deps);
    await newAgent(app.baseUrl, member.key);
    const testKey = (await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' }))
      .key;
    const sent = await api('POST', '/v1/mail', {
      key: testKey,
      form: letterForm(await letterPdf(), {}, '账单 März.pdf'),
    });
    expect(sent.status).toBe(201);

    const redirect = await fetch(`${app.baseUrl}/v1/mail/${sent.body.id}/document`, {
      headers: { authorization: `Bearer ${testKey}` },
      redirect: 'manual',
    });
    expect(redirect.status).toBe(302);
    for (const url of [redirect.headers.get('location')!, sent.body.pdf_url]) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(offeredName(res.headers.get('content-disposition'))).toEqual({
        type: 'inline',
        filename: '账单 März.pdf',
        ascii: '__ Marz.pdf',
      });
    }
  });

  it('a support attachment named Ångström 中文.txt is offered under that name', async () => {
    const member = await newMember(app.deps);
    const opened = await api('POST', '/v1/support/messages', {
      key: member.key,
      json: {
        category: 'support',
        body: 'Attached.',
        attachments: [
          {
            filename: 'Ångström 中文.txt',
            content_type: 'text/plain',
            content_base64: Buffer.from('hi').toString('base64'),
          },
        ],
      },
    });
    expect(opened.status).toBe(201);
    const read = await api('GET', `/v1/support/conversations/${opened.body.message.conversation_id}/messages`, {
      key: member.key,
    });
    const res = await fetch(read.body.messages[0].attachments[0].url);
    expect(res.status).toBe(200);
    expect(offeredName(res.headers.get('content-disposition'))).toEqual({
      type: 'attachment',
      filename: 'Ångström 中文.txt',
      ascii: 'Angstrom __.txt',
    });
  });

  it('offers the last path segment without control characters, or the fallback name', () => {
    expect(parse(contentDisposition('../../etc/passwd', { fallbackName: 'attachment' })).parameters.filename).toBe(
      'passwd',
    );
    expect(
      parse(contentDisposition('C:\\Users\\x\\bill.pdf', { fallbackName: 'attachment' })).parameters.filename,
    ).toBe('bill.pdf');
    expect(parse(contentDisposition('a\r\nb\u202E.txt', { fallbackName: 'attachment' })).parameters.filename).toBe(
      'ab.txt',
    );
    expect(parse(contentDisposition('\u200B', { fallbackName: 'attachment' })).parameters.filename).toBe('attachment');
    expect(contentDisposition(null, { type: 'inline', fallbackName: 'document.pdf' })).toBe(
      'inline; filename=document.pdf',
    );
  });
});
