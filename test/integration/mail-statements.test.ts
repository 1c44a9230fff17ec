// The Postgres statements one POST /v1/mail runs, counted at the driver (pg.Client#query,
// which TypeORM uses) while no worker runs, so every statement seen is the API's own: the
// member's settings come with the mailbox lookup, not from a query of their own.
import pg from 'pg';
import { startTestApp, TestApp } from '../helpers/app';
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
const memberOnly = (statements: string[]) => statements.filter((s) => /\bFROM members WHERE id = \$1\b(?! FOR UPDATE)/.test(s));
const mailboxLookups = (statements: string[]) => statements.filter((s) => /FROM agents a JOIN members m ON m\.id = a\.member_id/.test(s));

describe('statements of one POST /v1/mail', () => {
  let app: TestApp;
  beforeAll(async () => { app = await startTestApp({ worker: false }); });
  afterAll(async () => { await app.close(); });

  it('reads the member\'s settings with the mailbox, for agent keys and member keys alike', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const byAgent = await statementsDuring(async () => api(app)('POST', '/v1/mail', { key: s.key, form: letterForm(await letterPdf()), headers: s.headers }));
    expect(byAgent.result.status).toBe(201);
    const byMember = await statementsDuring(async () => api(app)('POST', '/v1/mail', { key: s.memberKey, form: letterForm(await letterPdf()) }));
    expect(byMember.result.status).toBe(201);
    for (const { statements } of [byAgent, byMember]) {
      expect(memberOnly(statements)).toEqual([]);
      const lookups = mailboxLookups(statements);
      expect(lookups).toHaveLength(1);
      expect(lookups[0]).toContain('m.per_transaction_limit_cents, m.daily_spend_limit_cents, m.pricing_overrides');
    }
  });
});
