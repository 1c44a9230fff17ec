// Forwarded inbound context: the mail items received on intake aliases, with their files,
// OCR, lineage and drafting context (the sender, the reply contact, deadlines, key facts and
// the outbound replies already sent), and downloads of their stored files. Used by the
// REST routes and the MCP tools alike. Callers see only their member's records in their
// key's environment; agent keys see only records of aliases assigned to their agent. The
// aliases are services/inbound-email/forwarding-addresses.ts; threads, postal-threads.ts.
import { pagination } from '../../domain/shared/pagination';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { canSee } from '../shared/scoping';
import { errors } from '../../domain/shared/errors';
import { contentDisposition } from '../../domain/shared/downloads';
import { inboundExtractionWorkflowId } from '../../workflows/inbound-email/contracts';
import { iso, ownerFilter } from './caller-scope';
import { ALIAS_COLUMNS, AliasRow } from './forwarding-addresses';
import type {
  InboundExtractionRow,
  InboundMailFileRow,
  InboundMailItemRow,
  InboundReplyContactRow,
  PostalThreadRow,
} from './rows';
import { sqlRows } from '../shared/sql';

export const INCLUDE_VALUES = ['drafting', 'files', 'ocr', 'lineage'] as const;
export type InboundInclude = (typeof INCLUDE_VALUES)[number];
/** One item's read also takes include=signed_urls, the same as signed_urls=true. */
export const ITEM_INCLUDE_VALUES = [...INCLUDE_VALUES, 'signed_urls'] as const;
export type InboundItemInclude = (typeof ITEM_INCLUDE_VALUES)[number];

const NOTE_PREVIEW_CHARS = 280;

/** An outbound piece that replies to an item or its thread (columns of outbound_mail). */
export interface LinkedOutboundRow {
  id: string;
  status: string;
  mail_class: string;
  recipient_name: string | null;
  recipient_company: string | null;
  recipient_city: string;
  recipient_state: string;
  tracking_number: string | null;
  inbound_capture_id: string | null;
  postal_mail_thread_id: string | null;
  created_at: Date;
  mailed_at: Date | null;
}

