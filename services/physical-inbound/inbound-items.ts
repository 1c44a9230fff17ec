// Managed mailbox items: the physical inbound items of the caller's member as the
// managed-mailbox endpoints show them (list and literal search, detail, scans, pages and
// the activity timeline), who may see which item, and their quotes. The record itself is
// services/physical-inbound/item-records.ts; scans, the search index, workflow starts and
// the sandbox fixtures have their own modules beside it.
import { paginationWithNext } from '../../domain/shared/pagination';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { assertAgentOfMember } from '../shared/scoping';
import { errors } from '../../domain/shared/errors';
import { formatCents } from '../../domain/shared/money';
import { ItemKind, SEARCH_MODE } from '../../domain/physical-inbound/search';
import { CONTENT_TRUST } from '../../domain/physical-inbound/agent-inbox';
import { HandlingActionType, HandlingQuote, quoteHandling } from '../../domain/workflow-safe/handling';
import {
  Db,
  Environment,
  environmentOf,
  findItem,
  ITEM_COLUMNS,
  ItemColumns,
  ItemRow,
  toItemRow,
} from './item-records';
import type { InboundItemActivityRow } from './rows';
import { BundleRow, loadBundles, loadItemBundles, savedOcr, scanSummary, sourcePageView } from './scan-bundles';
import { literalQueryOrThrow, literalTermsSql, receivedRangeSql, runSearch } from './search-index';
import { ensureMemberSample } from './sandbox-fixtures';
import { sqlRows } from '../shared/sql';

// ---------------------------------------------------------------------------------------
// Visibility

/**
 * The managed-mailbox view: the key's environment, the caller's member, and for agent
 * keys the agent's own items plus the member sample. Anything else is 404.
 */
export function visibleToManagedMailbox(auth: AuthContext, item: ItemRow): boolean {
  if (item.member_id !== auth.memberId || item.environment !== environmentOf(auth)) return false;
  if (isAgentKey(auth)) return item.agent_id === auth.agentId || item.source_domain === 'member_sample';
  return true;
}

export async function loadManagedItem(deps: Deps, auth: AuthContext, id: string): Promise<ItemRow> {
  await ensureSampleForTestKey(deps, auth);
  const item = await findItem(deps.db, id);
  if (!item || !visibleToManagedMailbox(auth, item)) throw errors.notFound('Inbound item');
  return item;
}

/** Test keys always have their member's sample to read. */
async function ensureSampleForTestKey(deps: Deps, auth: AuthContext): Promise<void> {
  if (auth.testMode && auth.memberId) await ensureMemberSample(deps, auth.memberId);
}

// ---------------------------------------------------------------------------------------
// Quotes

export function quoteView(env: Environment, actionType: HandlingActionType, q: HandlingQuote) {
  const amount = env === 'test' ? 0 : q.amount_cents;
  return {
    action_type: actionType,
    amount_cents: amount,
    currency: 'usd' as const,
    display: formatCents(amount),
    handling_cents: q.handling_cents,
    postage_cents: q.postage_cents,
    ...(env === 'test' ? { estimated_live_cost_cents: q.amount_cents } : {}),
  };
}

export function openAndScanQuote(item: ItemRow) {
  return quoteView(item.environment, 'open_and_scan', quoteHandling({ kind: item.kind, actionType: 'open_and_scan' }));
}

// ---------------------------------------------------------------------------------------
// Managed mailbox endpoints

export interface ItemListQuery {
  q?: string;
  received_after?: Date;
  received_before?: Date;
  status?: string;
  kind?: ItemKind;
  agent_id?: string;
  limit: number;
  offset: number;
}

export interface OperationSummary {
  id: string;
  action_type: string;
  status: string;
  version: number;
}

async function openOperations(db: Db, itemIds: string[]): Promise<Map<string, OperationSummary>> {
  const rows = itemIds.length
    ? await sqlRows<OperationSummary & { item_id: string }>(
        db,
        `SELECT id, item_id, action_type, status, version FROM handling_operations
      WHERE item_id = ANY($1::uuid[]) AND status IN ('awaiting_member_approval','awaiting_facility','accepted')`,
        [itemIds],
      )
    : [];
  return new Map(
    rows.map((r) => [r.item_id, { id: r.id, action_type: r.action_type, status: r.status, version: r.version }]),
  );
}

export function managedItemView(item: ItemRow, bundles: BundleRow[], open: OperationSummary | null) {
  const latest = bundles[bundles.length - 1];
  const handleable = ['received', 'stored', 'held'].includes(item.status) && !open;
  return {
    object: 'inbound_item' as const,
    id: item.id,
    reference_code: item.reference_code,
    kind: item.kind,
    status: item.status,
    version: item.version,
    environment: item.environment,
    source_domain: item.source_domain,
    mailbox_id: item.mailbox_id,
    agent_id: item.agent_id,
    carrier: item.carrier,
    tracking_number: item.tracking_number,
    weight_oz: item.weight_oz,
    sender_name: item.sender_name,
    recipient_name: item.recipient_name,
    received_at: item.received_at.toISOString(),
    scan_count: bundles.length,
    latest_scan: latest ? scanSummary(latest) : null,
    open_operation: open,
    available_actions: handleable ? ['open_and_scan'] : [],
    quotes: { open_and_scan: openAndScanQuote(item) },
  };
}

export async function managedItemViews(db: Db, items: ItemRow[]) {
  const ids = items.map((i) => i.id);
  const [bundles, open] = await Promise.all([loadBundles(db, ids), openOperations(db, ids)]);
  return items.map((i) => managedItemView(i, bundles.get(i.id) ?? [], open.get(i.id) ?? null));
}

