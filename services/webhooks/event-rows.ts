// Every statement that writes the `events` table (the event log): recording an event once,
// and pruning old synthetic (test and verification) events.
import { sqlRows, type Queryable } from '../shared/sql';

/** Records an event once per event key; the new row's id and time, or nothing when the key exists. */
export async function insertEvent(
  tx: Queryable,
  e: {
    eventKey: string;
    memberId: string;
    agentId: string | null;
    eventType: string;
    environment: 'live' | 'test';
    objectType: string;
    objectId: string;
    payloadJson: string;
  },
): Promise<{ id: string; created_at: Date }[]> {
  return sqlRows<{ id: string; created_at: Date }>(
    tx,
    `INSERT INTO events (event_key, member_id, agent_id, event_type, environment, object_type, object_id, payload)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (event_key) DO NOTHING RETURNING id, created_at`,
    [e.eventKey, e.memberId, e.agentId, e.eventType, e.environment, e.objectType, e.objectId, e.payloadJson],
  );
}

/** Deletes up to `limit` synthetic events older than `retentionDays` that no delivery refers to; their ids. */
export async function deleteOldSyntheticEvents(
  db: Queryable,
  retentionDays: number,
  limit: number,
): Promise<{ id: string }[]> {
  return sqlRows<{ id: string }>(
    db,
    `DELETE FROM events WHERE id IN (
         SELECT e.id FROM events e
          WHERE e.object_type IN ('webhook_test','webhook_endpoint') AND e.created_at < now() - make_interval(days => $1)
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id) LIMIT $2)
       RETURNING id`,
    [retentionDays, limit],
  );
}
