// Forwarded inbound context: intake aliases (list, create, update), forwarded mail items
// with their files, OCR, lineage and drafting context, and postal threads. Used by the
// REST routes and the MCP tools alike. Callers see only their member's records in their
// key's environment; agent keys see only records of aliases assigned to their agent.
import { pagination } from '../../domain/shared/pagination';
import { randomBytes } from 'node:crypto';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { canSee, resolveAgentFilter } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { errors } from '../../domain/shared/errors';
import { contentDisposition } from '../../domain/shared/downloads';
import { aliasStatusMoveProblem, AliasStatus, randomLocalPart, vanityProblem } from '../../domain/inbound-email/aliases';
import { inboundExtractionWorkflowId } from '../../workflows/inbound-email/contracts';
import { updateReturning } from '../physical-inbound/item-records';

export const INCLUDE_VALUES = ['drafting', 'files', 'ocr', 'lineage'] as const;
export type InboundInclude = (typeof INCLUDE_VALUES)[number];
/** One item's read also takes include=signed_urls, the same as signed_urls=true. */
export const ITEM_INCLUDE_VALUES = [...INCLUDE_VALUES, 'signed_urls'] as const;
export type InboundItemInclude = (typeof ITEM_INCLUDE_VALUES)[number];

const NOTE_PREVIEW_CHARS = 280;

// ---------------------------------------------------------------- aliases

const ALIAS_COLUMNS = `id, member_id, agent_id, test_mode, label, alias_local_part, domain, alias_local_part || '@' || domain AS email, alias_type,
  requested_alias_local_part, source_type, provider, handled_by, capture_method, automation_level, approval_mode, status,
  last_received_at, metadata, created_at, updated_at`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any>;

function shapeAlias(r: Row) {
  return {
    id: r.id, member_id: r.member_id, agent_id: r.agent_id, label: r.label, alias_local_part: r.alias_local_part, domain: r.domain,
    email: r.email, alias_type: r.alias_type, requested_alias_local_part: r.requested_alias_local_part, source_type: r.source_type,
    provider: r.provider, handled_by: r.handled_by, capture_method: r.capture_method, automation_level: r.automation_level,
    approval_mode: r.approval_mode, status: r.status, last_received_at: iso(r.last_received_at), metadata: r.metadata ?? {},
    created_at: iso(r.created_at), updated_at: iso(r.updated_at),
  };
}
export type ForwardingAddress = ReturnType<typeof shapeAlias>;

function iso(d: Date | string | null | undefined): string | null {
  if (!d) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}


/** SQL filter on (member_id, test_mode, agent_id) for the caller; `$1..$n` starting at `from`. */
async function ownerFilter(deps: Deps, auth: AuthContext, alias: string, requestedAgentId: string | null | undefined, params: unknown[]): Promise<string> {
  params.push(auth.memberId, auth.testMode);
  let sql = `${alias}.member_id = $${params.length - 1} AND ${alias}.test_mode = $${params.length}`;
  const agentId = await resolveAgentFilter(deps, auth, requestedAgentId);
  if (agentId) {
    params.push(agentId);
    sql += ` AND ${alias}.agent_id = $${params.length}`;
  }
  return sql;
}

export interface ListAliasesInput { status?: AliasStatus; agent_id?: string; limit: number; offset: number }

export async function listForwardingAddresses(deps: Deps, auth: AuthContext, input: ListAliasesInput) {
  const params: unknown[] = [];
  let where = await ownerFilter(deps, auth, 'a', input.agent_id, params);
  if (input.status) {
    params.push(input.status);
    where += ` AND a.status = $${params.length}`;
  }
  const [{ total }] = await deps.db.query(`SELECT count(*)::int AS total FROM inbound_forwarding_aliases a WHERE ${where}`, params);
  const rows = await deps.db.query(
    `SELECT ${ALIAS_COLUMNS} FROM inbound_forwarding_aliases a WHERE ${where} ORDER BY created_at DESC, id LIMIT ${input.limit} OFFSET ${input.offset}`, params,
  );
  return { forwarding_addresses: rows.map(shapeAlias), pagination: pagination(total, input.limit, input.offset) };
}

async function loadAlias(deps: Deps, auth: AuthContext, id: string): Promise<Row> {
  const [row] = await deps.db.query(`SELECT ${ALIAS_COLUMNS} FROM inbound_forwarding_aliases WHERE id = $1`, [id]);
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) {
    throw errors.notFound('Inbound forwarding address');
  }
  return row;
}

