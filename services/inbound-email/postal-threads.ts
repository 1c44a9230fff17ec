// Postal threads: the conversation an inbound mail item belongs to (grouped by sender,
// subject and reply references), listed by latest event, with an optional timeline of its
// inbound items and the outbound replies that answer them; the caller may retitle or
// close a thread.
import { pagination } from '../../domain/shared/pagination';
import type { AuthContext } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { canSee } from '../shared/scoping';
import { errors } from '../../domain/shared/errors';
import { iso, ownerFilter } from './caller-scope';
import type { InboundMailItemRow, PostalThreadRow } from './rows';
import { linkedOutbound } from './inbound-context';
import { sqlRows } from '../shared/sql';
import { updateThreadStatusTitle } from './thread-rows';

export interface ListThreadsInput {
  limit: number;
  offset: number;
  category?: string;
  status?: string;
  agent_id?: string;
  include: Array<'events'>;
}

/** A thread as THREAD_SELECT reads it: its row and when its latest event (inbound or a reply) happened. */
type ThreadRead = PostalThreadRow & { latest_event_at: Date };

/** An item in a thread's timeline (thread_id is set: the query asks for the thread's items). */
type ThreadItem = Pick<InboundMailItemRow, 'id' | 'status' | 'category' | 'subject' | 'summary' | 'received_at'> & {
  thread_id: string;
};

const THREAD_SELECT = `SELECT t.*, GREATEST(t.last_event_at, (SELECT max(o.created_at) FROM outbound_mail o
    WHERE o.member_id = t.member_id AND o.test_mode = t.test_mode
      AND (o.postal_mail_thread_id = t.id OR o.inbound_capture_id IN (SELECT i.id FROM inbound_mail_items i WHERE i.thread_id = t.id)))) AS latest_event_at
  FROM postal_threads t`;

export async function listPostalThreads(deps: Deps, auth: AuthContext, input: ListThreadsInput) {
  const params: unknown[] = [];
  let where = await ownerFilter(deps, auth, 't', input.agent_id, params);
  for (const [column, value] of [
    ['category', input.category],
    ['status', input.status],
  ] as const) {
    if (value === undefined) continue;
    params.push(value);
    where += ` AND t.${column} = $${params.length}`;
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM postal_threads t WHERE ${where}`,
    params,
  );
  const rows = await sqlRows<ThreadRead>(
    deps.db,
    `${THREAD_SELECT} WHERE ${where} ORDER BY latest_event_at DESC, t.id LIMIT ${input.limit} OFFSET ${input.offset}`,
    params,
  );
  return {
    threads: await shapeThreads(deps, auth, rows, input.include.includes('events')),
    pagination: pagination(total, input.limit, input.offset),
  };
}

async function loadThread(deps: Deps, auth: AuthContext, id: string): Promise<ThreadRead> {
  const [row] = await sqlRows<ThreadRead>(deps.db, `${THREAD_SELECT} WHERE t.id = $1`, [id]);
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) {
    throw errors.notFound('Postal thread');
  }
  return row;
}

export async function getPostalThread(deps: Deps, auth: AuthContext, input: { id: string; include: Array<'events'> }) {
  const [thread] = await shapeThreads(
    deps,
    auth,
    [await loadThread(deps, auth, input.id)],
    input.include.includes('events'),
  );
  return thread;
}

export async function updatePostalThread(
  deps: Deps,
  auth: AuthContext,
  id: string,
  input: { status?: string; title?: string },
) {
  const current = await loadThread(deps, auth, id);
  await updateThreadStatusTitle(deps.db, id, input.status ?? current.status, input.title ?? current.title);
  return getPostalThread(deps, auth, { id, include: [] });
}

async function shapeThreads(deps: Deps, auth: AuthContext, rows: ThreadRead[], withEvents: boolean) {
  const ids = rows.map((r) => r.id);
  let events = new Map<string, unknown[]>();
  if (withEvents && ids.length) {
    const items = await sqlRows<ThreadItem>(
      deps.db,
      `SELECT id, thread_id, status, category, subject, summary, received_at FROM inbound_mail_items WHERE thread_id = ANY($1::uuid[]) ORDER BY received_at`,
      [ids],
    );
    const itemThread = new Map<string | null, string>(items.map((i) => [i.id, i.thread_id]));
    const outbound = await linkedOutbound(
      deps,
      auth,
      items.map((i) => i.id),
      ids,
    );
    const all: Array<{ threadId: string; at: Date; event: Record<string, unknown> }> = [
      ...items.map((i) => ({
        threadId: i.thread_id,
        at: i.received_at,
        event: {
          type: 'inbound_mail_item',
          inbound_mail_item_id: i.id,
          occurred_at: iso(i.received_at),
          status: i.status,
          category: i.category,
          summary: i.summary ?? i.subject,
        },
      })),
      ...outbound.map((o) => ({
        threadId: (o.postal_mail_thread_id && ids.includes(o.postal_mail_thread_id)
          ? o.postal_mail_thread_id
          : itemThread.get(o.inbound_capture_id)) as string,
        at: o.created_at,
        event: {
          type: 'outbound_mail',
          outbound_mail_id: o.id,
          occurred_at: iso(o.created_at),
          status: o.status,
          inbound_capture_id: o.inbound_capture_id,
          summary: `Reply to ${o.recipient_name ?? o.recipient_company}`,
        },
      })),
    ];
    all.sort((a, b) => new Date(a.at).getTime() - new Date(b.at).getTime());
    events = new Map(ids.map((id) => [id, all.filter((e) => e.threadId === id).map((e) => e.event)]));
  }
  return rows.map((r) => ({
    id: r.id,
    object: 'postal_mail_thread',
    title: r.title,
    category: r.category,
    status: r.status,
    summary: r.summary,
    last_event_at: iso(r.latest_event_at ?? r.last_event_at),
    ...(withEvents ? { events: events.get(r.id) ?? [] } : {}),
  }));
}
