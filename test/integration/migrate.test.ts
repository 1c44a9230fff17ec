// Migrations run by several processes at once (two deploy jobs, `npm run admin` during a
// deploy): every run succeeds and each migration is applied exactly once.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { dropDatabase, ensureDatabase, migrate } from '../../scripts/stack';

describe('migrations run concurrently', () => {
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `${url.pathname}_migrate_${randomBytes(3).toString('hex')}`;
  const databaseUrl = url.toString();
  afterAll(() => dropDatabase(databaseUrl));

  it('apply each migration once; the later runs find nothing pending', async () => {
    await ensureDatabase(databaseUrl);
    const runs = await Promise.allSettled([migrate(databaseUrl), migrate(databaseUrl), migrate(databaseUrl)]);
    expect(runs.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const applied = runs.map((r) => (r as PromiseFulfilledResult<string[]>).value);
    const counts = applied.map((names) => names.length).sort((a, b) => a - b);
    expect(counts.slice(0, 2)).toEqual([0, 0]);
    expect(counts[2]).toBeGreaterThan(0);

    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name`);
      expect(rows).toHaveLength(counts[2]);
      expect(rows.every((r) => r.n === 1)).toBe(true);
    } finally {
      await db.end();
    }
  });
});