export async function getForwardingAddress(deps: Deps, auth: AuthContext, id: string) {
  return { forwarding_address: shapeAlias(await loadAlias(deps, auth, id)) };
}

export interface AliasSettings {
  label?: string;
  source_type?: string;
  provider?: string | null;
  handled_by?: string;
  capture_method?: string;
  automation_level?: string;
  approval_mode?: string;
  metadata?: Record<string, unknown>;
}

export interface CreateAliasInput extends AliasSettings {
  agent_id?: string | null;
  alias_type: 'random' | 'vanity';
  requested_alias_local_part?: string;
}

const RANDOM_ATTEMPTS = 5;
const ALIAS_ARCHIVED_HINT = 'Archived aliases stay archived; create a new alias with POST /v1/inbound-forwarding-addresses.';

export async function createForwardingAddress(deps: Deps, auth: AuthContext, input: CreateAliasInput) {
  // Agent keys always create aliases for their own agent (an agent_id they pass is ignored).
  const agentId = isAgentKey(auth) ? auth.agentId : input.agent_id ?? null;
  if (!isAgentKey(auth)) await assertLinkedObjects(deps.db, auth, { agent_id: ['agent', agentId] });
  const handledBy = input.handled_by ?? (agentId ? 'agent' : 'member');
  if (handledBy === 'agent' && !agentId) {
    throw errors.validation([{ path: 'handled_by', message: 'handled_by agent needs an agent_id' }]);
  }
  let requested: string | null = null;
  if (input.alias_type === 'vanity') {
    if (!input.requested_alias_local_part) throw errors.validation([{ path: 'requested_alias_local_part', message: 'required when alias_type is vanity' }]);
    const problem = vanityProblem(input.requested_alias_local_part);
    if (problem) throw errors.validation([{ path: 'requested_alias_local_part', message: problem }]);
    requested = input.requested_alias_local_part;
  } else if (input.requested_alias_local_part !== undefined) {
    throw errors.validation([{ path: 'requested_alias_local_part', message: 'only allowed when alias_type is vanity' }]);
  }

  for (let attempt = 0; attempt < (requested ? 1 : RANDOM_ATTEMPTS); attempt++) {
    const localPart = requested ? requested.trim().toLowerCase() : randomLocalPart(randomBytes(10));
    const rows = await deps.db.query(
      `INSERT INTO inbound_forwarding_aliases (member_id, agent_id, test_mode, label, alias_local_part, domain, alias_type, requested_alias_local_part,
                                              source_type, provider, handled_by, capture_method, automation_level, approval_mode, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT (lower(alias_local_part), lower(domain)) DO NOTHING RETURNING ${ALIAS_COLUMNS}`,
      [auth.memberId, agentId, auth.testMode, input.label ?? 'Forwarded mail', localPart, deps.config.inboundEmailDomain, input.alias_type, requested,
        input.source_type ?? 'email_forward', input.provider ?? null, handledBy, input.capture_method ?? 'any', input.automation_level ?? 'medium',
        input.approval_mode ?? 'always_require', JSON.stringify(input.metadata ?? {})],
    );
    if (rows.length) return { forwarding_address: shapeAlias(rows[0]) };
  }
  if (requested) {
    throw errors.conflict('ALIAS_TAKEN', `${requested.toLowerCase()}@${deps.config.inboundEmailDomain} is already taken.`, {
      suggestedAction: 'Choose another requested_alias_local_part, or create a random alias.',
    });
  }
  throw errors.unavailable('ALIAS_GENERATION_FAILED', 'Could not generate a free random alias; retry.');
}

export interface UpdateAliasInput extends AliasSettings {
  agent_id?: string | null;
  status?: AliasStatus;
}

