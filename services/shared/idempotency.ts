// Idempotency-Key handling for every mutating endpoint: the first answer to a key is
// stored and replayed to retries with the same body; the same key with another body is
// refused; a concurrent duplicate waits for the first to finish. Records are kept 30 days.
import type { Deps } from './deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, errors } from '../../domain/shared/errors';
import { sha256Hex } from '../../domain/accounts/keys';
import { sqlAffected, sqlRows, sqlRun } from './sql';

export interface IdempotentResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const RETENTION_DAYS = 30;
const WAIT_MS = 15000;
/**
 * An in-progress record older than this belongs to a request that died (process killed, or
 * its database connection dropped so the record could not be released): a retry takes it
 * over instead of being refused with IDEMPOTENCY_REQUEST_IN_PROGRESS for 30 days.
 */
const ABANDONED_AFTER_SECONDS = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function requestFingerprint(parts: unknown): string {
  return sha256Hex(JSON.stringify(parts));
}

export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** For routes whose Idempotency-Key is mandatory. */
export function requireIdempotencyKey(key: string | undefined): string {
  if (!key)
    throw errors.validation(
      [{ path: 'headers.idempotency-key', message: 'Idempotency-Key is required on this request' }],
      'Idempotency-Key header is required',
    );
  return key;
}

/**
 * Runs `fn` once per (caller, operation, key). Without a key, runs it directly.
 * Results with status >= 500 are not stored, so a retry runs again.
 */
export async function runIdempotent(
  deps: Deps,
  auth: AuthContext,
  opts: { operation: string; key: string | undefined; fingerprint: string },
  fn: () => Promise<IdempotentResult>,
): Promise<IdempotentResult & { replayed?: boolean }> {
  if (opts.key === undefined) return fn();
  if (!IDEMPOTENCY_KEY_PATTERN.test(opts.key)) {
    throw errors.validation([
      { path: 'headers.idempotency-key', message: 'Idempotency-Key must be 1-255 visible ASCII characters' },
    ]);
  }
  let inserted = false;
  try {
    const rows = await sqlRows<{ id: string }>(
      deps.db,
      `INSERT INTO idempotency_records (owner_key, idempotency_key, operation, request_hash, expires_at)
       VALUES ($1, $2, $3, $4, now() + ($5 || ' days')::interval)
       ON CONFLICT (owner_key, operation, idempotency_key) DO NOTHING RETURNING id`,
      [auth.ownerKey, opts.key, opts.operation, opts.fingerprint, String(RETENTION_DAYS)],
    );
    inserted = rows.length === 1;
  } catch {
    throw errors.unavailable(
      'IDEMPOTENCY_UNAVAILABLE',
      'Duplicate protection is unavailable right now; no credits were spent.',
    );
  }

  if (!inserted) {
    const replayed = await replay(deps, auth, opts);
    if (replayed !== 'claimed') return replayed;
  }

  let result: IdempotentResult;
  try {
    result = await fn();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) {
      result = { status: err.status, body: err.toBody() };
      await complete(deps, auth, opts, result);
      throw err;
    }
    await release(deps, auth, opts);
    throw err;
  }
  if (result.status >= 500) await release(deps, auth, opts);
  else await complete(deps, auth, opts, result);
  return result;
}

async function complete(
  deps: Deps,
  auth: AuthContext,
  opts: { operation: string; key?: string },
  result: IdempotentResult,
) {
  await sqlRun(
    deps.db,
    `UPDATE idempotency_records SET state = 'completed', response_status = $4, response_body = $5
      WHERE owner_key = $1 AND operation = $2 AND idempotency_key = $3`,
    [auth.ownerKey, opts.operation, opts.key, result.status, JSON.stringify(result.body ?? null)],
  );
}

async function release(deps: Deps, auth: AuthContext, opts: { operation: string; key?: string }) {
  await sqlRun(
    deps.db,
    `DELETE FROM idempotency_records WHERE owner_key = $1 AND operation = $2 AND idempotency_key = $3 AND state = 'in_progress'`,
    [auth.ownerKey, opts.operation, opts.key],
  ).catch(() => undefined);
}

/** The stored answer; or 'claimed' when the first request was abandoned and this one takes over its record. */
async function replay(deps: Deps, auth: AuthContext, opts: { operation: string; key?: string; fingerprint: string }) {
  const start = Date.now();
  for (;;) {
    const claimed = await sqlAffected(
      deps.db,
      `UPDATE idempotency_records SET created_at = now()
        WHERE owner_key = $1 AND operation = $2 AND idempotency_key = $3 AND request_hash = $4
          AND state = 'in_progress' AND created_at < now() - ($5 || ' seconds')::interval
        RETURNING id`,
      [auth.ownerKey, opts.operation, opts.key, opts.fingerprint, String(ABANDONED_AFTER_SECONDS)],
    );
    if (claimed === 1) return 'claimed' as const;
    const [row] = await sqlRows<{
      request_hash: string;
      state: 'in_progress' | 'completed';
      response_status: number | null;
      response_body: unknown;
    }>(
      deps.db,
      `SELECT request_hash, state, response_status, response_body FROM idempotency_records
        WHERE owner_key = $1 AND operation = $2 AND idempotency_key = $3`,
      [auth.ownerKey, opts.operation, opts.key],
    );
    if (!row) {
      throw errors.conflict(
        'IDEMPOTENCY_REQUEST_RETRY',
        'The first request with this Idempotency-Key failed; send it again.',
        {
          retryable: true,
          suggestedAction: 'Send the same request again with the same Idempotency-Key.',
        },
      );
    }
    if (row.request_hash !== opts.fingerprint) {
      throw errors.unprocessable(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was already used with a different request body.',
        {
          suggestedAction: 'Use a new Idempotency-Key for a different request.',
        },
      );
    }
    if (row.state === 'completed') {
      return {
        status: row.response_status as number,
        body: row.response_body,
        replayed: true,
        headers: { 'Idempotent-Replayed': 'true' },
      };
    }
    if (Date.now() - start > WAIT_MS) {
      throw errors.conflict(
        'IDEMPOTENCY_REQUEST_IN_PROGRESS',
        'A request with this Idempotency-Key is still in progress.',
        {
          retryable: true,
          suggestedAction:
            "Retry the same request in a few seconds; it answers with the first request's result once that finishes.",
        },
      );
    }
    await sleep(100);
  }
}
