// The Postgres statements one POST /v1/mail runs, counted at the driver (pg.Client#query,
// which TypeORM uses) while no worker runs, so every statement seen is the API's own: the
// member's settings come with the mailbox lookup, not from a query of their own, and a
// charged piece locks the member row once (its debit is told the lock is held), and the
// facility is picked in one statement each time. debit()
// itself still locks for every caller that does not show it holds the lock.
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { debit, lockMemberRow } from '../../services/billing/credits';
import { newMember } from '../helpers/factories';
import { createFacility } from '../../services/accounts/accounts';
import { api, letterForm, letterPdf, newSender } from './mail-helpers';

/** Every statement text the process sends while `fn` runs. */
async function statementsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const original = pg.Client.prototype.query;
  const counted = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : (config as { text?: string } | null)?.text;
    statements.push(String(text).replace(/\s+/g, ' ').trim());
    return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
  };
  pg.Client.prototype.query = counted as typeof original;
  try {
    return { result: await fn(), statements };
  } finally {
    pg.Client.prototype.query = original;
  }
}

/** Statements that read the members table on their own (not joined to the agent's mailbox). */
const memberOnly = (statements: string[]) =>
  statements.filter((s) => /\bFROM members WHERE id = \$1\b(?! FOR UPDATE)/.test(s));
const memberLocks = (statements: string[]) =>
  statements.filter((s) => /FROM members WHERE id = \$1 FOR UPDATE/.test(s));
const mailboxLookups = (statements: string[]) =>
  statements.filter((s) => /FROM agents a JOIN members m ON m\.id = a\.member_id/.test(s));

describe('statements of one POST /v1/mail', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ worker: false });
  });
  afterAll(async () => {
    await app.close();
  });

  it("reads the member's settings with the mailbox, for agent keys and member keys alike", async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const byAgent = await statementsDuring(async () =>
      api(app)('POST', '/v1/mail', { key: s.key, form: letterForm(await letterPdf()), headers: s.headers }),
    );
    expect(byAgent.result.status).toBe(201);
    const byMember = await statementsDuring(async () =>
      api(app)('POST', '/v1/mail', { key: s.memberKey, form: letterForm(await letterPdf()) }),
    );
    expect(byMember.result.status).toBe(201);
    for (const { statements } of [byAgent, byMember]) {
      expect(memberOnly(statements)).toEqual([]);
      const lookups = mailboxLookups(statements);
      expect(lookups).toHaveLength(1);
      expect(lookups[0]).toContain('m.per_transaction_limit_cents, m.daily_spend_limit_cents, m.pricing_overrides');
    }
  });

  it('picks the live facility with one statement for the price and one under the transaction', async () => {
    await createFacility(app.deps, `Statements Facility ${randomUUID()}`);
    const s = await newSender(app, { creditsCents: 100000 });
    const live = await statementsDuring(async () =>
      api(app)('POST', '/v1/mail', { key: s.key, form: letterForm(await letterPdf()), headers: s.headers }),
    );
    expect(live.result.status).toBe(201);
    const picks = live.statements.filter((st) => /\bFROM facilit(y_assignments|ies)\b/.test(st));
    expect(picks).toHaveLength(2);
    for (const pick of picks) expect(pick).toContain('FOR KEY SHARE OF f');
  });

  it('locks the member row once for a charged piece, and not at all for a sandbox piece', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const live = await statementsDuring(async () =>
      api(app)('POST', '/v1/mail', { key: s.key, form: letterForm(await letterPdf()), headers: s.headers }),
    );
    expect(live.result.status).toBe(201);
    expect(memberLocks(live.statements)).toHaveLength(1);
    expect(live.statements.filter((st) => st.startsWith('INSERT INTO credits_ledger'))).toHaveLength(1);
    const sandbox = await newSender(app, { environment: 'test' });
    const test = await statementsDuring(async () =>
      api(app)('POST', '/v1/mail', { key: sandbox.key, form: letterForm(await letterPdf()), headers: sandbox.headers }),
    );
    expect(test.result.status).toBe(201);
    expect(memberLocks(test.statements)).toEqual([]);
  });

  it("debit() locks the member itself unless shown this transaction's lock on that member", async () => {
    const a = await newMember(app.deps, { creditsCents: 1000 });
    const b = await newMember(app.deps, { creditsCents: 1000 });
    const movement = (memberId: string) => ({ memberId, amountCents: 100, entryKey: `debit:test:${randomUUID()}` });
    // Without the option: its own lock, then the ledger.
    const own = await statementsDuring(() =>
      app.deps.db.transaction((tx) => debit(app.deps, tx, movement(a.member_id))),
    );
    expect(own.result).toEqual({ balanceCents: 900, alreadyDebited: false });
    expect(memberLocks(own.statements)).toHaveLength(1);
    // With this transaction's lock: no second one.
    const shown = await statementsDuring(() =>
      app.deps.db.transaction(async (tx) => {
        const memberLock = await lockMemberRow(tx, a.member_id);
        return debit(app.deps, tx, movement(a.member_id), { memberLock });
      }),
    );
    expect(shown.result).toEqual({ balanceCents: 800, alreadyDebited: false });
    expect(memberLocks(shown.statements)).toHaveLength(1);
    // Another member's lock, another transaction's, or a look-alike is refused and nothing is debited.
    await expect(
      app.deps.db.transaction(async (tx) => {
        const memberLock = await lockMemberRow(tx, b.member_id);
        return debit(app.deps, tx, movement(a.member_id), { memberLock });
      }),
    ).rejects.toThrow(/memberLock/);
    const stale = await app.deps.db.transaction((tx) => lockMemberRow(tx, a.member_id));
    await expect(
      app.deps.db.transaction((tx) => debit(app.deps, tx, movement(a.member_id), { memberLock: stale })),
    ).rejects.toThrow(/memberLock/);
    await expect(
      app.deps.db.transaction((tx) =>
        debit(app.deps, tx, movement(a.member_id), { memberLock: { tx, memberId: a.member_id } }),
      ),
    ).rejects.toThrow(/memberLock/);
    const [{ balance }] = await app.deps.db.query(
      `SELECT COALESCE(SUM(amount_cents), 0)::int AS balance FROM credits_ledger WHERE member_id = $1`,
      [a.member_id],
    );
    expect(balance).toBe(800);
  });
});