export async function updateForwardingAddress(deps: Deps, auth: AuthContext, id: string, input: UpdateAliasInput) {
  const current = await loadAlias(deps, auth, id);
  if (input.agent_id !== undefined && isAgentKey(auth) && input.agent_id !== current.agent_id) {
    throw errors.forbidden('member_key_required', 'Only a member key can reassign an alias to another agent.');
  }
  if (!isAgentKey(auth)) await assertLinkedObjects(deps.db, auth, { agent_id: ['agent', input.agent_id] });
  if (input.status) {
    const problem = aliasStatusMoveProblem(current.status, input.status);
    if (problem) throw errors.conflict('ALIAS_ARCHIVED', `This alias is archived: ${problem}.`, { suggestedAction: ALIAS_ARCHIVED_HINT });
  } else if (current.status === 'archived' && Object.keys(input).length) {
    throw errors.conflict('ALIAS_ARCHIVED', 'This alias is archived and can no longer be changed.', { suggestedAction: ALIAS_ARCHIVED_HINT });
  }
  const agentId = input.agent_id !== undefined ? input.agent_id : current.agent_id;
  const handledBy = input.handled_by ?? (input.agent_id === null && current.handled_by === 'agent' ? 'member' : current.handled_by);
  if (handledBy === 'agent' && !agentId) {
    throw errors.validation([{ path: 'handled_by', message: 'handled_by agent needs an agent_id' }]);
  }
  const [updated] = await updateReturning(deps.db,
    `UPDATE inbound_forwarding_aliases SET label = $2, agent_id = $3, source_type = $4, provider = $5, handled_by = $6, capture_method = $7,
            automation_level = $8, approval_mode = $9, status = $10, metadata = $11, updated_at = now()
      WHERE id = $1 RETURNING ${ALIAS_COLUMNS}`,
    [id, input.label ?? current.label, agentId, input.source_type ?? current.source_type, input.provider !== undefined ? input.provider : current.provider,
      handledBy, input.capture_method ?? current.capture_method, input.automation_level ?? current.automation_level,
      input.approval_mode ?? current.approval_mode, input.status ?? current.status, JSON.stringify(input.metadata ?? current.metadata ?? {})],
  );
  return { forwarding_address: shapeAlias(updated) };
}

// ---------------------------------------------------------------- items

export interface ListInboundInput {
  limit: number;
  offset: number;
  category?: string;
  status?: string;
  thread_id?: string;
  agent_id?: string;
  include: InboundInclude[];
}

export async function listInboundMail(deps: Deps, auth: AuthContext, input: ListInboundInput) {
  const params: unknown[] = [];
  let where = await ownerFilter(deps, auth, 'i', input.agent_id, params);
  for (const [column, value] of [['category', input.category], ['status', input.status], ['thread_id', input.thread_id]] as const) {
    if (value === undefined) continue;
    params.push(value);
    where += ` AND i.${column} = $${params.length}`;
  }
  const [{ total }] = await deps.db.query(`SELECT count(*)::int AS total FROM inbound_mail_items i WHERE ${where}`, params);
  const rows = await deps.db.query(
    `SELECT i.* FROM inbound_mail_items i WHERE ${where} ORDER BY i.received_at DESC, i.id LIMIT ${input.limit} OFFSET ${input.offset}`, params,
  );
  return { items: await shapeItems(deps, auth, rows, new Set(input.include), false), pagination: pagination(total, input.limit, input.offset) };
}

async function loadItem(deps: Deps, auth: AuthContext, id: string): Promise<Row> {
  const [row] = await deps.db.query(`SELECT * FROM inbound_mail_items WHERE id = $1`, [id]);
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) {
    throw errors.notFound('Inbound mail item');
  }
  return row;
}

export async function getInboundMail(deps: Deps, auth: AuthContext, input: { id: string; include: InboundItemInclude[]; signed_urls: boolean }) {
  const row = await loadItem(deps, auth, input.id);
  const include = new Set(input.include.filter((v): v is InboundInclude => v !== 'signed_urls'));
  const [item] = await shapeItems(deps, auth, [row], include, input.signed_urls || input.include.includes('signed_urls'));
  return item;
}

/** The bytes of one stored file (raw email or attachment) for an authenticated download. */
export async function getInboundFile(deps: Deps, auth: AuthContext, input: { id: string; fileId: string }) {
  await loadItem(deps, auth, input.id);
  const [file] = await deps.db.query(
    `SELECT filename, content_type, storage_key FROM inbound_mail_files WHERE id = $1 AND inbound_mail_item_id = $2`, [input.fileId, input.id],
  );
  if (!file) throw errors.notFound('Inbound mail file');
  return { body: await deps.storage.get(file.storage_key), contentType: file.content_type as string, filename: file.filename as string };
}

function groupBy<T extends Row>(rows: T[], key: string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = r[key];
    if (!out.has(k)) out.set(k, []);
    out.get(k)!.push(r);
  }
  return out;
}

