// Every statement that writes the `inbound_mail_items` and `inbound_mail_files` tables (the row
// types are InboundMailItemRow and InboundMailFileRow in rows.ts): intake, the extraction steps'
// status and results, and the thread link.
import type { InboundMailItemRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** Records a captured item unless its message was seen; params are its 14 values in the INSERT's order. */
export async function insertCapturedItem(tx: Queryable, params: unknown[]): Promise<Pick<InboundMailItemRow, 'id'>[]> {
  return sqlRows<Pick<InboundMailItemRow, 'id'>>(
    tx,
    `INSERT INTO inbound_mail_items (id, member_id, agent_id, alias_id, test_mode, status, capture_method, envelope_from, envelope_to,
                                         message_id, from_name, from_address, subject, body_text, headers)
         VALUES ($1, $2, $3, $4, $5, 'captured', $6, $7, $8, $9, $10, $11, $12, $13, $14)
         ON CONFLICT (alias_id, message_id) WHERE message_id IS NOT NULL DO NOTHING RETURNING id`,
    params,
  );
}

/** Records one stored file of an item; params are its 11 columns in the INSERT's order. */
export async function insertItemFile(tx: Queryable, params: unknown[]): Promise<void> {
  await sqlRun(
    tx,
    `INSERT INTO inbound_mail_files (id, inbound_mail_item_id, kind, position, filename, content_type, declared_content_type,
                                           content_type_mismatch, size_bytes, sha256, storage_key)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    params,
  );
}

/** Sets a file's extraction status (and its page count when known). */
export async function setFileStatus(
  tx: Queryable,
  fileId: string,
  status: string,
  pageCount?: number | null,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE inbound_mail_files SET extraction_status = $2, page_count = COALESCE($3, page_count) WHERE id = $1`,
    [fileId, status, pageCount ?? null],
  );
}

/** A captured item whose stored object does not match fails. */
export async function failCapturedItem(db: Queryable, itemId: string, reason: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE inbound_mail_items SET status = 'failed', failure_reason = $2, updated_at = now() WHERE id = $1 AND status = 'captured'`,
    [itemId, reason],
  );
}

/** captured -> stored, once its objects are checked. */
export async function markItemStored(db: Queryable, itemId: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE inbound_mail_items SET status = 'stored', updated_at = now() WHERE id = $1 AND status = 'captured'`,
    [itemId],
  );
}

/** Stores the analysis of an item; params are the item id then its 7 columns in the UPDATE's order. */
export async function setItemAnalysis(tx: Queryable, params: unknown[]): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE inbound_mail_items SET category = $2, suggested_action = $3, summary = $4, sender = $5, recipient = $6, deadlines = $7,
                  key_facts = $8, updated_at = now() WHERE id = $1`,
    params,
  );
}

/** Links the item to its postal thread. */
export async function setItemThread(tx: Queryable, itemId: string, threadId: string): Promise<void> {
  await sqlRun(tx, `UPDATE inbound_mail_items SET thread_id = $2, updated_at = now() WHERE id = $1`, [
    itemId,
    threadId,
  ]);
}

/** An extracted item's status (extracted or needs_review) and its review reasons (JSON). */
export async function setItemExtracted(db: Queryable, itemId: string, status: string, reasons: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE inbound_mail_items SET status = $2, review_reasons = $3, extracted_at = COALESCE(extracted_at, now()), updated_at = now()
          WHERE id = $1 AND status IN ('stored', 'extracted', 'needs_review')`,
    [itemId, status, reasons],
  );
}

/** An item not extracted yet fails with a reason. */
export async function failUnextractedItem(db: Queryable, itemId: string, reason: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE inbound_mail_items SET status = 'failed', failure_reason = $2, updated_at = now() WHERE id = $1 AND status IN ('captured', 'stored')`,
    [itemId, reason],
  );
}