/** An extraction as the item reads select it: confidence cast to a float. */
type ExtractionRead = Omit<InboundExtractionRow, 'confidence' | 'position'> & { confidence: number };

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
  for (const [column, value] of [
    ['category', input.category],
    ['status', input.status],
    ['thread_id', input.thread_id],
  ] as const) {
    if (value === undefined) continue;
    params.push(value);
    where += ` AND i.${column} = $${params.length}`;
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM inbound_mail_items i WHERE ${where}`,
    params,
  );
  const rows = await sqlRows<InboundMailItemRow>(
    deps.db,
    `SELECT i.* FROM inbound_mail_items i WHERE ${where} ORDER BY i.received_at DESC, i.id LIMIT ${input.limit} OFFSET ${input.offset}`,
    params,
  );
  return {
    items: await shapeItems(deps, auth, rows, new Set(input.include), false),
    pagination: pagination(total, input.limit, input.offset),
  };
}

async function loadItem(deps: Deps, auth: AuthContext, id: string): Promise<InboundMailItemRow> {
  const [row] = await sqlRows<InboundMailItemRow>(deps.db, `SELECT * FROM inbound_mail_items WHERE id = $1`, [id]);
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) {
    throw errors.notFound('Inbound mail item');
  }
  return row;
}

export async function getInboundMail(
  deps: Deps,
  auth: AuthContext,
  input: { id: string; include: InboundItemInclude[]; signed_urls: boolean },
) {
  const row = await loadItem(deps, auth, input.id);
  const include = new Set(input.include.filter((v): v is InboundInclude => v !== 'signed_urls'));
  const [item] = await shapeItems(
    deps,
    auth,
    [row],
    include,
    input.signed_urls || input.include.includes('signed_urls'),
  );
  return item;
}

/** The bytes of one stored file (raw email or attachment) for an authenticated download. */
export async function getInboundFile(deps: Deps, auth: AuthContext, input: { id: string; fileId: string }) {
  await loadItem(deps, auth, input.id);
  const [file] = await sqlRows<Pick<InboundMailFileRow, 'filename' | 'content_type' | 'storage_key'>>(
    deps.db,
    `SELECT filename, content_type, storage_key FROM inbound_mail_files WHERE id = $1 AND inbound_mail_item_id = $2`,
    [input.fileId, input.id],
  );
  if (!file) throw errors.notFound('Inbound mail file');
  return { body: await deps.storage.get(file.storage_key), contentType: file.content_type, filename: file.filename };
}

function groupBy<T, K extends keyof T>(rows: T[], key: K): Map<T[K], T[]> {
  const out = new Map<T[K], T[]>();
  for (const r of rows) {
    const k = r[key];
    if (!out.has(k)) out.set(k, []);
    out.get(k)!.push(r);
  }
  return out;
}

function shapeOutbound(r: LinkedOutboundRow) {
  return {
    id: r.id,
    status: r.status,
    mail_class: r.mail_class,
    recipient_name: r.recipient_name,
    recipient_company: r.recipient_company,
    recipient_city: r.recipient_city,
    recipient_state: r.recipient_state,
    tracking_number: r.tracking_number,
    inbound_capture_id: r.inbound_capture_id,
    postal_mail_thread_id: r.postal_mail_thread_id,
    created_at: iso(r.created_at),
    mailed_at: iso(r.mailed_at),
  };
}

/** Outbound pieces the caller may see that reply to these items or their threads. */
export async function linkedOutbound(
  deps: Deps,
  auth: AuthContext,
  itemIds: string[],
  threadIds: string[],
): Promise<LinkedOutboundRow[]> {
  if (!itemIds.length) return [];
  const params: unknown[] = [auth.memberId, auth.testMode, itemIds, threadIds];
  let agent = '';
  if (isAgentKey(auth)) {
    params.push(auth.agentId);
    agent = ` AND agent_id = $5`;
  }
  return sqlRows<LinkedOutboundRow>(
    deps.db,
    `SELECT id, status, mail_class, recipient_name, recipient_company, recipient_city, recipient_state, tracking_number,
            inbound_capture_id, postal_mail_thread_id, created_at, mailed_at
       FROM outbound_mail
      WHERE member_id = $1 AND test_mode = $2 AND (inbound_capture_id = ANY($3::uuid[]) OR postal_mail_thread_id = ANY($4::uuid[]))${agent}
      ORDER BY created_at`,
    params,
  );
}

async function shapeItems(
  deps: Deps,
  auth: AuthContext,
  rows: InboundMailItemRow[],
  include: Set<InboundInclude>,
  signedUrls: boolean,
) {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const threadIds = [...new Set(rows.map((r) => r.thread_id).filter(Boolean))] as string[];
  const [files, threads, aliases, contacts] = await Promise.all([
    sqlRows<InboundMailFileRow>(
      deps.db,
      `SELECT * FROM inbound_mail_files WHERE inbound_mail_item_id = ANY($1::uuid[]) ORDER BY position`,
      [ids],
    ),
    threadIds.length
      ? sqlRows<Pick<PostalThreadRow, 'id' | 'title' | 'category' | 'status'>>(
          deps.db,
          `SELECT id, title, category, status FROM postal_threads WHERE id = ANY($1::uuid[])`,
          [threadIds],
        )
      : [],
    sqlRows<AliasRow>(deps.db, `SELECT ${ALIAS_COLUMNS} FROM inbound_forwarding_aliases WHERE id = ANY($1::uuid[])`, [
      [...new Set(rows.map((r) => r.alias_id))],
    ]),
    include.has('drafting')
      ? sqlRows<InboundReplyContactRow>(
          deps.db,
          `SELECT * FROM inbound_reply_contacts WHERE inbound_mail_item_id = ANY($1::uuid[])`,
          [ids],
        )
      : [],
  ]);
  const needExtractions = include.has('lineage') || include.has('ocr');
  const extractions = needExtractions
    ? await sqlRows<ExtractionRead>(
        deps.db,
        `SELECT id, inbound_mail_item_id, inbound_mail_file_id, source, field, value, confidence::float AS confidence, metadata, created_at
         FROM inbound_extractions WHERE inbound_mail_item_id = ANY($1::uuid[]) ORDER BY created_at, position`,
        [ids],
      )
    : [];
  const outbound = include.has('drafting') ? await linkedOutbound(deps, auth, ids, threadIds) : [];
  const filesByItem = groupBy(files, 'inbound_mail_item_id');
  const extractionsByItem = groupBy(extractions, 'inbound_mail_item_id');
  const threadById = new Map(threads.map((t) => [t.id, t]));
  const aliasById = new Map(aliases.map((a) => [a.id, a]));
  const contactByItem = new Map(contacts.map((c) => [c.inbound_mail_item_id, c]));
  const withDownload = include.has('files') || signedUrls;

  return Promise.all(
    rows.map(async (r) => {
      const itemFiles = filesByItem.get(r.id) ?? [];
      const attachments = itemFiles.filter((f) => f.kind === 'attachment');
      const thread = r.thread_id ? threadById.get(r.thread_id) : null;
      const alias = aliasById.get(r.alias_id)!;
      const itemExtractions = extractionsByItem.get(r.id) ?? [];
      const ocrRows = itemExtractions.filter((e) => e.source === 'ocr' && e.field === 'page_text');
      const preview = r.body_text.replace(/\s+/g, ' ').trim();

      const shapedFiles = await Promise.all(
        itemFiles.map(async (f) => ({
          id: f.id,
          kind: f.kind,
          filename: f.filename,
          content_type: f.content_type,
          size_bytes: Number(f.size_bytes),
          sha256: f.sha256,
          extraction_status: f.extraction_status,
          ...(withDownload ? { download_url: `${deps.config.baseUrl}/v1/inbound/${r.id}/files/${f.id}` } : {}),
          ...(signedUrls
            ? {
                signed_url: await deps.storage.signedUrl(f.storage_key, {
                  contentDisposition: contentDisposition(f.filename, { fallbackName: 'attachment' }),
                }),
              }
            : {}),
          created_at: iso(f.created_at),
        })),
      );

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
          message_id: r.headers?.message_id ?? null,
          date: r.headers?.date ?? null,
          in_reply_to: r.headers?.in_reply_to ?? null,
          references: r.headers?.references ?? [],
          to: r.headers?.to ?? null,
          cc: r.headers?.cc ?? null,
          reply_to: r.headers?.reply_to ?? null,
          envelope_from: r.envelope_from,
          envelope_to: r.envelope_to,
          sender: r.sender,
          recipient: r.recipient,
          deadlines: r.deadlines ?? [],
          key_facts: r.key_facts ?? [],
        },
        thread: thread
          ? {
              id: thread.id,
              object: 'postal_mail_thread',
              title: thread.title,
              category: thread.category,
              status: thread.status,
            }
          : null,
        files: shapedFiles,
        context: {
          summary: r.summary,
          alias: {
            id: alias.id,
            email: alias.email,
            label: alias.label,
            handled_by: alias.handled_by,
            automation_level: alias.automation_level,
            approval_mode: alias.approval_mode,
          },
          agent_id: r.agent_id,
          capture_method: r.capture_method,
          review_reasons: r.review_reasons ?? [],
          failure_reason: r.failure_reason,
          attachment_flags: attachments
            .filter((f) => f.content_type_mismatch)
            .map((f) => ({
              inbound_mail_file_id: f.id,
              declared_content_type: f.declared_content_type,
              detected_content_type: f.content_type,
              reason: 'content_type_mismatch',
            })),
          extracted_at: iso(r.extracted_at),
          workflow_id: inboundExtractionWorkflowId(r.id),
        },
      };

      if (include.has('drafting')) {
        const c = contactByItem.get(r.id);
        const replyContact = c
          ? {
              id: c.id,
              name: c.name,
              line1: c.line1,
              line2: c.line2,
              city: c.city,
              state: c.state,
              postal_code: c.postal_code,
              country: c.country,
              source_type: c.source_type,
              verification_status: c.verification_status,
              confidence: Number(c.confidence),
              formatted_address: [c.name, c.line1, c.line2, `${c.city}, ${c.state} ${c.postal_code}`]
                .filter(Boolean)
                .join('\n'),
            }
          : null;
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
          source_files: attachments.map((f) => ({
            id: f.id,
            filename: f.filename,
            content_type: f.content_type,
            extraction_status: f.extraction_status,
          })),
          linked_outbound_mail: outbound
            .filter((o) => o.inbound_capture_id === r.id || (r.thread_id && o.postal_mail_thread_id === r.thread_id))
            .map(shapeOutbound),
        };
      }
      if (include.has('ocr')) {
        item.ocr = ocrRows.map((e) => ({
          inbound_mail_file_id: e.inbound_mail_file_id,
          page_number: e.metadata?.page ?? 1,
          text: e.value,
          confidence: e.confidence,
          unreadable: Boolean(e.metadata?.unreadable),
          status: e.metadata?.status ?? (e.metadata?.unreadable ? 'needs_review' : 'ready'),
          uncertain_spans: e.metadata?.uncertain_spans ?? [],
          engine: e.metadata?.engine ?? 'tesseract',
        }));
      }
      if (include.has('lineage')) {
        item.extractions = itemExtractions.map((e) => ({
          id: e.id,
          inbound_mail_file_id: e.inbound_mail_file_id,
          source: e.source,
          field: e.field,
          value: e.value,
          confidence: e.confidence,
          metadata: e.metadata ?? {},
          created_at: iso(e.created_at),
        }));
      }
      return item;
    }),
  );
}