function shapeOutbound(r: Row) {
  return {
    id: r.id, status: r.status, mail_class: r.mail_class, recipient_name: r.recipient_name, recipient_company: r.recipient_company,
    recipient_city: r.recipient_city, recipient_state: r.recipient_state, tracking_number: r.tracking_number,
    inbound_capture_id: r.inbound_capture_id, postal_mail_thread_id: r.postal_mail_thread_id,
    created_at: iso(r.created_at), mailed_at: iso(r.mailed_at),
  };
}

/** Outbound pieces the caller may see that reply to these items or their threads. */
async function linkedOutbound(deps: Deps, auth: AuthContext, itemIds: string[], threadIds: string[]): Promise<Row[]> {
  if (!itemIds.length) return [];
  const params: unknown[] = [auth.memberId, auth.testMode, itemIds, threadIds];
  let agent = '';
  if (isAgentKey(auth)) {
    params.push(auth.agentId);
    agent = ` AND agent_id = $5`;
  }
  return deps.db.query(
    `SELECT id, status, mail_class, recipient_name, recipient_company, recipient_city, recipient_state, tracking_number,
            inbound_capture_id, postal_mail_thread_id, created_at, mailed_at
       FROM outbound_mail
      WHERE member_id = $1 AND test_mode = $2 AND (inbound_capture_id = ANY($3::uuid[]) OR postal_mail_thread_id = ANY($4::uuid[]))${agent}
      ORDER BY created_at`, params,
  );
}

