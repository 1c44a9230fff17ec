// The literal search index of physical inbound items (inbound_search_fields: normalised
// fields of the record, its scans and saved OCR) and the SQL pieces of the searches that
// read it: literal AND terms, receipt date ranges, and a statement timeout that turns any
// failure into a retryable 503 rather than an unfiltered list.
import type { Deps } from '../shared/deps';
import { errors } from '../../domain/shared/errors';
import { parseLiteralQuery, searchFields } from '../../domain/physical-inbound/search';
import { Db, findItem } from './item-records';
import { loadItemBundles } from './scan-bundles';
import { sqlRows, sqlRun } from '../shared/sql';

/** Rewrites the item's normalised search fields from its current record, scans and saved OCR. */
export async function refreshSearchFields(db: Db, itemId: string): Promise<void> {
  const item = await findItem(db, itemId);
  if (!item) return;
  const requests = await sqlRows<{ id: string }>(db, `SELECT id FROM scan_requests WHERE item_id = $1`, [itemId]);
  const bundles = await loadItemBundles(db, itemId);
  const pages = bundles.flatMap((b) => b.pages);
  const fields = searchFields({
    itemId: item.id,
    referenceCode: item.reference_code,
    kind: item.kind,
    receivedAt: item.received_at,
    requestIds: requests.map((r) => r.id),
    bundleIds: bundles.map((b) => b.id),
    pageIds: pages.map((p) => p.id),
    recipientName: item.recipient_name,
    recipientEmail: item.recipient_email,
    ocrTexts: pages
      .filter((p) => (p.ocr_status === 'ready' || p.ocr_status === 'needs_review') && p.ocr_text)
      .map((p) => p.ocr_text!),
  });
  await sqlRun(db, `DELETE FROM inbound_search_fields WHERE item_id = $1`, [itemId]);
  if (fields.length) {
    await sqlRun(
      db,
      `INSERT INTO inbound_search_fields (item_id, source, text) SELECT $1, s, t FROM unnest($2::text[], $3::text[]) AS x(s, t)`,
      [itemId, fields.map((f) => f.source), fields.map((f) => f.text)],
    );
  }
}

/**
 * SQL for "every term is a literal substring of some field of item `alias`". strpos
 * compares literally, so %, _ and quotes need no escaping.
 */
export function literalTermsSql(terms: string[], firstParam: number, alias = 'i'): { sql: string; params: string[] } {
  const sql = terms
    .map(
      (_, n) =>
        `EXISTS (SELECT 1 FROM inbound_search_fields f WHERE f.item_id = ${alias}.id AND strpos(f.text, $${firstParam + n}) > 0)`,
    )
    .join(' AND ');
  return { sql, params: terms };
}

const SEARCH_TIMEOUT_MS = 5000;

/**
 * Runs a search query under a statement timeout. Any failure is a retryable 503: a
 * search never falls back to an unfiltered list.
 */
export async function runSearch<T>(deps: Deps, fn: (db: Db) => Promise<T>): Promise<T> {
  try {
    return await deps.db.transaction(async (tx) => {
      await sqlRun(tx, `SET LOCAL statement_timeout = ${SEARCH_TIMEOUT_MS}`);
      return fn(tx);
    });
  } catch (err) {
    deps.log.warn({ err }, 'inbound search failed');
    throw errors.unavailable(
      'SEARCH_UNAVAILABLE',
      'Search is unavailable right now; no unfiltered list is returned instead.',
    );
  }
}

/** Parses q (literal AND terms) or answers 400 with the field. */
export function literalQueryOrThrow(q: string | undefined) {
  const parsed = parseLiteralQuery(q);
  if (!parsed.ok) throw errors.validation([parsed.error]);
  return parsed.value;
}

/** received_after (inclusive) and received_before (exclusive) as SQL conditions. */
export function receivedRangeSql(range: { after?: Date; before?: Date }, params: unknown[], alias = 'i'): string[] {
  const conditions: string[] = [];
  if (range.after) {
    params.push(range.after);
    conditions.push(`${alias}.received_at >= $${params.length}`);
  }
  if (range.before) {
    params.push(range.before);
    conditions.push(`${alias}.received_at < $${params.length}`);
  }
  return conditions;
}
