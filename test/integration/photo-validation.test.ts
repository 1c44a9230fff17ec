// Every upload that accepts a photo or page image decodes it in full first: a truncated
// JPEG (the first 3 KB of a real photo) or a truncated PNG is refused with a 400 naming
// the field and nothing is stored; the intact images are accepted.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { useTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { createFacility } from '../../services/accounts/accounts';
import { fixtureImage, newWorld, receivePiece, World } from '../helpers/physical-inbound';
import { letterForm, letterPdf, newSender, sendLetter } from './mail-helpers';

async function realJpeg(): Promise<Buffer> {
  const mail = await simpleParser(readFileSync(path.join(__dirname, '..', 'fixtures', 'inbound', 'photo-notice.eml')));
  return mail.attachments[0].content;
}

function imageForm(fields: Record<string, Buffer>, extra: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  for (const [k, v] of Object.entries(fields)) {
    const jpeg = v[0] === 0xff;
    form.append(
      k,
      new Blob([new Uint8Array(v)], { type: jpeg ? 'image/jpeg' : 'image/png' }),
      `${k}.${jpeg ? 'jpg' : 'png'}`,
    );
  }
  return form;
}

describe('photo and page image validation', () => {
  const { app, api } = useTestApp();
  let w: World;
  let jpeg: Buffer;
  let truncatedJpeg: Buffer;
  let png: Buffer;
  let truncatedPng: Buffer;

  beforeAll(async () => {
    w = await newWorld(app);
    jpeg = await realJpeg();
    truncatedJpeg = jpeg.subarray(0, 3 * 1024);
    png = fixtureImage('sample-envelope.png');
    truncatedPng = png.subarray(0, Math.floor(png.length / 2));
  });

  it('refuses a truncated sealed-exterior photo (JPEG or PNG) and stores nothing; accepts the intact one', async () => {
    const key = w.facilityKey;
    const draft = await api('POST', '/v1/facility/inbound/drafts', { key, json: { kind: 'letter' } });
    const id = draft.body.draft.id;
    for (const bad of [truncatedJpeg, truncatedPng]) {
      const res = await api('POST', `/v1/facility/inbound/drafts/${id}/exterior`, {
        key,
        form: imageForm({ photo: bad }, { photo_type: 'sealed_exterior' }),
      });
      expect(res.status).toBe(400);
      expect(res.body.fields).toEqual([
        { path: 'photo', message: expect.stringMatching(/(JPEG|PNG) image is corrupt/) },
      ]);
    }
    const after = await api('GET', `/v1/facility/inbound/drafts/${id}`, { key });
    expect(after.body.draft).toMatchObject({ version: 1, photos: [] });
    const ok = await api('POST', `/v1/facility/inbound/drafts/${id}/exterior`, {
      key,
      form: imageForm({ photo: jpeg }, { photo_type: 'sealed_exterior' }),
    });
    expect(ok.status).toBe(201);
    expect(ok.body.draft.photos).toEqual([
      expect.objectContaining({ content_type: 'image/jpeg', size_bytes: jpeg.length }),
    ]);
  });

  it('refuses a scan whose page image is truncated, naming the page; the request stays open', async () => {
    // A committed piece with a package scan request.
    const itemId = await receivePiece(app, w);
    const scan = await api('POST', `/v1/packages/${itemId}/scan`, {
      key: w.agentKey,
      headers: { 'x-service-md-version': '1' },
      json: { scan_type: 'document' },
    });
    expect(scan.status).toBe(201);
    const requests = await api('GET', '/v1/facility/scan-requests', { key: w.facilityKey });
    const request = requests.body.scan_requests.find((r: { item_id: string }) => r.item_id === itemId);
    const bad = await api('POST', `/v1/facility/scan-requests/${request.id}/fulfil`, {
      key: w.facilityKey,
      form: imageForm({ page_1: png, page_2: truncatedJpeg }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.fields.map((f: { path: string }) => f.path)).toEqual(['page_2']);
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM scan_bundles WHERE request_id = $1`, [
      request.id,
    ]);
    expect(n).toBe(0);
    const good = await api('POST', `/v1/facility/scan-requests/${request.id}/fulfil`, {
      key: w.facilityKey,
      form: imageForm({ page_1: png, page_2: jpeg }),
    });
    expect(good.status).toBe(201);
  });

  it('refuses truncated fulfilment photos of an outbound piece, naming each field', async () => {
    const facility = await createFacility(app.deps, 'Photo Validation Facility');
    const s = await newSender(app, { creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'priority' }));
    expect(created.status).toBe(201);
    const id = created.body.id;
    // Live pieces go to the oldest active facility, which other suites of the run set up: hand this one to ours.
    await app.deps.db.query(`UPDATE outbound_mail SET facility_id = $2 WHERE id = $1`, [id, facility.facility_id]);
    const printed = (form: FormData) => api('POST', `/v1/facility/mail/${id}/printed`, { key: facility.key, form });
    const bad = await printed(imageForm({ pages: truncatedJpeg, envelope: truncatedPng }));
    expect(bad.status).toBe(400);
    expect(bad.body.fields.map((f: { path: string }) => f.path).sort()).toEqual(['envelope', 'pages']);
    const [{ n }] = await app.deps.db.query(
      `SELECT count(*)::int AS n FROM outbound_mail_photos WHERE outbound_mail_id = $1`,
      [id],
    );
    expect(n).toBe(0);
    const ok = await printed(imageForm({ pages: jpeg, envelope: png }));
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('ready');
  });

  it('refuses a support attachment declared as an image that does not decode', async () => {
    const member = await newMember(app.deps);
    const send = (content: Buffer, contentType: string) =>
      api('POST', '/v1/support/messages', {
        key: member.key,
        json: {
          category: 'support',
          body: 'Photo attached.',
          attachments: [{ filename: 'photo', content_type: contentType, content_base64: content.toString('base64') }],
        },
      });
    const truncated = await send(truncatedJpeg, 'image/jpeg');
    expect(truncated.status).toBe(400);
    expect(truncated.body.fields.map((f: { path: string }) => f.path)).toEqual(['attachments.0.content_base64']);
    const mislabelled = await send(png, 'image/jpeg');
    expect(mislabelled.status).toBe(400);
    expect((await send(jpeg, 'image/jpeg')).status).toBe(201);
  });
});