async function shapeItems(deps: Deps, auth: AuthContext, rows: Row[], include: Set<InboundInclude>, signedUrls: boolean) {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const threadIds = [...new Set(rows.map((r) => r.thread_id).filter(Boolean))] as string[];
  const [files, threads, aliases, contacts]: Row[][] = await Promise.all([
    deps.db.query(`SELECT * FROM inbound_mail_files WHERE inbound_mail_item_id = ANY($1::uuid[]) ORDER BY position`, [ids]),
    threadIds.length ? deps.db.query(`SELECT id, title, category, status FROM postal_threads WHERE id = ANY($1::uuid[])`, [threadIds]) : [],
    deps.db.query(`SELECT ${ALIAS_COLUMNS} FROM inbound_forwarding_aliases WHERE id = ANY($1::uuid[])`, [[...new Set(rows.map((r) => r.alias_id))]]),
    include.has('drafting') ? deps.db.query(`SELECT * FROM inbound_reply_contacts WHERE inbound_mail_item_id = ANY($1::uuid[])`, [ids]) : [],
  ]);
  const needExtractions = include.has('lineage') || include.has('ocr');
  const extractions: Row[] = needExtractions
    ? await deps.db.query(
      `SELECT id, inbound_mail_item_id, inbound_mail_file_id, source, field, value, confidence::float AS confidence, metadata, created_at
         FROM inbound_extractions WHERE inbound_mail_item_id = ANY($1::uuid[]) ORDER BY created_at, position`, [ids])
    : [];
  const outbound = include.has('drafting') ? await linkedOutbound(deps, auth, ids, threadIds) : [];
  const filesByItem = groupBy(files, 'inbound_mail_item_id');
  const extractionsByItem = groupBy(extractions, 'inbound_mail_item_id');
  const threadById = new Map<string, Row>(threads.map((t) => [t.id, t]));
  const aliasById = new Map<string, Row>(aliases.map((a) => [a.id, a]));
  const contactByItem = new Map<string, Row>(contacts.map((c) => [c.inbound_mail_item_id, c]));
  const withDownload = include.has('files') || signedUrls;

  return Promise.all(rows.map(async (r) => {
    const itemFiles = filesByItem.get(r.id) ?? [];
    const attachments = itemFiles.filter((f) => f.kind === 'attachment');
    const thread = r.thread_id ? threadById.get(r.thread_id) : null;
    const alias = aliasById.get(r.alias_id)!;
    const itemExtractions = extractionsByItem.get(r.id) ?? [];
    const ocrRows = itemExtractions.filter((e) => e.source === 'ocr' && e.field === 'page_text');
    const preview = r.body_text.replace(/\s+/g, ' ').trim();

    const shapedFiles = await Promise.all(itemFiles.map(async (f) => ({
      id: f.id, kind: f.kind, filename: f.filename, content_type: f.content_type, size_bytes: Number(f.size_bytes), sha256: f.sha256,
      extraction_status: f.extraction_status,
      ...(withDownload ? { download_url: `${deps.config.baseUrl}/v1/inbound/${r.id}/files/${f.id}` } : {}),
      ...(signedUrls ? { signed_url: await deps.storage.signedUrl(f.storage_key, { contentDisposition: contentDisposition(f.filename, { fallbackName: 'attachment' }) }) } : {}),
      created_at: iso(f.created_at),
    })));

    const item: Record<string, unknown> = {
      id: r.id,
      object: 'inbound_mail_item',
      status: r.status,
      received_at: iso(r.received_at),
      from: r.from_address || r.from_name ? { name: r.from_name, email: r.from_address } : null,
      subject: r.subject,
      note_preview: preview ? preview.slice(0, NOTE_PREVIEW_CHARS) : null,
      attachment_count: attachments.length,
      category: r.category,
      suggested_action: r.suggested_action,
      parsed: {
        message_id: r.headers?.message_id ?? null, date: r.headers?.date ?? null, in_reply_to: r.headers?.in_reply_to ?? null,
        references: r.headers?.references ?? [], to: r.headers?.to ?? null, cc: r.headers?.cc ?? null, reply_to: r.headers?.reply_to ?? null,
        envelope_from: r.envelope_from, envelope_to: r.envelope_to, sender: r.sender, recipient: r.recipient,
        deadlines: r.deadlines ?? [], key_facts: r.key_facts ?? [],
      },
      thread: thread ? { id: thread.id, object: 'postal_mail_thread', title: thread.title, category: thread.category, status: thread.status } : null,
      files: shapedFiles,
      context: {
        summary: r.summary,
        alias: { id: alias.id, email: alias.email, label: alias.label, handled_by: alias.handled_by, automation_level: alias.automation_level, approval_mode: alias.approval_mode },
        agent_id: r.agent_id,
        capture_method: r.capture_method,
        review_reasons: r.review_reasons ?? [],
        failure_reason: r.failure_reason,
        attachment_flags: attachments.filter((f) => f.content_type_mismatch).map((f) => ({
          inbound_mail_file_id: f.id, declared_content_type: f.declared_content_type, detected_content_type: f.content_type, reason: 'content_type_mismatch',
        })),
        extracted_at: iso(r.extracted_at),
        workflow_id: inboundExtractionWorkflowId(r.id),
      },
    };

    if (include.has('drafting')) {
      const c = contactByItem.get(r.id);
      const replyContact = c ? {
        id: c.id, name: c.name, line1: c.line1, line2: c.line2, city: c.city, state: c.state, postal_code: c.postal_code, country: c.country,
        source_type: c.source_type, verification_status: c.verification_status, confidence: Number(c.confidence),
        formatted_address: [c.name, c.line1, c.line2, `${c.city}, ${c.state} ${c.postal_code}`].filter(Boolean).join('\n'),
      } : null;
      item.draft_context = {
        summary: r.summary,
        category: r.category,
        suggested_action: r.suggested_action,
        inbound_capture_id: r.id,
        postal_mail_thread_id: r.thread_id,
        sender: r.sender,
        recipient: r.recipient,
        reply_contact: replyContact,
        reply_contact_confidence: replyContact ? replyContact.confidence : null,
        deadlines: r.deadlines ?? [],
        key_facts: r.key_facts ?? [],
        source_files: attachments.map((f) => ({ id: f.id, filename: f.filename, content_type: f.content_type, extraction_status: f.extraction_status })),
        linked_outbound_mail: outbound
          .filter((o) => o.inbound_capture_id === r.id || (r.thread_id && o.postal_mail_thread_id === r.thread_id))
          .map(shapeOutbound),
      };
    }
    if (include.has('ocr')) {
      item.ocr = ocrRows.map((e) => ({
        inbound_mail_file_id: e.inbound_mail_file_id, page_number: e.metadata?.page ?? 1, text: e.value, confidence: e.confidence,
        unreadable: Boolean(e.metadata?.unreadable), status: e.metadata?.status ?? (e.metadata?.unreadable ? 'needs_review' : 'ready'),
        uncertain_spans: e.metadata?.uncertain_spans ?? [], engine: e.metadata?.engine ?? 'tesseract',
      }));
    }
    if (include.has('lineage')) {
      item.extractions = itemExtractions.map((e) => ({
        id: e.id, inbound_mail_file_id: e.inbound_mail_file_id, source: e.source, field: e.field, value: e.value,
        confidence: e.confidence, metadata: e.metadata ?? {}, created_at: iso(e.created_at),
      }));
    }
    return item;
  }));
}

