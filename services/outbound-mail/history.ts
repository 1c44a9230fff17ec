// A piece's history for its owner: the events recorded for it (each status change and
// step, oldest first) and every webhook delivery those events caused, with its outcome.
// The REST record carries the timestamps; this read adds the order, the payloads' words
// and the deliveries, which no REST read groups by piece.
import type { AuthContext } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { visibleMailRow } from './read';
import { sqlRows } from '../shared/sql';

export interface MailHistoryEvent {
  id: string;
  event_type: string;
  created_at: string;
  deliveries: Array<{
    id: string;
    target_type: string;
    target: string;
    status: string;
    attempts_count: number;
    last_status_code: number | null;
    last_error: string | null;
    delivered_at: string | null;
  }>;
}

interface EventRow {
  id: string;
  event_type: string;
  created_at: Date;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  target_type: string;
  target: string;
  status: string;
  attempts_count: number;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
}

/** 404 for a piece the caller may not see, as GET /v1/mail/{id}. */
export async function mailHistory(deps: Deps, auth: AuthContext, mailId: string): Promise<MailHistoryEvent[]> {
  const row = await visibleMailRow(deps, auth, mailId);
  const events = await sqlRows<EventRow>(
    deps.db,
    `SELECT id, event_type, created_at FROM events
      WHERE object_type = 'outbound_mail' AND object_id = $1 AND member_id = $2 ORDER BY created_at, id LIMIT 200`,
    [row.id, row.member_id],
  );
  const deliveries = events.length
    ? await sqlRows<DeliveryRow>(
        deps.db,
        `SELECT id, event_id, target_type, COALESCE(target_url, target) AS target, status, attempts_count, last_status_code, last_error, delivered_at
       FROM webhook_deliveries WHERE event_id = ANY($1::uuid[]) AND member_id = $2 ORDER BY created_at`,
        [events.map((e) => e.id), row.member_id],
      )
    : [];
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return events.map((e) => ({
    id: e.id,
    event_type: e.event_type,
    created_at: e.created_at.toISOString(),
    deliveries: deliveries
      .filter((d) => d.event_id === e.id)
      .map((d) => ({
        id: d.id,
        target_type: d.target_type,
        target: d.target,
        status: d.status,
        attempts_count: d.attempts_count,
        last_status_code: d.last_status_code,
        last_error: d.last_error,
        delivered_at: iso(d.delivered_at),
      })),
  }));
}
