// Fixed one-minute windows counted in Postgres, so every API process shares one budget.
import type { Deps } from './deps';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export async function consumeRateLimit(deps: Deps, bucket: string, limit: number): Promise<RateLimitResult> {
  const [row] = await deps.db.query(
    `INSERT INTO rate_limit_counters (bucket, window_start, count)
     VALUES ($1, date_trunc('minute', now()), 1)
     ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
     RETURNING count, EXTRACT(EPOCH FROM (window_start + interval '1 minute' - now()))::float AS reset_in`,
    [bucket],
  );
  // Old windows are useless; trim them now and then rather than on every request.
  if (Math.random() < 0.01) {
    void deps.db
      .query(`DELETE FROM rate_limit_counters WHERE window_start < now() - interval '5 minutes'`)
      .catch(() => undefined);
  }
  const count = Number(row.count);
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil(Number(row.reset_in))),
  };
}
