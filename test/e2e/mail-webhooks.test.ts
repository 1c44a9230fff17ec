// End to end through the public API: an agent with a test key sends a letter, advances it
// to delivered, and its webhook receiver gets every mail.* event, each signed so that an
// independent HMAC computation (node:crypto here, not the project's signing code) accepts it.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';
import { startReceiver } from '../integration/webhook-helpers';

const ONE_PAGE_PDF = readFileSync(path.join(__dirname, '..', 'fixtures', 'documents', 'one-page.pdf'));

function independentlyVerified(header: string, body: string, signingKey: string, keyId: string): boolean {
  const m = /^(whsk_[0-9a-f]+):t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m || m[1] !== keyId) return false;
  const expected = createHmac('sha256', signingKey.slice('whsk_'.length)).update(`${m[2]}.${body}`).digest('hex');
  return expected === m[3];
}

describe('a sandbox letter from submission to delivery, with every webhook', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('delivers mail.submitted, mail.ready, mail.mailed and mail.delivered, each verifiably signed', async () => {
    const api = client(app.baseUrl);
    const receiver = await startReceiver();
    try {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key, {
        environment: 'test',
        scopes: ['mail.send', 'agent.read'],
      });
      const settings = await api('PUT', '/v1/webhooks/settings', {
        key: member.key,
        json: { agent_id: agent.id, webhook_url: receiver.url, enabled: true, event_types: ['*'] },
      });
      expect(settings.status).toBe(200);
      const signingKey: string = settings.body.webhook_signing_key;
      const keyId: string = settings.body.signing_key_id;

      const instructions = await api('GET', `/v1/agents/${agent.id}/instructions`, { key: credential.key });
      const form = new FormData();
      form.append('document', new Blob([ONE_PAGE_PDF], { type: 'application/pdf' }), 'letter.pdf');
      for (const [k, v] of Object.entries({
        recipient_name: 'Ada Lovelace',
        recipient_line1: '12 Analytical Way',
        recipient_city: 'Portland',
        recipient_state: 'OR',
        recipient_zip: '97201',
        mail_class: 'certified',
        metadata: JSON.stringify({ case: 'e2e-1' }),
      }))
        form.append(k, v);
      const sent = await api('POST', '/v1/mail', {
        key: credential.key,
        form,
        headers: { 'x-service-md-version': String(instructions.body.version) },
      });
      expect(sent.status).toBe(201);
      expect(sent.body).toMatchObject({ status: 'submitted', test_mode: true, cost_cents: 0 });
      expect(sent.body.estimated_live_cost_cents).toBeGreaterThan(0);

      for (const next of ['ready', 'mailed', 'delivered']) {
        const advanced = await api('POST', `/v1/test/mail/${sent.body.id}/advance`, { key: credential.key });
        expect(advanced.status).toBe(200);
        expect(advanced.body.status).toBe(next);
      }

      const received = await receiver.waitFor(4, 60000);
      const events = received.map((r) => ({ r, payload: JSON.parse(r.body) }));
      expect(events.map((e) => e.payload.event_type).sort()).toEqual([
        'mail.delivered',
        'mail.mailed',
        'mail.ready',
        'mail.submitted',
      ]);
      for (const { r, payload } of events) {
        expect(independentlyVerified(r.headers['x-service-signature'] as string, r.body, signingKey, keyId)).toBe(true);
        expect(payload).toMatchObject({
          outbound_mail_id: sent.body.id,
          agent_id: agent.id,
          test_mode: true,
          metadata: { case: 'e2e-1' },
        });
      }
      const byType = Object.fromEntries(events.map((e) => [e.payload.event_type, e.payload]));
      expect(byType['mail.submitted'].fulfillment_photos).toEqual([]);
      expect(byType['mail.ready'].fulfillment_photos.length).toBeGreaterThan(0);
      expect(byType['mail.mailed'].tracking_number).toEqual(expect.any(String));
      expect(byType['mail.mailed'].carrier).toEqual(expect.any(String));

      const final = await api('GET', `/v1/mail/${sent.body.id}`, { key: credential.key });
      expect(final.body).toMatchObject({ status: 'delivered', test_mode: true });
      const photo = await fetch(final.body.fulfillment_photos[0].url);
      expect(photo.status).toBe(200);
      expect(
        Buffer.from(await photo.arrayBuffer())
          .subarray(1, 4)
          .toString('latin1'),
      ).toBe('PNG');
    } finally {
      await receiver.close();
    }
  });
});
