import { hashPassword, verifyPassword } from '../../domain/accounts/passwords';
import {
  ageDays,
  humanActionsAfterSignup,
  LEAD_ID_PATTERN,
  LEAD_STAGES,
  leadNextStep,
  newLeadId,
  OnboardingUrls,
} from '../../domain/accounts/onboarding';
import { describeAccess, renderAccessTable } from '../../domain/shared/access-summary';
import { ENDPOINT_ACCESS } from '../../domain/shared/access';
import { generateKey, hashKey, KEY_PREFIX_LENGTH, keyPrefixOf, parseBearer } from '../../domain/accounts/keys';
import { mailboxIdFor } from '../../domain/accounts/agents';

const urls: OnboardingUrls = {
  signupUrl: 'https://api.example/v1/signup',
  verifyEmailUrl: 'https://example/verify',
  kycUrl: 'https://example/kyc',
  billingUrl: 'https://example/billing#credits',
  plansUrl: 'https://example/billing#plans',
};

describe('passwords', () => {
  it('stores a salted scrypt hash that verifies only the original password', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toContain('correct horse');
    expect(a).not.toBe(b); // a fresh salt each time
    await expect(verifyPassword('correct horse battery', a)).resolves.toBe(true);
    await expect(verifyPassword('correct horse batterY', a)).resolves.toBe(false);
    await expect(verifyPassword('x', 'not-a-hash')).resolves.toBe(false);
  });
});

describe('onboarding rules', () => {
  it('makes lead ids of the form wl_ + 16 hex', () => {
    const ids = new Set(Array.from({ length: 50 }, newLeadId));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(LEAD_ID_PATTERN);
    expect(LEAD_ID_PATTERN.test('wl_ABCDEF0123456789')).toBe(false);
    expect(LEAD_ID_PATTERN.test('wl_0123456789abcde')).toBe(false);
  });

  it('lists the four human steps, three of them blocking live keys', () => {
    const steps = humanActionsAfterSignup(urls);
    expect(steps.map((s) => s.step)).toEqual(['verify_email', 'verify_phone', 'add_payment', 'select_plan']);
    expect(steps.filter((s) => s.blocker).map((s) => s.step)).toEqual(['verify_email', 'verify_phone', 'add_payment']);
  });

  it('points each lead stage at its next step, and active at none', () => {
    expect(leadNextStep('waitlisted', urls)).toMatchObject({ action: 'signup', url: urls.signupUrl });
    expect(leadNextStep('account_created', urls)).toMatchObject({ action: 'verify_email' });
    expect(leadNextStep('email_verified', urls)).toMatchObject({ action: 'complete_kyc', url: urls.kycUrl });
    expect(leadNextStep('active', urls)).toBeNull();
    for (const stage of LEAD_STAGES) expect(() => leadNextStep(stage, urls)).not.toThrow();
  });

  it('counts whole days of age', () => {
    const now = new Date('2025-01-10T12:00:00Z');
    expect(ageDays(new Date('2025-01-10T00:00:00Z'), now)).toBe(0);
    expect(ageDays(new Date('2025-01-08T12:00:00Z'), now)).toBe(2);
    expect(ageDays(new Date('2025-01-11T00:00:00Z'), now)).toBe(0);
  });
});

describe('keys', () => {
  it.each([
    ['member', 'sk_live_'],
    ['member_test', 'sk_test_'],
    ['agent', 'sk_agent_'],
    ['agent_test', 'sk_agent_test_'],
    ['facility', 'sk_facility_'],
  ] as const)('generates %s keys that parse back to their kind', (kind, prefix) => {
    const key = generateKey(kind);
    expect(key.startsWith(prefix)).toBe(true);
    expect(parseBearer(`Bearer ${key}`)).toEqual({ ok: true, token: key, kind });
    expect(keyPrefixOf(key)).toHaveLength(KEY_PREFIX_LENGTH);
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('classifies bad Authorization headers with the spec reasons', () => {
    expect(parseBearer(undefined)).toEqual({ ok: false, reason: 'token_missing' });
    expect(parseBearer('  ')).toEqual({ ok: false, reason: 'token_missing' });
    expect(parseBearer('Basic dXNlcjpwYXNz')).toEqual({ ok: false, reason: 'token_malformed' });
    expect(parseBearer('Bearer sk_live_short')).toEqual({ ok: false, reason: 'token_malformed' });
    expect(parseBearer('Bearer pk_live_abcdefghijklmnopqrstuvwxyz')).toEqual({
      ok: false,
      reason: 'token_prefix_unknown',
    });
  });
});

describe('access table views', () => {
  it('renders one markdown row per access row, with guards spelled out', () => {
    const table = renderAccessTable(ENDPOINT_ACCESS);
    const rows = table.split('\n').slice(2);
    expect(rows).toHaveLength(Object.keys(ENDPOINT_ACCESS).length);
    expect(table).toContain('| `POST /v1/signup` | none (public) | — | 5 requests/minute per IP |');
    const patch = rows.find((r) => r.startsWith('| `PATCH /v1/agents/:id` |'))!;
    expect(patch).toContain('agent.write');
    expect(patch).toContain('live_key_required');
    expect(patch).toContain('X-Service-MD-Version');
  });

  it('describes an access row for the discovery directory', () => {
    expect(describeAccess(ENDPOINT_ACCESS['GET /v1/credits'])).toEqual({
      auth: ['member', 'member_test', 'agent', 'agent_test'],
      scopes: [],
      any_scope: ['billing.read', 'mail.send'],
      live_only: false,
      test_only: false,
      sandbox_unsupported: false,
      version_guard: false,
    });
    expect(describeAccess(ENDPOINT_ACCESS['POST /v1/signup']).auth).toEqual(['public']);
  });

  it('names an agent mailbox after the agent', () => {
    expect(mailboxIdFor('0b7c9a52-6f1e-4c1a-9d65-2b9a7e1f3c11')).toBe('mbx_0b7c9a52-6f1e-4c1a-9d65-2b9a7e1f3c11');
  });
});
