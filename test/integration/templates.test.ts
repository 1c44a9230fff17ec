// Merge templates against the real stack: CRUD and versions, the preview rendered by the
// letter renderer (Chromium), letters sent from a template and priced by their rendered
// pages, a missing variable refused with nothing stored or charged, and who may do what
// (member keys manage, agent keys with mail.send read and use, another member sees 404).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { useTestApp } from '../helpers/app';
import { fieldPaths } from '../helpers/http';
import { testKeyFor } from './batch-helpers';
import {
  api,
  balance,
  letterPdf,
  letterForm,
  mailCount,
  newSender,
  RECIPIENT,
  Sender,
  sendLetter,
} from './mail-helpers';

const work = mkdtempSync(path.join(tmpdir(), 'templates-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function pdfFacts(pdf: Buffer): { pages: number; text: string } {
  const file = path.join(work, `f-${Date.now()}-${Math.random().toString(16).slice(2)}.pdf`);
  writeFileSync(file, pdf);
  const info = execFileSync('pdfinfo', [file]).toString();
  const text = execFileSync('pdftotext', ['-layout', file, '-']).toString();
  return { pages: Number(/Pages:\s+(\d+)/.exec(info)![1]), text };
}

const LETTER = `<!DOCTYPE html><html><head><style>.next{break-before:page}</style></head><body>
<h1>Dear {{name}},</h1><p>Your balance is {{amount}}.</p>{{#second_page}}<p class="next">Page two for {{name}}.</p>{{/second_page}}
</body></html>`;

function templateForm(fields: Record<string, string | number | boolean>): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries({ ...RECIPIENT, ...fields })) form.append(k, String(v));
  return form;
}

