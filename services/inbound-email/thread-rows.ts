// Every statement that writes the `postal_threads` table (the row type is PostalThreadRow in
// rows.ts): the thread matcher opening or extending a thread, and the member's edits.
import type { PostalThreadRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** The keys an item adds to its thread, as the thread matcher derived them. */
export interface ThreadKeyArrays {
  senderKeys: string[];
  subjectKeys: string[];
  referenceKeys: string[];
}

/** Adds an item to a thread: merges its keys, takes its summary and reopens a waiting or closed thread. */
export async function extendThread(
  tx: Queryable,
  threadId: string,
  k: ThreadKeyArrays,
  summary: string | null,
  receivedAt: Date,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE postal_threads SET
                sender_keys = ARRAY(SELECT DISTINCT unnest(sender_keys || $2::text[])),
                subject_keys = ARRAY(SELECT DISTINCT unnest(subject_keys || $3::text[])),
                reference_keys = ARRAY(SELECT DISTINCT unnest(reference_keys || $4::text[])),
                summary = $5, last_event_at = GREATEST(last_event_at, $6),
                status = CASE WHEN status IN ('waiting', 'closed') THEN 'open' ELSE status END, updated_at = now()
              WHERE id = $1`,
    [threadId, k.senderKeys, k.subjectKeys, k.referenceKeys, summary, receivedAt],
  );
}

/** Opens a thread; params are the 10 columns in the INSERT's order. Returns its id. */
export async function insertThread(tx: Queryable, params: unknown[]): Promise<Pick<PostalThreadRow, 'id'>> {
  const [created] = await sqlRows<Pick<PostalThreadRow, 'id'>>(
    tx,
    `INSERT INTO postal_threads (member_id, agent_id, test_mode, title, category, summary, sender_keys, subject_keys, reference_keys, last_event_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
    params,
  );
  return created;
}

/** The member's edit of a thread's status and title. */
export async function updateThreadStatusTitle(db: Queryable, id: string, status: string, title: string): Promise<void> {
  await sqlRun(db, `UPDATE postal_threads SET status = $2, title = $3, updated_at = now() WHERE id = $1`, [
    id,
    status,
    title,
  ]);
}
