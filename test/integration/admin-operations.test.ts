// The operator's daily commands, called through their run functions against the real
// database and API: finding a member, suspending and reinstating it, correcting credits
// with ledger entries, and the friendly errors the CLI prints.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { useTestApp } from '../helpers/app';
import { newMember, uniqueEmail } from '../helpers/factories';
import { commands } from '../../scripts/admin';
import { friendlyError, Options } from '../../scripts/admin/cli';

describe('operator CLI: members and credits', () => {
  const { app, api } = useTestApp({ worker: false });
  const run = (name: string, opts: Options = {}) => commands[name].run(app.deps, opts) as Promise<any>;
  const entries = (memberId: string) =>
    app.deps.db.query(
      `SELECT kind, amount_cents, description FROM credits_ledger WHERE member_id = $1 AND kind = 'adjustment' ORDER BY created_at`,
      [memberId],
    );

  it('member:find matches the email case-insensitively, exact match first, with status and balance', async () => {
    const email = uniqueEmail('Find.Me');
    const created = await run('member:create', { email, name: 'Findable', 'credits-cents': '1234' });
    const found = await run('member:find', { email: email.toUpperCase() });
    expect(found.members[0]).toMatchObject({
      id: created.member_id,
      email,
      status: 'active',
      balance_cents: 1234,
      active_keys: 1,
      facility_id: null,
    });
    const partial = await run('member:find', { email: email.slice(0, 12).toLowerCase() });
    expect(partial.members.map((m: any) => m.id)).toContain(created.member_id);
    expect(commands['member:find'].format!(found)).toContain(created.member_id);
    expect((await run('member:find', { email: '%' })).members.every((m: any) => m.email.includes('%'))).toBe(true);
  });

  it('member:create refuses a duplicate email (any case) naming the existing member', async () => {
    const email = uniqueEmail('dup');
    const first = await run('member:create', { email, name: 'First' });
    await expect(run('member:create', { email: email.toUpperCase(), name: 'Second' })).rejects.toThrow(
      `a member with email ${email} already exists (id ${first.member_id})`,
    );
  });

  it('member:suspend refuses every key of the account with 401 member_suspended; unsuspend restores them', async () => {
    const member = await newMember(app.deps);
    expect((await api('GET', '/v1/credits', { key: member.key })).status).toBe(200);
    await expect(run('member:suspend', { member: member.member_id })).rejects.toThrow('--reason is required');

    const suspended = await run('member:suspend', { member: member.member_id, reason: 'chargeback under review' });
    expect(suspended).toMatchObject({ status: 'suspended', previous_status: 'active', changed: true });
    const refused = await api('GET', '/v1/credits', { key: member.key });
    expect([refused.status, refused.body.reason]).toEqual([401, 'member_suspended']);
    const [found] = (
      await run('member:find', {
        email: (await app.deps.db.query(`SELECT email FROM members WHERE id = $1`, [member.member_id]))[0].email,
      })
    ).members;
    expect(found).toMatchObject({ status: 'suspended', status_reason: 'chargeback under review' });
    expect(await run('member:suspend', { member: member.member_id, reason: 'again' })).toMatchObject({
      changed: false,
    });

    expect(await run('member:unsuspend', { member: member.member_id, reason: 'resolved' })).toMatchObject({
      status: 'active',
      changed: true,
    });
    expect((await api('GET', '/v1/credits', { key: member.key })).status).toBe(200);
    await expect(
      run('member:suspend', { member: '00000000-0000-0000-0000-000000000000', reason: 'x' }),
    ).rejects.toThrow('no member 00000000-0000-0000-0000-000000000000');
  });

  it('credits:adjust adds an adjustment entry with the reason, never below zero, once per reference', async () => {
    const member = await newMember(app.deps, { creditsCents: 1000 });
    const up = await run('credits:adjust', {
      member: member.member_id,
      cents: '+250',
      reason: 'goodwill for late delivery',
      reference: 'T-1',
    });
    expect(up).toEqual({
      member_id: member.member_id,
      adjusted_cents: 250,
      already_applied: false,
      balance_cents: 1250,
    });
    expect(
      await run('credits:adjust', {
        member: member.member_id,
        cents: '+250',
        reason: 'goodwill for late delivery',
        reference: 'T-1',
      }),
    ).toMatchObject({ already_applied: true, balance_cents: 1250 });
    await expect(
      run('credits:adjust', { member: member.member_id, cents: '+300', reason: 'x', reference: 'T-1' }),
    ).rejects.toMatchObject({ code: 'ADJUSTMENT_REFERENCE_USED' });

    await expect(
      run('credits:adjust', { member: member.member_id, cents: '-1251', reason: 'too much' }),
    ).rejects.toMatchObject({ code: 'ADJUSTMENT_WOULD_GO_NEGATIVE', message: expect.stringContaining('$12.50') });
    expect(
      await run('credits:adjust', { member: member.member_id, cents: '-1250', reason: 'duplicate top-up reversed' }),
    ).toMatchObject({ balance_cents: 0 });
    expect(await entries(member.member_id)).toEqual([
      { kind: 'adjustment', amount_cents: 250, description: 'goodwill for late delivery' },
      { kind: 'adjustment', amount_cents: -1250, description: 'duplicate top-up reversed' },
    ]);
    expect((await api('GET', '/v1/credits', { key: member.key })).body.balance_cents).toBe(0);

    for (const cents of ['250', '+0', '-1.5', 'ten']) {
      await expect(run('credits:adjust', { member: member.member_id, cents, reason: 'x' })).rejects.toThrow(
        /--cents must be/,
      );
    }
    await expect(
      run('credits:adjust', { member: '00000000-0000-0000-0000-000000000000', cents: '+1', reason: 'x' }),
    ).rejects.toThrow('no member 00000000-0000-0000-0000-000000000000');
  });

  it('concurrent debits from one balance never take it below zero', async () => {
    const member = await newMember(app.deps, { creditsCents: 1000 });
    const results = await Promise.allSettled(
      [1, 2, 3].map((i) => run('credits:adjust', { member: member.member_id, cents: '-400', reason: `r${i}` })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const [{ b }] = await app.deps.db.query(
      `SELECT SUM(amount_cents)::int AS b FROM credits_ledger WHERE member_id = $1`,
      [member.member_id],
    );
    expect(b).toBe(200);
  });

  it('prints database refusals in words', async () => {
    const missing = await run('credits:add', { member: '00000000-0000-0000-0000-000000000000', cents: '5' }).catch(
      (e) => e,
    );
    expect(friendlyError(missing)).toBe('no member 00000000-0000-0000-0000-000000000000');
    const malformed = await run('member:set', { member: 'not-an-id', business: 'true' }).catch((e) => e);
    expect(friendlyError(malformed)).toMatch(/^(an id or value is malformed|no member)/);
    const coded = await run('facility:set-default', { facility: '00000000-0000-0000-0000-000000000000' }).catch(
      (e) => e,
    );
    expect(friendlyError(coded)).toBe('no facility 00000000-0000-0000-0000-000000000000\n  Check the facility id.');
  });

  it('the CLI process prints the friendly error and exits 1', async () => {
    const email = uniqueEmail('dup-cli');
    const first = await run('member:create', { email, name: 'First' });
    const root = path.resolve(__dirname, '..', '..');
    const failed = await promisify(execFile)(
      path.join(root, 'node_modules', '.bin', 'tsx'),
      [path.join(root, 'scripts', 'admin.ts'), 'member:create', '--email', email, '--name', 'Again'],
      { cwd: root, env: { ...process.env, LOG_LEVEL: 'silent' }, timeout: 60_000 },
    ).catch((e) => e);
    expect(failed).toMatchObject({
      code: 1,
      stderr: `error: a member with email ${email} already exists (id ${first.member_id})\n`,
    });
  });
});