async function preview(baseUrl: string, key: string, id: string, body: unknown) {
  const res = await fetch(`${baseUrl}/v1/templates/${id}/preview`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('merge templates', () => {
  const { app } = useTestApp({ worker: false });
  let sender: Sender;
  let other: Sender;
  beforeAll(async () => {
    sender = await newSender(app, { creditsCents: 100_000 });
    other = await newSender(app, { creditsCents: 0 });
  });
  const call = (...args: Parameters<ReturnType<typeof api>>) => api(app)(...args);

  it('creates, lists, reads, versions and deletes a template; unescaped tags are refused', async () => {
    const created = await call('POST', '/v1/templates', {
      key: sender.memberKey,
      json: { name: 'Balance letter', description: 'monthly', html: LETTER },
    });
    expect(created.status).toBe(201);
    const t = created.body.template;
    expect(t).toMatchObject({ name: 'Balance letter', version: 1, format: 'html', markdown: null });
    expect(t.id).toMatch(/^tmpl_[a-f0-9]{24}$/);
    expect(t.merge_variables).toEqual(['amount', 'name', 'second_page']);

    for (const [field, text] of [
      ['html', '<p>{{{name}}}</p>'],
      ['html', '<p>{{&name}}</p>'],
      ['markdown', '# Hi {{{name}}}'],
      ['html', '<p>{{>footer}}</p>'],
      ['html', '<p>{{#open}}never closed</p>'],
    ]) {
      const refused = await call('POST', '/v1/templates', {
        key: sender.memberKey,
        json: { name: 'x', [field]: text },
      });
      expect(refused.status).toBe(400);
      expect(fieldPaths(refused.body)).toEqual([field]);
    }
    const both = await call('POST', '/v1/templates', {
      key: sender.memberKey,
      json: { name: 'x', html: '<p>a</p>', markdown: 'a' },
    });
    expect(both.status).toBe(400);

    const list = await call('GET', '/v1/templates?limit=1', { key: sender.key });
    expect(list.status).toBe(200);
    expect(list.body.templates.map((x: { id: string }) => x.id)).toEqual([t.id]);
    expect(list.body.pagination).toMatchObject({ limit: 1, offset: 0 });

    const v2 = await call('PATCH', `/v1/templates/${t.id}`, {
      key: sender.memberKey,
      json: { markdown: '# Hello {{name}}\n\nNew text, *{{amount}}*.' },
    });
    expect(v2.status).toBe(200);
    expect(v2.body.template).toMatchObject({
      version: 2,
      format: 'markdown',
      html: null,
      merge_variables: ['amount', 'name'],
    });
    const renamed = await call('PATCH', `/v1/templates/${t.id}`, { key: sender.memberKey, json: { name: 'Renamed' } });
    expect(renamed.body.template).toMatchObject({ version: 2, name: 'Renamed' });

    const read = await call('GET', `/v1/templates/${t.id}`, { key: sender.key });
    expect(read.status).toBe(200);
    expect(read.body.versions).toEqual([1, 2]);
    const old = await call('GET', `/v1/templates/${t.id}?version=1`, { key: sender.key });
    expect(old.body.template).toMatchObject({ version: 1, html: LETTER });
    const missingVersion = await call('GET', `/v1/templates/${t.id}?version=9`, { key: sender.key });
    expect(missingVersion.status).toBe(404);

    const deleted = await call('DELETE', `/v1/templates/${t.id}`, { key: sender.memberKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: t.id, deleted: true });
    expect((await call('GET', `/v1/templates/${t.id}`, { key: sender.memberKey })).status).toBe(404);
    expect((await call('DELETE', `/v1/templates/${t.id}`, { key: sender.memberKey })).status).toBe(404);
    const sent = await sendLetter(app, sender, templateForm({ template_id: t.id, merge_variables: '{}' }));
    expect(sent.status).toBe(400);
    expect(fieldPaths(sent.body)).toEqual(['template_id']);
  });

  it('previews a merge as a PDF from the letter renderer, escaping every value', async () => {
    const created = await call('POST', '/v1/templates', { key: sender.memberKey, json: { name: 'p', html: LETTER } });
    const id = created.body.template.id;
    const { res, bytes } = await preview(app.baseUrl, sender.key, id, {
      merge_variables: { name: '<b>Ana</b> & Co', amount: '$12.50', second_page: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('x-page-count')).toBe('2');
    const facts = pdfFacts(bytes);
    expect(facts.pages).toBe(2);
    expect(facts.text).toContain('Dear <b>Ana</b> & Co,');
    expect(facts.text).toContain('Page two for <b>Ana</b> & Co.');

    const missing = await call('POST', `/v1/templates/${id}/preview`, {
      key: sender.key,
      json: { merge_variables: { amount: 1 } },
    });
    expect(missing.status).toBe(400);
    expect(fieldPaths(missing.body)).toEqual(['merge_variables.name', 'merge_variables.second_page']);
    const badVersion = await call('POST', `/v1/templates/${id}/preview`, {
      key: sender.key,
      json: { merge_variables: {}, version: 5 },
    });
    expect(badVersion.status).toBe(400);
    expect(fieldPaths(badVersion.body)).toEqual(['version']);
  });

  it('sends a letter merged from a template, priced by its rendered pages and keeping its version', async () => {
    const created = await call('POST', '/v1/templates', { key: sender.memberKey, json: { name: 's', html: LETTER } });
    const id = created.body.template.id;
    const vars = (n: string) => JSON.stringify({ name: n, amount: '$5', second_page: true });
    const dry = await sendLetter(
      app,
      sender,
      templateForm({ template_id: id, merge_variables: vars('Dry'), dry_run: true }),
    );
    expect(dry.status).toBe(200);
    expect(dry.body.page_count).toBe(2);
    const ref = await sendLetter(app, sender, letterForm(await letterPdf(2), { dry_run: true }));
    expect(dry.body.cost_cents).toBe(ref.body.cost_cents);
    expect(pdfFacts(Buffer.from(await (await fetch(dry.body.proof_url)).arrayBuffer())).text).toContain('Dear Dry,');

    // A new version does not change what an earlier piece used.
    const before = await balance(app, sender.memberId);
    const sent = await sendLetter(app, sender, templateForm({ template_id: id, merge_variables: vars('Rivera') }));
    expect(sent.status).toBe(201);
    expect(sent.body.cost_cents).toBe(dry.body.cost_cents);
    expect(sent.body.human_review.document).toMatchObject({
      page_count: 2,
      page_count_source: 'html_layout',
      source: { type: 'html' },
      template: { id, version: 1 },
    });
    expect(await balance(app, sender.memberId)).toBe(before - sent.body.cost_cents);
    await call('PATCH', `/v1/templates/${id}`, { key: sender.memberKey, json: { html: '<p>Hi {{name}}</p>' } });
    const pinned = await sendLetter(
      app,
      sender,
      templateForm({ template_id: id, template_version: 1, merge_variables: vars('Pinned'), dry_run: true }),
    );
    expect(pinned.body.page_count).toBe(2);
    const current = await sendLetter(
      app,
      sender,
      templateForm({ template_id: id, merge_variables: JSON.stringify({ name: 'New' }), dry_run: true }),
    );
    expect(current.body.page_count).toBe(1);
    const read = await call('GET', `/v1/mail/${sent.body.id}`, { key: sender.key });
    expect(read.body.human_review.document.template).toEqual({ id, version: 1 });
  });

  it('a missing variable is a 400 listing the names, with nothing stored or charged', async () => {
    const created = await call('POST', '/v1/templates', { key: sender.memberKey, json: { name: 'm', html: LETTER } });
    const id = created.body.template.id;
    const before = { balance: await balance(app, sender.memberId), pieces: await mailCount(app, sender.memberId) };
    const refused = await sendLetter(
      app,
      sender,
      templateForm({ template_id: id, merge_variables: JSON.stringify({ amount: '$1' }) }),
    );
    expect(refused.status).toBe(400);
    expect(fieldPaths(refused.body)).toEqual(['merge_variables.name', 'merge_variables.second_page']);
    expect(refused.body.error).toContain('name, second_page');
    expect(await balance(app, sender.memberId)).toBe(before.balance);
    expect(await mailCount(app, sender.memberId)).toBe(before.pieces);

    const both = templateForm({ template_id: id, merge_variables: '{}' });
    both.append('document', new Blob([new Uint8Array(await letterPdf(1))], { type: 'application/pdf' }), 'a.pdf');
    const conflict = await sendLetter(app, sender, both);
    expect(conflict.status).toBe(400);
    expect(fieldPaths(conflict.body)).toEqual(['template_id']);
    const stray = await sendLetter(app, sender, letterForm(await letterPdf(1), { merge_variables: '{}' }));
    expect(stray.status).toBe(400);
    expect(fieldPaths(stray.body)).toEqual(['merge_variables']);
  });

  it("a test key sends a sandbox template letter through POST /v1/test/mail; live templates are not the sandbox's", async () => {
    const tester = await newSender(app, { environment: 'test' });
    const memberTestKey = await testKeyFor(app.deps, tester.memberId);
    const created = await call('POST', '/v1/templates', {
      key: memberTestKey,
      json: { name: 't', markdown: '# Hi {{name}}' },
    });
    const id = created.body.template.id;
    const live = await call('POST', '/v1/templates', {
      key: tester.memberKey,
      json: { name: 'l', html: '<p>{{name}}</p>' },
    });
    expect((await call('GET', `/v1/templates/${live.body.template.id}`, { key: tester.key })).status).toBe(404);
    expect((await call('GET', `/v1/templates/${id}`, { key: tester.memberKey })).status).toBe(404);
    expect(
      (await call('GET', '/v1/templates', { key: tester.key })).body.templates.map((t: { id: string }) => t.id),
    ).toEqual([id]);
    const res = await call('POST', '/v1/test/mail', {
      key: tester.key,
      headers: tester.headers,
      json: { ...RECIPIENT, template_id: id, merge_variables: { name: 'Test' } },
    });
    expect(res.status).toBe(201);
    expect(res.body.human_review.document).toMatchObject({ page_count: 1, template: { id, version: 1 } });
    const missing = await call('POST', '/v1/test/mail', {
      key: tester.key,
      headers: tester.headers,
      json: { ...RECIPIENT, template_id: id },
    });
    expect(missing.status).toBe(400);
    expect(fieldPaths(missing.body)).toEqual(['merge_variables.name']);
  });

  it('member keys manage templates, agent keys read and use them, another member sees 404', async () => {
    const created = await call('POST', '/v1/templates', {
      key: sender.memberKey,
      json: { name: 'a', html: '<p>{{x}}</p>' },
    });
    const id = created.body.template.id;
    expect(
      (await call('POST', '/v1/templates', { key: sender.key, json: { name: 'a', html: '<p>x</p>' } })).status,
    ).toBe(403);
    expect((await call('PATCH', `/v1/templates/${id}`, { key: sender.key, json: { name: 'b' } })).status).toBe(403);
    expect((await call('DELETE', `/v1/templates/${id}`, { key: sender.key })).status).toBe(403);
    expect((await call('GET', `/v1/templates/${id}`, { key: sender.key })).status).toBe(200);

    expect((await call('GET', `/v1/templates/${id}`, { key: other.memberKey })).status).toBe(404);
    expect((await call('GET', `/v1/templates/${id}`, { key: other.key })).status).toBe(404);
    expect((await call('PATCH', `/v1/templates/${id}`, { key: other.memberKey, json: { name: 'b' } })).status).toBe(
      404,
    );
    expect((await call('DELETE', `/v1/templates/${id}`, { key: other.memberKey })).status).toBe(404);
    const { res } = await preview(app.baseUrl, other.key, id, { merge_variables: { x: 1 } });
    expect(res.status).toBe(404);
    expect((await call('GET', '/v1/templates', { key: other.key })).body.templates).toEqual([]);
    const foreign = await sendLetter(app, other, templateForm({ template_id: id, merge_variables: '{"x":1}' }));
    expect(foreign.status).toBe(400);
    expect(fieldPaths(foreign.body)).toEqual(['template_id']);
  });
});

describe('template previews when the renderer cannot start', () => {
  const { app, api } = useTestApp({ worker: false, env: { CHROMIUM_PATH: '/nonexistent/chromium' } });

  it('answers 503 RENDERER_UNAVAILABLE, retryable', async () => {
    const member = await newSender(app, { creditsCents: 0 });
    const created = await api('POST', '/v1/templates', {
      key: member.memberKey,
      json: { name: 'x', html: '<p>{{x}}</p>' },
    });
    const res = await api('POST', `/v1/templates/${created.body.template.id}/preview`, {
      key: member.key,
      json: { merge_variables: { x: 1 } },
    });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'RENDERER_UNAVAILABLE', retryable: true });
  });
});
