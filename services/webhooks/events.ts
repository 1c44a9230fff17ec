// Business events (mail.*, batch.*, inbound.*). Producers call publishEvent from an
// activity after the state change it reports is committed (a new outbound piece: from its
// submission, after the commit); the event key makes a retried publish a no-op. Publishing records the event and fans it out to every
// subscribed receiver (legacy agent webhook, custom webhook endpoints) as delivery rows
// that the receivers' dispatcher workflows send, and records the owner's email
// notification of the events owners are told of (services/notifications/notices.ts).
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { createEventDeliveries, EventRow } from './deliveries';
import { wakeDispatchers } from './dispatch';
import { noticeOfEvent } from '../notifications/notices';
import { sqlRows } from '../shared/sql';
import { insertEvent } from './event-rows';

export interface DomainEvent {
  /** Unique per event, e.g. `mail:<id>:mail.ready`; a second publish with it is a no-op. */
  eventKey: string;
  memberId: string;
  agentId: string | null;
  eventType: string;
  testMode: boolean;
  objectType: 'outbound_mail' | 'batch' | 'inbound_item' | 'package' | 'handling' | 'webhook_test' | string;
  objectId: string;
  /** The event's payload as the receiver sees it (spec field names). */
  payload: Record<string, unknown>;
}

export interface PublishedEvent {
  id: string;
  created: boolean;
  /** When this call inserted the event: its stored row. */
  createdRow?: EventRow;
}

/** Records the event (once) inside `tx`. Returns its id either way. */
export async function recordEvent(tx: Pick<EntityManager, 'query'>, e: DomainEvent): Promise<PublishedEvent> {
  const environment = e.testMode ? 'test' : 'live';
  const inserted = await insertEvent(tx, {
    eventKey: e.eventKey,
    memberId: e.memberId,
    agentId: e.agentId,
    eventType: e.eventType,
    environment,
    objectType: e.objectType,
    objectId: e.objectId,
    payloadJson: JSON.stringify(e.payload),
  });
  if (inserted.length) {
    const { id, created_at } = inserted[0];
    return {
      id,
      created: true,
      createdRow: {
        id,
        member_id: e.memberId,
        agent_id: e.agentId,
        event_type: e.eventType,
        environment,
        payload: e.payload,
        created_at,
      },
    };
  }
  const [existing] = await sqlRows<Pick<EventRow, 'id'>>(tx, `SELECT id FROM events WHERE event_key = $1`, [
    e.eventKey,
  ]);
  return { id: existing.id, created: false };
}

/**
 * Records the event and starts its deliveries. Idempotent: safe to call again with the
 * same event key (deliveries not yet started are started; nothing is sent twice).
 */
export async function publishEvent(deps: Deps, e: DomainEvent): Promise<PublishedEvent> {
  // One INSERT ... ON CONFLICT is atomic on its own: no transaction round trips needed.
  const published = await recordEvent(deps.db, e);
  // A new event's row is known: the fan-out neither reads it back nor looks for earlier deliveries.
  await fanOut(deps, published.createdRow ?? published.id);
  // The owner is told of the events that wait for them or report a problem (once per event key).
  await noticeOfEvent(deps, e);
  return published;
}

/**
 * Creates one delivery per subscribed receiver of the event (the agent's legacy webhook;
 * every active custom endpoint of the member in the event's environment and scope) and
 * wakes the receivers' dispatchers. Idempotent: deliveries are unique per (event,
 * receiver), and waking a dispatcher with nothing due does nothing.
 */
export async function fanOut(deps: Deps, event: string | EventRow): Promise<void> {
  await wakeDispatchers(deps, await createEventDeliveries(deps, event));
}
