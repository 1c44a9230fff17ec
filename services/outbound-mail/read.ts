// Reading outbound mail for REST, MCP and the console: one piece the caller may see (the
// check every other use-case on a piece starts with), its record, a fresh URL of its
// stored document, and the list with search, status and date filters.
import { pagination } from '../../domain/shared/pagination';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { errors } from '../../domain/shared/errors';
import { MailStatusName, parseCreatedBound } from '../../domain/workflow-safe/mail-rules';
import { canSee, resolveAgentFilter } from '../shared/scoping';
import { loadMailRow, loadPhotos, MailRecord, MailRow, signedDocumentUrl, toMailRecord } from './record';
import { sqlRows } from '../shared/sql';

/** The piece if the caller may see it; 404 otherwise (other members', other agents' and the other environment's pieces). */
export async function visibleMailRow(deps: Deps, auth: AuthContext, id: string): Promise<MailRow> {
  const row = await loadMailRow(deps.db, id);
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode }))
    throw errors.notFound('Outbound mail');
  return row;
}

/** The record of a row, with its fulfillment photos. */
export async function recordOf(deps: Deps, row: MailRow): Promise<MailRecord> {
  const photos = await loadPhotos(deps.db, [row.id]);
  return toMailRecord(deps, row, photos.get(row.id) ?? []);
}

export async function getMail(deps: Deps, auth: AuthContext, id: string): Promise<MailRecord> {
  return recordOf(deps, await visibleMailRow(deps, auth, id));
}

/** A fresh signed URL of the stored document (the record's document_preview_url redirects here). */
export async function mailDocumentUrl(deps: Deps, auth: AuthContext, id: string): Promise<string> {
  return signedDocumentUrl(deps, await visibleMailRow(deps, auth, id));
}

export interface ListMailQuery {
  q?: string;
  status?: MailStatusName;
  created_after?: string;
  created_before?: string;
  test_mode?: boolean;
  agent_id?: string;
  limit: number;
  offset: number;
}

function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** GET /v1/mail: newest first; every whitespace-separated term of q must match some searched field. */
export async function listMail(deps: Deps, auth: AuthContext, query: ListMailQuery) {
  const agentId = await resolveAgentFilter(deps, auth, query.agent_id);
  const where: string[] = ['m.member_id = $1', 'm.test_mode = $2'];
  const params: unknown[] = [auth.memberId, query.test_mode ?? auth.testMode];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (agentId) add((p) => `m.agent_id = ${p}`, agentId);
  if (query.status) add((p) => `m.status = ${p}`, query.status);
  const bounds: { field: 'created_after' | 'created_before'; side: 'after' | 'before' }[] = [
    { field: 'created_after', side: 'after' },
    { field: 'created_before', side: 'before' },
  ];
  for (const { field, side } of bounds) {
    const text = query[field];
    if (text === undefined) continue;
    const bound = parseCreatedBound(text, side);
    if (!bound)
      throw errors.validation([{ path: `query.${field}`, message: 'must be an ISO 8601 date-time or YYYY-MM-DD' }]);
    const op = side === 'after' ? '>=' : bound.inclusive ? '<=' : '<';
    add((p) => `m.created_at ${op} ${p}`, bound.at);
  }
  for (const term of (query.q ?? '').trim().split(/\s+/).filter(Boolean)) {
    add(
      (
        p,
      ) => `concat_ws(' ', m.recipient_name, m.recipient_company, m.recipient_line1, m.recipient_line2, m.recipient_city,
      m.recipient_state, m.recipient_zip, m.tracking_number, m.agent_notes) ILIKE ${p}`,
      likePattern(term),
    );
  }
  const whereSql = where.join(' AND ');
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM outbound_mail m WHERE ${whereSql}`,
    params,
  );
  const rows = await sqlRows<MailRow>(
    deps.db,
    `SELECT m.* FROM outbound_mail m WHERE ${whereSql} ORDER BY m.created_at DESC, m.id DESC LIMIT ${query.limit} OFFSET ${query.offset}`,
    params,
  );
  const photos = await loadPhotos(
    deps.db,
    rows.map((r) => r.id),
  );
  const mail = await Promise.all(rows.map((r) => toMailRecord(deps, r, photos.get(r.id) ?? [])));
  return { mail, pagination: pagination(total, query.limit, query.offset) };
}
