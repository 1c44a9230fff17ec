// Fixed windows (one minute; RATE_LIMIT_WINDOW_SECONDS in tests) counted in Postgres, so every
// API process shares one budget.
import type { Deps } from './deps';
import { sqlRows, sqlRun } from './sql';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
  /** The window the limit counts in (60 unless a test shortens it). */
  windowSeconds: number;
}

export async function consumeRateLimit(deps: Deps, bucket: string, limit: number): Promise<RateLimitResult> {
  const windowSeconds = deps.config.rateLimitWindowSeconds;
  const [row] = await sqlRows<{ count: number; reset_in: number }>(
    deps.db,
    `INSERT INTO rate_limit_counters (bucket, window_start, count)
     VALUES ($1, to_timestamp(floor(EXTRACT(EPOCH FROM now()) / $2::int) * $2::int), 1)
     ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
     RETURNING count, EXTRACT(EPOCH FROM (window_start + make_interval(secs => $2::int) - now()))::float AS reset_in`,
    [bucket, windowSeconds],
  );
  // Old windows are useless; trim them now and then rather than on every request.
  if (Math.random() < 0.01) {
    void sqlRun(deps.db, `DELETE FROM rate_limit_counters WHERE window_start < now() - interval '5 minutes'`).catch(
      () => undefined,
    );
  }
  const count = Number(row.count);
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil(Number(row.reset_in))),
    windowSeconds,
  };
}
