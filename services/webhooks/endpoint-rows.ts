// The `webhook_endpoints` table: its row type, and every statement that writes it: an
// endpoint's creation, edits, secret rotation and deletion, and what a delivery's outcome
// does to it (verified, failures counted, paused).
import type { EndpointEnvironment } from '../../domain/webhooks/events';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** One row of `webhook_endpoints` (the columns services read; never the secrets). */
export interface EndpointRow {
  id: string;
  member_id: string;
  agent_id: string | null;
  name: string;
  url: string;
  environment: EndpointEnvironment;
  status: 'pending' | 'active' | 'paused';
  paused_reason: string | null;
  event_types: string[];
  secret_prefix: string;
  previous_secret_expires_at: Date | null;
  consecutive_failures: number;
  verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Creates an endpoint (pending until verified). */
export async function insertEndpoint(
  tx: Queryable,
  e: {
    memberId: string | null;
    agentId: string | null;
    name: string;
    url: string;
    environment: EndpointEnvironment;
    eventTypes: string[];
    secretEnc: string;
    secretPrefix: string;
  },
): Promise<EndpointRow> {
  const [row] = await sqlRows<EndpointRow>(
    tx,
    `INSERT INTO webhook_endpoints (member_id, agent_id, name, url, environment, event_types, secret_enc, secret_prefix)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [e.memberId, e.agentId, e.name, e.url, e.environment, e.eventTypes, e.secretEnc, e.secretPrefix],
  );
  return row;
}

/** Edits an endpoint; a changed URL pauses an active one until it is verified again. */
export async function updateEndpoint(
  tx: Queryable,
  id: string,
  name: string,
  url: string,
  eventTypes: string[],
  urlChanged: boolean,
): Promise<EndpointRow> {
  const [row] = await sqlRows<EndpointRow>(
    tx,
    `UPDATE webhook_endpoints
          SET name = $2, url = $3, event_types = $4,
              status = CASE WHEN $5 AND status = 'active' THEN 'paused' ELSE status END,
              paused_reason = CASE WHEN $5 AND status <> 'pending' THEN 'url_changed' ELSE paused_reason END,
              updated_at = now()
        WHERE id = $1 RETURNING *`,
    [id, name, url, eventTypes, urlChanged],
  );
  return row;
}

/** Deletes the endpoint (its rules and deliveries go with it). */
export async function deleteEndpoint(db: Queryable, id: string): Promise<void> {
  await sqlRun(db, `DELETE FROM webhook_endpoints WHERE id = $1`, [id]);
}

/** A new signing secret; the old one keeps signing for `windowHours`. */
export async function rotateEndpointSecret(
  tx: Queryable,
  id: string,
  secretEnc: string,
  secretPrefix: string,
  windowHours: number,
): Promise<EndpointRow> {
  const [row] = await sqlRows<EndpointRow>(
    tx,
    `UPDATE webhook_endpoints
          SET previous_secret_enc = secret_enc, previous_secret_expires_at = now() + make_interval(hours => $4),
              secret_enc = $2, secret_prefix = $3, updated_at = now()
        WHERE id = $1 RETURNING *`,
    [id, secretEnc, secretPrefix, windowHours],
  );
  return row;
}

/** A verification delivered to the endpoint's current URL: it is active. */
export async function markEndpointVerified(
  tx: Queryable,
  endpointId: string | null,
  url: string | null,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE webhook_endpoints SET status = 'active', paused_reason = NULL, consecutive_failures = 0, verified_at = now(),
                  activated_at = CASE WHEN status = 'active' THEN activated_at ELSE now() END, updated_at = now()
            WHERE id = $1 AND url = $2`,
    [endpointId, url],
  );
}

/** A delivery succeeded: the failure count starts again. */
export async function resetEndpointFailures(tx: Queryable, endpointId: string | null): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = $1 AND consecutive_failures <> 0`,
    [endpointId],
  );
}

/** An event delivery failed: counted, and an active endpoint pauses at `failuresToPause` (no row if the endpoint is gone). */
export async function countEndpointFailure(
  tx: Queryable,
  endpointId: string | null,
  failuresToPause: number,
): Promise<{ status: string; paused_reason: string | null; consecutive_failures: number }> {
  const [ep] = await sqlRows<{ status: string; paused_reason: string | null; consecutive_failures: number }>(
    tx,
    `UPDATE webhook_endpoints
              SET consecutive_failures = consecutive_failures + 1,
                  status = CASE WHEN status = 'active' AND consecutive_failures + 1 >= $2 THEN 'paused' ELSE status END,
                  paused_reason = CASE WHEN status = 'active' AND consecutive_failures + 1 >= $2 THEN 'consecutive_failures' ELSE paused_reason END,
                  updated_at = now()
            WHERE id = $1 RETURNING status, paused_reason, consecutive_failures`,
    [endpointId, failuresToPause],
  );
  return ep;
}
