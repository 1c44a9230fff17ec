// The `webhook_deliveries` table: its row type, and every statement that writes it. Other
// modules read the table where they need to, but change it only through these functions:
// queueing a delivery, the dispatcher's lease, recording an attempt, replay and pruning.
import type { DeliveryStatus } from '../../workflows/webhooks/contracts';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** One row of `webhook_deliveries`, as node-postgres returns it (the columns services read). */
export interface DeliveryRow {
  id: string;
  event_id: string;
  target: string;
  target_type: 'agent_webhook' | 'endpoint' | 'a2a_push';
  endpoint_id: string | null;
  member_id: string;
  agent_id: string | null;
  event_type: string;
  environment: 'live' | 'test';
  kind: 'event' | 'test' | 'verification';
  status: DeliveryStatus;
  series: number;
  max_attempts: number;
  attempts_count: number;
  last_status_code: number | null;
  last_error: string | null;
  challenge: string | null;
  target_url: string | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A delivery a dispatcher pass leased: what its attempt needs. */
export interface DueDelivery {
  id: string;
  series: number;
  series_attempts: number;
  max_attempts: number;
  internal_errors: number;
}

/** Queues an event's delivery to one target (once per event and target). */
export async function insertEventDelivery(
  db: Queryable,
  d: {
    eventId: string;
    target: string;
    targetType: string;
    endpointId: string | null;
    memberId: string;
    agentId: string | null;
    eventType: string;
    environment: string;
    maxAttempts: number;
  },
): Promise<void> {
  await sqlRun(
    db,
    `INSERT INTO webhook_deliveries (event_id, target, target_type, endpoint_id, member_id, agent_id, event_type, environment, kind, max_attempts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'event', $9) ON CONFLICT (event_id, target) DO NOTHING`,
    [d.eventId, d.target, d.targetType, d.endpointId, d.memberId, d.agentId, d.eventType, d.environment, d.maxAttempts],
  );
}

/** Inserts a one-attempt delivery of a synthetic event (test or verification). */
export async function insertSyntheticDelivery(
  db: Queryable,
  insert: {
    eventId: string;
    target: string;
    targetType: 'agent_webhook' | 'endpoint';
    endpointId: string | null;
    memberId: string;
    agentId: string | null;
    eventType: string;
    environment: 'live' | 'test';
    kind: 'test' | 'verification';
    challenge?: string;
    targetUrl?: string;
  },
): Promise<DeliveryRow> {
  const [delivery] = await sqlRows<DeliveryRow>(
    db,
    `INSERT INTO webhook_deliveries (event_id, target, target_type, endpoint_id, member_id, agent_id, event_type, environment, kind,
                                     max_attempts, challenge, target_url)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11) RETURNING *`,
    [
      insert.eventId,
      insert.target,
      insert.targetType,
      insert.endpointId,
      insert.memberId,
      insert.agentId,
      insert.eventType,
      insert.environment,
      insert.kind,
      insert.challenge ?? null,
      insert.targetUrl ?? null,
    ],
  );
  return delivery;
}

/** Leases up to `limit` due event deliveries of a dispatcher for `leaseSeconds`. */
export async function leaseDueDeliveries(
  db: Queryable,
  target: string,
  environment: string,
  limit: number,
  leaseSeconds: number,
): Promise<DueDelivery[]> {
  return sqlRows<DueDelivery>(
    db,
    `UPDATE webhook_deliveries SET next_attempt_at = now() + make_interval(secs => $4)
        WHERE id IN (
          SELECT id FROM webhook_deliveries
           WHERE target = $1 AND environment = $2 AND kind = 'event' AND status IN ('queued','processing') AND next_attempt_at <= now()
           ORDER BY next_attempt_at, created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING id, series, series_attempts, max_attempts, internal_errors`,
    [target, environment, limit, leaseSeconds],
  );
}

/** An attempt failed inside the service: counted, and the series fails at `maxInternalErrors`. */
export async function recordDeliveryInternalError(
  db: Queryable,
  d: Pick<DueDelivery, 'id' | 'series'>,
  message: string,
  maxInternalErrors: number,
  retryInMs: number,
): Promise<void> {
  await sqlRun(
    db,
    `UPDATE webhook_deliveries
        SET internal_errors = internal_errors + 1, last_error = $3, updated_at = now(),
            status = CASE WHEN internal_errors + 1 >= $4 THEN 'failed' ELSE status END,
            next_attempt_at = now() + make_interval(secs => $5::double precision / 1000)
      WHERE id = $1 AND series = $2 AND status IN ('queued','processing')`,
    [d.id, d.series, message, maxInternalErrors, retryInMs],
  );
}

/** The delivery's target is gone or refused: the series fails with `reason` (unless delivered). */
export async function stopDelivery(db: Queryable, id: string, reason: string, series: number): Promise<void> {
  await sqlRun(
    db,
    `UPDATE webhook_deliveries SET status = 'failed', last_error = $2, updated_at = now() WHERE id = $1 AND series = $3 AND status <> 'delivered'`,
    [id, reason, series],
  );
}

/** An attempt is about to be sent. */
export async function markDeliveryProcessing(db: Queryable, id: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE webhook_deliveries SET status = 'processing', updated_at = now() WHERE id = $1 AND status IN ('queued','processing')`,
    [id],
  );
}

/** Records an attempt's result: the new status, and when a queued delivery is due again. */
export async function recordDeliveryAttempt(
  tx: Queryable,
  id: string,
  status: DeliveryStatus,
  statusCode: number | null,
  lastError: string | null,
  seriesAttempts: number,
  retryInMs: number,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE webhook_deliveries
          SET status = $2, attempts_count = attempts_count + 1, series_attempts = $5, last_status_code = $3, last_error = $4,
              next_attempt_at = now() + make_interval(secs => $6::double precision / 1000),
              delivered_at = CASE WHEN $2 = 'delivered' THEN now() ELSE delivered_at END, updated_at = now()
        WHERE id = $1`,
    [id, status, statusCode, lastError, seriesAttempts, retryInMs],
  );
}

/** The series' attempt activity itself kept failing: the series fails with `error`. */
export async function failDeliverySeries(db: Queryable, id: string, series: number, error: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE webhook_deliveries SET status = 'failed', last_error = $3, updated_at = now()
      WHERE id = $1 AND series = $2 AND status IN ('queued','processing')`,
    [id, series, error],
  );
}

/** Starts a new series of a failed delivery; undefined when a replay already took it. */
export async function requeueFailedDelivery(db: Queryable, id: string): Promise<DeliveryRow | undefined> {
  const [queued] = await sqlRows<DeliveryRow>(
    db,
    `UPDATE webhook_deliveries
        SET status = 'queued', series = series + 1, series_attempts = 0, internal_errors = 0, next_attempt_at = now(), last_error = NULL, updated_at = now()
      WHERE id = $1 AND status = 'failed' RETURNING *`,
    [id],
  );
  return queued;
}

/** Deletes up to `limit` finished deliveries older than `retentionDays`; their ids. */
export async function deleteOldDeliveries(
  db: Queryable,
  retentionDays: number,
  limit: number,
): Promise<{ id: string }[]> {
  return sqlRows<{ id: string }>(
    db,
    `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries
          WHERE created_at < now() - make_interval(days => $1) AND status IN ('delivered','failed') LIMIT $2)
       RETURNING id`,
    [retentionDays, limit],
  );
}
