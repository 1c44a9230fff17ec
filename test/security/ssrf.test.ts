// Server-side request forgery: where webhook URLs may point, in production mode and with
// WEBHOOKS_ALLOW_INSECURE_LOCAL=true (which opens http to this machine's loopback
// addresses only, never private networks, link-local or cloud metadata addresses). Checked
// at configuration time (the URL), at delivery time (every DNS answer, redirects never
// followed) and at start-up (production refuses the flag).
import { loadConfig } from '../../config';
import { webhookUrlProblem, WebhookUrlKind } from '../../domain/webhooks/urls';
import { checkWebhookTarget, Resolver, sendWebhook } from '../../services/webhooks/http';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent } from '../helpers/agents';
import { startReceiver } from '../integration/webhook-helpers';

/** Hostile targets: private networks, link-local, metadata, odd ports, other schemes. */
const NEVER: string[] = [
  'http://169.254.169.254/latest/meta-data',
  'https://169.254.169.254/latest/meta-data',
  'http://10.0.0.1:22/',
  'https://10.0.0.1/',
  'http://192.168.1.1/',
  'http://172.16.0.1:8080/',
  'http://100.64.0.1/',
  'http://0.0.0.0:4000/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://hooks.example.com/plain-http',
  'http://hooks.example.com:8443/odd-port',
  'http://user:pw@127.0.0.1:4000/',
  'ftp://127.0.0.1/',
  'file:///etc/passwd',
];

const LOOPBACK = [
  'http://127.0.0.1:4000/hook',
  'http://127.9.9.9:4000/hook',
  'http://[::1]:4000/hook',
  'http://localhost:4000/hook',
  'https://127.0.0.1:8443/hook',
];

const stub =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('webhook URL rules', () => {
  describe.each([false, true])('WEBHOOKS_ALLOW_INSECURE_LOCAL=%s', (insecureLocal) => {
    it.each(NEVER.flatMap((url) => (['endpoint', 'agent_webhook'] as WebhookUrlKind[]).map((kind) => [url, kind])))(
      'refuses %s (%s)',
      (url, kind) => {
        expect(webhookUrlProblem(url, kind as WebhookUrlKind, insecureLocal)).not.toBeNull();
      },
    );

    it('accepts public HTTPS on 443; another port only for legacy agent webhooks', () => {
      expect(webhookUrlProblem('https://hooks.example.com/postal', 'endpoint', insecureLocal)).toBeNull();
      expect(webhookUrlProblem('https://hooks.example.com:8443/postal', 'endpoint', insecureLocal)).toMatch(/port 443/);
      expect(webhookUrlProblem('https://hooks.example.com:8443/postal', 'agent_webhook', insecureLocal)).toBeNull();
    });

    it.each(LOOPBACK)(`${insecureLocal ? 'accepts' : 'refuses'} the loopback URL %s`, (url) => {
      const problem = webhookUrlProblem(url, 'endpoint', insecureLocal);
      if (insecureLocal) expect(problem).toBeNull();
      else expect(problem).not.toBeNull();
    });

    it('refuses a public host name whose DNS answers include a private or loopback address', async () => {
      for (const answer of [['93.184.216.34', '10.1.1.1'], ['127.0.0.1'], ['169.254.169.254'], ['::1']]) {
        const check = await checkWebhookTarget(
          'https://hooks.example.com/h',
          'endpoint',
          insecureLocal,
          stub(...answer),
        );
        expect(check).toMatchObject({ ok: false, error: expect.stringMatching(/^address_refused/) });
      }
      expect(
        (await checkWebhookTarget('https://hooks.example.com/h', 'endpoint', insecureLocal, stub('93.184.216.34'))).ok,
      ).toBe(true);
    });
  });

  it('with the flag, localhost must resolve to loopback addresses only', async () => {
    expect((await checkWebhookTarget('http://localhost:4000/h', 'endpoint', true, stub('127.0.0.1', '::1'))).ok).toBe(
      true,
    );
    const rebound = await checkWebhookTarget(
      'http://localhost:4000/h',
      'endpoint',
      true,
      stub('127.0.0.1', '10.0.0.1'),
    );
    expect(rebound).toMatchObject({ ok: false, error: expect.stringMatching(/^address_refused/) });
  });

  it('refuses to start with the flag when NODE_ENV=production', () => {
    const production = {
      NODE_ENV: 'production',
      APP_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      STRIPE_SECRET_KEY: 'sk_live_TestOnlyNotARealKey',
      STRIPE_WEBHOOK_SECRET: 'whsec_TestOnlyNotARealSecret',
      SMTP_URL: 'smtps://relay.example.com:465',
      MAIL_FROM: 'Postal Mail <notifications@example.com>',
    };
    expect(() => loadConfig({ ...production, WEBHOOKS_ALLOW_INSECURE_LOCAL: 'true' })).toThrow(
      /WEBHOOKS_ALLOW_INSECURE_LOCAL/,
    );
    expect(loadConfig({ ...production, WEBHOOKS_ALLOW_INSECURE_LOCAL: 'false' }).webhooksAllowInsecureLocal).toBe(
      false,
    );
    expect(loadConfig({ NODE_ENV: 'test', WEBHOOKS_ALLOW_INSECURE_LOCAL: 'true' }).webhooksAllowInsecureLocal).toBe(
      true,
    );
  });
});

describe('webhook targets through the API and the delivery client (WEBHOOKS_ALLOW_INSECURE_LOCAL=true)', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    app = await startTestApp({ worker: false, env: { WEBHOOKS_ALLOW_INSECURE_LOCAL: 'true' } });
    api = client(app.baseUrl);
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each(NEVER)('custom endpoints, agent webhook settings and agent profiles refuse %s', async (url) => {
    const member = await newMember(app.deps);
    const agent = await newAgent(app.baseUrl, member.key);
    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      key: member.key,
      json: { name: 'ssrf', url, event_types: ['*'] },
    });
    expect([endpoint.status, endpoint.body.fields?.[0]?.path]).toEqual([400, 'url']);
    const settings = await api('PUT', '/v1/webhooks/settings', {
      key: member.key,
      json: { agent_id: agent.id, webhook_url: url },
    });
    expect([settings.status, settings.body.fields?.[0]?.path]).toEqual([400, 'webhook_url']);
    const profile = await api('PATCH', `/v1/agents/${agent.id}`, { key: member.key, json: { webhook_url: url } });
    expect(profile.status).toBe(400);
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE member_id = $1`, [
      member.member_id,
    ]);
    expect(n).toBe(0);
  });

  it('delivers to a loopback receiver, and never follows its redirect to the metadata address', async () => {
    const receiver = await startReceiver(() => ({
      status: 302,
      headers: { location: 'http://169.254.169.254/latest/meta-data' },
    }));
    try {
      const sent = await sendWebhook({
        url: receiver.url,
        headers: {},
        body: '{}',
        kind: 'endpoint',
        allowInsecureLocal: true,
      });
      expect(sent).toMatchObject({
        ok: false,
        statusCode: 302,
        error: expect.stringMatching(/redirects are not followed/),
      });
      expect(receiver.received).toHaveLength(1);
      const refused = await sendWebhook({
        url: 'http://169.254.169.254/latest/meta-data',
        headers: {},
        body: '{}',
        kind: 'endpoint',
        allowInsecureLocal: true,
      });
      expect(refused).toMatchObject({ ok: false, statusCode: null, error: expect.stringMatching(/^url_refused/) });
    } finally {
      await receiver.close();
    }
  });
});
