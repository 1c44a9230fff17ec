import { randomBytes } from 'node:crypto';
import { TestApp, useTestApp } from '../helpers/app';
import { client, fieldPaths as paths } from '../helpers/http';
import { uniqueEmail } from '../helpers/factories';
import { verifyPassword } from '../../domain/accounts/passwords';

// Signup is limited per client IP; each test speaks from its own address so that the
// tests do not share one budget (the router trusts X-Forwarded-For when TRUST_PROXY is set).
process.env.TRUST_PROXY = 'true';
const newIp = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

/** Waits out the last seconds of a fixed one-minute window so a burst lands in one window. */
async function freshWindow(app: TestApp) {
  const [{ s }] = await app.deps.db.query(`SELECT EXTRACT(SECOND FROM now())::float AS s`);
  if (s > 50) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
}

describe('signup, waitlist and lead status', () => {
  const { app } = useTestApp({ worker: false });

  const post = (path: string, json: unknown, ip = newIp()) =>
    client(app.baseUrl)('POST', path, { json, headers: { 'x-forwarded-for': ip } });
  const get = (path: string) => client(app.baseUrl)('GET', path, { headers: { 'x-forwarded-for': newIp() } });
  const valid = () => ({ email: uniqueEmail('signup'), password: 'a-long-password', full_name: 'Ada Lovelace' });

  describe('POST /v1/signup validation (400 with fields[] paths)', () => {
    it.each([
      ['an empty body', {}, ['email', 'full_name', 'password']],
      ['a bad email', { email: 'not-an-email' }, ['email']],
      ['a 7-character password', { password: 'seven77' }, ['password']],
      ['a 1-character full_name', { full_name: 'A' }, ['full_name']],
      ['a 101-character full_name', { full_name: 'x'.repeat(101) }, ['full_name']],
      ['a lead_id with capitals', { lead_id: 'wl_ABCDEF0123456789' }, ['lead_id']],
      ['a lead_id of 15 hex', { lead_id: 'wl_0123456789abcde' }, ['lead_id']],
      ['needs that is not a string', { needs: 42 }, ['needs']],
      ['an unknown field', { plan: 'pro' }, ['body']],
    ])('refuses %s', async (_label, override, expected) => {
      const base = Object.keys(override).length ? valid() : {};
      const res = await post('/v1/signup', { ...base, ...override });
      expect(res.status).toBe(400);
      expect(paths(res.body)).toEqual(expected);
      expect(res.body.test_mode).toBe(false);
    });

    it('creates nothing on a refused signup', async () => {
      const body = { ...valid(), password: 'short' };
      expect((await post('/v1/signup', body)).status).toBe(400);
      const rows = await app.deps.db.query(`SELECT 1 FROM members WHERE email = $1`, [body.email]);
      expect(rows).toHaveLength(0);
    });
  });

  it('creates the account with a hashed password and issues no API key', async () => {
    const body = { ...valid(), needs: 'send certified letters' };
    const res = await post('/v1/signup', body);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      success: true,
      next_steps: {
        verify_email: expect.any(String),
        complete_kyc: expect.stringMatching(/^http/),
        after_kyc: expect.any(String),
      },
      contact: { owner_email: app.deps.config.ownerEmail },
      agent_resources: { openapi_url: `${app.siteUrl}/openapi.json`, discovery_url: `${app.baseUrl}/v1` },
      test_mode: false,
    });
    expect(res.body.human_action_required.map((s: { step: string }) => s.step)).toEqual([
      'verify_email',
      'verify_phone',
      'add_payment',
      'select_plan',
    ]);
    for (const action of res.body.human_action_required)
      expect(action).toEqual({ step: expect.any(String), summary: expect.any(String), blocker: expect.any(Boolean) });
    // One paste-ready sentence.
    expect(res.body.relay_message).toMatch(/^[^\n]+\.$/);
    expect(res.body.relay_message.split(/\.\s/)).toHaveLength(1);
    expect(res.body).not.toHaveProperty('lead_id');
    expect(res.body).not.toHaveProperty('status_url');
    expect(JSON.stringify(res.body)).not.toMatch(/sk_[a-z_]+[A-Za-z0-9]{40}/);

    const [member] = await app.deps.db.query(
      `SELECT id, password_hash, email_verified, needs FROM members WHERE email = $1`,
      [body.email],
    );
    expect(member.needs).toBe('send certified letters');
    expect(member.password_hash).not.toContain(body.password);
    expect(member.password_hash.startsWith('scrypt$')).toBe(true);
    await expect(verifyPassword(body.password, member.password_hash)).resolves.toBe(true);
    expect(member.email_verified).toBe(false);
    const keys = await app.deps.db.query(`SELECT 1 FROM member_api_keys WHERE member_id = $1`, [member.id]);
    expect(keys).toHaveLength(0);
  });

  it('answers 409 for an email already registered, whatever its case, and for a concurrent duplicate', async () => {
    const body = valid();
    expect((await post('/v1/signup', body)).status).toBe(201);
    const again = await post('/v1/signup', { ...body, email: body.email.toUpperCase() });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('EMAIL_ALREADY_REGISTERED');

    const race = { ...valid() };
    const results = await Promise.all([
      post('/v1/signup', race),
      post('/v1/signup', { ...race, email: race.email.toUpperCase() }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  describe('POST /v1/waitlist', () => {
    it('records a reservation, assigns nothing and answers the agent resources', async () => {
      const email = uniqueEmail('waitlist');
      const res = await post('/v1/waitlist', {
        email,
        needs: 'a street address',
        preferred_location: 'Austin, TX',
        callback_url: 'https://agent.example/cb',
        agent_id: 'agent-7',
      });
      expect(res.status).toBe(200);
      expect(res.body.lead_id).toMatch(/^wl_[a-f0-9]{16}$/);
      expect(res.body).toMatchObject({
        next: { signup_url: `${app.baseUrl}/v1/signup` },
        return_channel: {
          type: 'poll',
          status_url: `${app.baseUrl}/v1/leads/${res.body.lead_id}`,
          callback_url: 'https://agent.example/cb',
        },
        contact: { owner_email: app.deps.config.ownerEmail },
        agent_resources: expect.objectContaining({ mcp_url: `${app.baseUrl}/mcp` }),
      });
      const [lead] = await app.deps.db.query(
        `SELECT email, stage, member_id, source FROM waitlist_leads WHERE id = $1`,
        [res.body.lead_id],
      );
      expect(lead).toEqual({ email, stage: 'waitlisted', member_id: null, source: 'agent' });
    });

    it('refuses a missing email and a callback_url that is not https', async () => {
      const missing = await post('/v1/waitlist', { needs: 'x' });
      expect(missing.status).toBe(400);
      expect(paths(missing.body)).toEqual(['email']);
      const http = await post('/v1/waitlist', { email: uniqueEmail(), callback_url: 'http://agent.example/cb' });
      expect(http.status).toBe(400);
      expect(paths(http.body)).toEqual(['callback_url']);
      const notUrl = await post('/v1/waitlist', { email: uniqueEmail(), callback_url: 'agent.example' });
      expect(paths(notUrl.body)).toEqual(['callback_url']);
    });
  });

  describe('GET /v1/leads/:leadId', () => {
    it('answers 400 for a bad format and 404 for an unknown lead', async () => {
      const bad = await get('/v1/leads/wl_nothex');
      expect(bad.status).toBe(400);
      expect(paths(bad.body)).toEqual(['params.leadId']);
      const unknown = await get('/v1/leads/wl_0000000000000000');
      expect(unknown.status).toBe(404);
    });

    it('shows the lead without personal data, and stitching moves it to account_created', async () => {
      const email = uniqueEmail('lead');
      const lead = await post('/v1/waitlist', {
        email,
        operator_contact: '+1 512 555 0100',
        callback_url: 'https://agent.example/secret-cb',
      });
      const leadId = lead.body.lead_id;

      const before = await get(`/v1/leads/${leadId}`);
      expect(before.status).toBe(200);
      expect(before.body).toMatchObject({
        lead_id: leadId,
        stage: 'waitlisted',
        has_account: false,
        source: 'api',
        age_days: 0,
        next_step: { action: 'signup' },
      });
      expect(before.body.contact).toEqual({
        owner_email: app.deps.config.ownerEmail,
        instruction_for_agent: expect.any(String),
      });
      const text = JSON.stringify(before.body);
      for (const personal of [email, '555 0100', 'secret-cb']) expect(text).not.toContain(personal);

      const signup = await post('/v1/signup', {
        email: uniqueEmail('stitched'),
        password: 'a-long-password',
        full_name: 'Grace Hopper',
        lead_id: leadId,
      });
      expect(signup.status).toBe(201);
      expect(signup.body.lead_id).toBe(leadId);
      expect(signup.body.status_url).toBe(`${app.baseUrl}/v1/leads/${leadId}`);

      // status_url is pollable without auth.
      const after = await fetch(signup.body.status_url, { headers: { 'x-forwarded-for': newIp() } });
      expect(after.status).toBe(200);
      expect(await after.json()).toMatchObject({
        stage: 'account_created',
        has_account: true,
        next_step: { action: 'verify_email' },
      });
      const [row] = await app.deps.db.query(
        `SELECT l.member_id, m.email FROM waitlist_leads l JOIN members m ON m.id = l.member_id WHERE l.id = $1`,
        [leadId],
      );
      expect(row.email).toMatch(/^stitched-/);

      const second = await post('/v1/signup', {
        email: uniqueEmail(),
        password: 'a-long-password',
        full_name: 'Someone Else',
        lead_id: leadId,
      });
      expect(second.status).toBe(409);
      expect(second.body.code).toBe('LEAD_ALREADY_STITCHED');
    });

    it('refuses signup with an unknown lead_id (400 on lead_id) and creates no account', async () => {
      const body = { ...valid(), lead_id: 'wl_1111111111111111' };
      const res = await post('/v1/signup', body);
      expect(res.status).toBe(400);
      expect(paths(res.body)).toEqual(['lead_id']);
      expect(await app.deps.db.query(`SELECT 1 FROM members WHERE email = $1`, [body.email])).toHaveLength(0);
    });
  });

  it('allows 5 signups per minute per IP, then 429 with Retry-After', async () => {
    await freshWindow(app);
    const ip = newIp();
    const results = await Promise.all(Array.from({ length: 8 }, () => post('/v1/signup', { email: 'bad' }, ip)));
    const limited = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 400)).toHaveLength(5);
    expect(limited).toHaveLength(3);
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited[0].headers.get('x-ratelimit-limit')).toBe('5');
    expect(limited[0].headers.get('x-ratelimit-remaining')).toBe('0');
    // Another address has its own budget.
    expect((await post('/v1/signup', { email: 'bad' })).status).toBe(400);
  });
});
