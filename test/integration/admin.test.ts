import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { useTestApp } from '../helpers/app';
import { uniqueEmail } from '../helpers/factories';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

async function cli(script: string, args: string[], databaseUrl: string) {
  const { stdout } = await run(TSX, [path.join(ROOT, 'scripts', script), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    timeout: 60_000,
  });
  return stdout.trim();
}

const admin = async (args: string[]) =>
  JSON.parse(await cli('admin.ts', [...args, '--json'], process.env.DATABASE_URL!));

describe('operator CLI and migrations', () => {
  const { app, api } = useTestApp({ worker: false });

  it('member:create prints a working live key with the starting credits; credits:add tops up; key:revoke revokes', async () => {
    const email = uniqueEmail('admin');
    const created = await admin([
      'member:create',
      '--email',
      email,
      '--name',
      'Operator Made',
      '--credits-cents',
      '500',
    ]);
    expect(created).toEqual({
      member_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^sk_live_/),
    });

    const balance = await api('GET', '/v1/credits', { key: created.key });
    expect(balance.status).toBe(200);
    expect(balance.body).toMatchObject({ balance_cents: 500, balance_display: '$5.00' });

    const added = await admin(['credits:add', '--member', created.member_id, '--cents', '250']);
    expect(added).toMatchObject({ member_id: created.member_id, added_cents: 250, balance_cents: 750 });
    expect((await api('GET', '/v1/credits', { key: created.key })).body.balance_cents).toBe(750);

    const revoked = await admin(['key:revoke', '--key', created.key]);
    expect(revoked).toMatchObject({ revoked: true, table: 'member_api_keys' });
    const refused = await api('GET', '/v1/credits', { key: created.key });
    expect(refused.status).toBe(401);
    expect(refused.body.reason).toBe('key_revoked');
  });

  it('facility:create prints a facility key that authenticates', async () => {
    const created = await admin(['facility:create', '--name', 'CLI facility']);
    expect(created).toEqual({
      facility_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^sk_facility_/),
    });
    // A facility key passes authentication and is then refused by key kind, not as unknown.
    const res = await api('GET', '/v1/credits', { key: created.key });
    expect(res.status).toBe(403);
    const [row] = await app.deps.db.query(`SELECT status FROM facilities WHERE id = $1`, [created.facility_id]);
    expect(row.status).toBe('active');
  });

  it('fails with a message and a non-zero exit on a bad command line', async () => {
    await expect(
      cli('admin.ts', ['credits:add', '--member', 'x', '--cents', 'ten'], process.env.DATABASE_URL!),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('--cents must be an integer') });
  });

  it('migrates a brand-new database from empty', async () => {
    const url = new URL(process.env.DATABASE_URL!);
    const name = `postal_migrate_${randomBytes(4).toString('hex')}`;
    url.pathname = `/${name}`;
    const admin = new URL(url.toString());
    admin.pathname = '/postgres';
    try {
      const out = await cli('migrate.ts', [], url.toString());
      expect(out).toMatch(/^applied: .*Foundation1732200000000.*AgentLifecycle1732300000000/);
      const db = new Client({ connectionString: url.toString() });
      await db.connect();
      try {
        const { rows } = await db.query(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
        );
        expect(rows.map((r) => r.table_name)).toEqual(
          expect.arrayContaining([
            'members',
            'agents',
            'agent_credentials',
            'member_api_keys',
            'facilities',
            'facility_keys',
            'waitlist_leads',
            'instructions_versions',
            'instructions_proposals',
            'credits_ledger',
            'idempotency_records',
            'rate_limit_counters',
            'schema_migrations',
          ]),
        );
      } finally {
        await db.end();
      }
      expect(await cli('migrate.ts', [], url.toString())).toBe('up to date');
    } finally {
      const pg = new Client({ connectionString: admin.toString() });
      await pg.connect();
      await pg.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await pg.end();
    }
  });
});
