// Signed object-store URLs expire: a URL signed for 1 second is refused by the real object
// store after 2 seconds, and the URLs the API hands out (pdf_url, fulfillment photos, the
// document redirect) are signed for exactly 3,600 seconds.
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { insertMemberKey } from '../../services/accounts/accounts';
import { newAgent } from '../helpers/agents';
import { letterForm } from '../integration/mail-helpers';
import { PDFDocument } from 'pdf-lib';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expiresOf(url: string): string | null {
  return new URL(url).searchParams.get('X-Amz-Expires');
}

describe('signed URLs', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a URL signed for 1 s works at once and is refused after 2 s', async () => {
    const key = `security/${randomUUID()}.txt`;
    await app.deps.storage.put(key, 'short-lived', 'text/plain');
    const url = await app.deps.storage.signedUrl(key, { expiresInSeconds: 1 });
    expect(expiresOf(url)).toBe('1');
    const first = await fetch(url);
    expect(first.status).toBe(200);
    expect(await first.text()).toBe('short-lived');
    await sleep(2100);
    const later = await fetch(url);
    expect(later.status).toBe(403);
    expect(await later.text()).not.toContain('short-lived');
    await app.deps.storage.remove(key);
  });

  it('pdf_url, photo URLs and the document redirect carry X-Amz-Expires=3600', async () => {
    const member = await newMember(app.deps);
    await newAgent(app.baseUrl, member.key);
    const testKey = (await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' }))
      .key;
    const api = client(app.baseUrl);
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    const pdf = Buffer.from(await doc.save());
    const created = await api('POST', '/v1/mail', { key: testKey, form: letterForm(pdf) });
    expect(created.status).toBe(201);
    const advanced = await api('POST', `/v1/test/mail/${created.body.id}/advance`, { key: testKey });
    expect(advanced.status).toBe(200);

    const record = await api('GET', `/v1/mail/${created.body.id}`, { key: testKey });
    expect(record.status).toBe(200);
    expect(expiresOf(record.body.pdf_url)).toBe('3600');
    expect(record.body.fulfillment_photos.length).toBeGreaterThan(0);
    for (const photo of record.body.fulfillment_photos) expect(expiresOf(photo.url)).toBe('3600');
    expect((await fetch(record.body.pdf_url)).status).toBe(200);

    const redirect = await fetch(`${app.baseUrl}/v1/mail/${created.body.id}/document`, {
      headers: { authorization: `Bearer ${testKey}` },
      redirect: 'manual',
    });
    expect(redirect.status).toBe(302);
    expect(expiresOf(redirect.headers.get('location')!)).toBe('3600');
  });
});