// ---------------------------------------------------------------- threads

export interface ListThreadsInput {
  limit: number;
  offset: number;
  category?: string;
  status?: string;
  agent_id?: string;
  include: Array<'events'>;
}

const THREAD_SELECT = `SELECT t.*, GREATEST(t.last_event_at, (SELECT max(o.created_at) FROM outbound_mail o
    WHERE o.member_id = t.member_id AND o.test_mode = t.test_mode
      AND (o.postal_mail_thread_id = t.id OR o.inbound_capture_id IN (SELECT i.id FROM inbound_mail_items i WHERE i.thread_id = t.id)))) AS latest_event_at
  FROM postal_threads t`;

export async function listPostalThreads(deps: Deps, auth: AuthContext, input: ListThreadsInput) {
  const params: unknown[] = [];
  let where = await ownerFilter(deps, auth, 't', input.agent_id, params);
  for (const [column, value] of [['category', input.category], ['status', input.status]] as const) {
    if (value === undefined) continue;
    params.push(value);
    where += ` AND t.${column} = $${params.length}`;
  }
  const [{ total }] = await deps.db.query(`SELECT count(*)::int AS total FROM postal_threads t WHERE ${where}`, params);
  const rows = await deps.db.query(`${THREAD_SELECT} WHERE ${where} ORDER BY latest_event_at DESC, t.id LIMIT ${input.limit} OFFSET ${input.offset}`, params);
  return { threads: await shapeThreads(deps, auth, rows, input.include.includes('events')), pagination: pagination(total, input.limit, input.offset) };
}

async function loadThread(deps: Deps, auth: AuthContext, id: string): Promise<Row> {
  const [row] = await deps.db.query(`${THREAD_SELECT} WHERE t.id = $1`, [id]);
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) {
    throw errors.notFound('Postal thread');
  }
  return row;
}

export async function getPostalThread(deps: Deps, auth: AuthContext, input: { id: string; include: Array<'events'> }) {
  const [thread] = await shapeThreads(deps, auth, [await loadThread(deps, auth, input.id)], input.include.includes('events'));
  return thread;
}

export async function updatePostalThread(deps: Deps, auth: AuthContext, id: string, input: { status?: string; title?: string }) {
  const current = await loadThread(deps, auth, id);
  await deps.db.query(`UPDATE postal_threads SET status = $2, title = $3, updated_at = now() WHERE id = $1`, [id, input.status ?? current.status, input.title ?? current.title]);
  return getPostalThread(deps, auth, { id, include: [] });
}

async function shapeThreads(deps: Deps, auth: AuthContext, rows: Row[], withEvents: boolean) {
  const ids = rows.map((r) => r.id);
  let events = new Map<string, unknown[]>();
  if (withEvents && ids.length) {
    const items = await deps.db.query(
      `SELECT id, thread_id, status, category, subject, summary, received_at FROM inbound_mail_items WHERE thread_id = ANY($1::uuid[]) ORDER BY received_at`, [ids],
    );
    const itemThread = new Map(items.map((i: Row) => [i.id, i.thread_id]));
    const outbound = await linkedOutbound(deps, auth, items.map((i: Row) => i.id), ids);
    const all: Array<{ threadId: string; at: Date; event: Record<string, unknown> }> = [
      ...items.map((i: Row) => ({
        threadId: i.thread_id, at: i.received_at,
        event: { type: 'inbound_mail_item', inbound_mail_item_id: i.id, occurred_at: iso(i.received_at), status: i.status, category: i.category, summary: i.summary ?? i.subject },
      })),
      ...outbound.map((o) => ({
        threadId: (o.postal_mail_thread_id && ids.includes(o.postal_mail_thread_id) ? o.postal_mail_thread_id : itemThread.get(o.inbound_capture_id)) as string,
        at: o.created_at,
        event: { type: 'outbound_mail', outbound_mail_id: o.id, occurred_at: iso(o.created_at), status: o.status, inbound_capture_id: o.inbound_capture_id, summary: `Reply to ${o.recipient_name ?? o.recipient_company}` },
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