/**
 * The managed-mailbox agent scope on item `i`: agent keys see their own agent's items
 * and the member sample; member keys may narrow to one of their agents with agent_id.
 */
async function pushAgentScope(
  deps: Deps,
  auth: AuthContext,
  agentId: string | undefined,
  params: unknown[],
  where: string[],
): Promise<void> {
  if (isAgentKey(auth)) {
    params.push(auth.agentId);
    where.push(`(i.agent_id = $${params.length} OR i.source_domain = 'member_sample')`);
  } else if (agentId) {
    await assertAgentOfMember(deps, auth, agentId);
    params.push(agentId);
    where.push(`i.agent_id = $${params.length}`);
  }
}

/** GET /v1/inbound-items: literal AND search over the caller's items (search_inbound_items). */
export async function listInboundItems(deps: Deps, auth: AuthContext, query: ItemListQuery) {
  const literal = literalQueryOrThrow(query.q);
  await ensureSampleForTestKey(deps, auth);
  const params: unknown[] = [auth.memberId, environmentOf(auth)];
  const where = ['i.member_id = $1', 'i.environment = $2'];
  await pushAgentScope(deps, auth, query.agent_id, params, where);
  where.push(...receivedRangeSql({ after: query.received_after, before: query.received_before }, params));
  if (query.status) {
    params.push(query.status);
    where.push(`i.status = $${params.length}`);
  }
  if (query.kind) {
    params.push(query.kind);
    where.push(`i.kind = $${params.length}`);
  }
  if (literal) {
    const t = literalTermsSql(literal.terms, params.length + 1);
    params.push(...t.params);
    where.push(t.sql);
  }
  params.push(query.limit, query.offset);
  const sql = `SELECT ${ITEM_COLUMNS}, count(*) OVER () AS total FROM physical_inbound_items i WHERE ${where.join(' AND ')}
    ORDER BY i.received_at DESC, i.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`;
  type ListedRow = ItemColumns & { total: string };
  const rows = literal
    ? await runSearch(deps, (db) => sqlRows<ListedRow>(db, sql, params))
    : await sqlRows<ListedRow>(deps.db, sql, params);
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && query.offset > 0) {
    const countSql = `SELECT count(*) AS total FROM physical_inbound_items i WHERE ${where.join(' AND ')}`;
    const countParams = params.slice(0, -2);
    const [c] = literal
      ? await runSearch(deps, (db) => sqlRows<{ total: string }>(db, countSql, countParams))
      : await sqlRows<{ total: string }>(deps.db, countSql, countParams);
    total = Number(c.total);
  }
  const items = rows.map(toItemRow);
  return {
    items: await managedItemViews(deps.db, items),
    pagination: paginationWithNext(total, query.limit, query.offset),
    search: literal ? { query: literal.query, mode: SEARCH_MODE, terms: literal.terms } : null,
    filters: {
      received_after: query.received_after?.toISOString() ?? null,
      received_before: query.received_before?.toISOString() ?? null,
      status: query.status ?? null,
      kind: query.kind ?? null,
    },
  };
}

export async function getInboundItem(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadManagedItem(deps, auth, id);
  const [view] = await managedItemViews(deps.db, [item]);
  return { item: view };
}

/** GET /v1/inbound-items/{id}/scans: per-scan saved OCR; never queues extraction. */
export async function listInboundItemScans(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadManagedItem(deps, auth, id);
  const bundles = await loadItemBundles(deps.db, item.id);
  return {
    item_id: item.id,
    scans: bundles.map((b) => ({ ...scanSummary(b), ocr: savedOcr(b) })),
  };
}

/** GET /v1/inbound-items/{id}/pages: every stored page with its saved OCR (get_inbound_pages). */
export async function getInboundItemPages(
  deps: Deps,
  auth: AuthContext,
  id: string,
  page: { limit: number; offset: number },
) {
  const item = await loadManagedItem(deps, auth, id);
  const bundles = await loadItemBundles(deps.db, item.id);
  const pages = bundles.flatMap((b) => b.pages.map((p) => sourcePageView(b, p)));
  return {
    item_id: item.id,
    content_trust: CONTENT_TRUST,
    pages: pages.slice(page.offset, page.offset + page.limit),
    pagination: paginationWithNext(pages.length, page.limit, page.offset),
  };
}

export async function listInboundActivity(
  deps: Deps,
  auth: AuthContext,
  query: { item_id?: string; agent_id?: string; limit: number; offset: number },
) {
  await ensureSampleForTestKey(deps, auth);
  const params: unknown[] = [auth.memberId, environmentOf(auth)];
  const where = ['a.member_id = $1', 'a.environment = $2'];
  await pushAgentScope(deps, auth, query.agent_id, params, where);
  if (query.item_id) {
    params.push(query.item_id);
    where.push(`a.item_id = $${params.length}`);
  }
  params.push(query.limit, query.offset);
  const rows = await sqlRows<
    Pick<InboundItemActivityRow, 'id' | 'item_id' | 'agent_id' | 'kind' | 'detail' | 'created_at'> & { total: string }
  >(
    deps.db,
    `SELECT a.id, a.item_id, a.agent_id, a.kind, a.detail, a.created_at, count(*) OVER () AS total
       FROM inbound_item_activity a JOIN physical_inbound_items i ON i.id = a.item_id
      WHERE ${where.join(' AND ')} ORDER BY a.created_at DESC, a.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return {
    activity: rows.map((r) => ({
      id: r.id,
      item_id: r.item_id,
      agent_id: r.agent_id,
      kind: r.kind,
      detail: r.detail,
      created_at: r.created_at.toISOString(),
    })),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, query.limit, query.offset),
  };
}
