// Support tickets: a conversation per case between a member (or one of its agents) and
// the support team, with small attachments stored in the object store. Opening a case
// is limited per member (3 unresolved, 3 new per rolling 24 h) under a member row lock,
// so concurrent requests cannot slip past the limits.
import { randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { resolveAgentFilter } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import { sha256Hex } from '../../domain/accounts/keys';
import { checkImage } from '../../domain/shared/images';
import { contentDisposition } from '../../domain/shared/downloads';
import {
  attachmentTotalProblem,
  decodeBase64,
  MAX_ACTIVE_TICKETS,
  MAX_NEW_TICKETS_PER_DAY,
  SupportCategory,
  supportCaseId,
  supportMessageId,
  SupportStatus,
  ticketLimitRefusal,
} from '../../domain/support/conversations';
import type { SupportAttachmentRow, SupportConversationRow, SupportMessageRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

export interface SupportAttachmentInput {
  filename: string;
  content_type: string;
  content_base64: string;
}

export interface SupportMessageInput {
  category?: SupportCategory;
  body: string;
  conversation_id?: string;
  attachments?: SupportAttachmentInput[];
}

export interface SupportAttachment {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  /** Signed, 1-hour expiry; present on reads. */
  url?: string;
}

export interface SupportMessage {
  id: string;
  conversation_id: string;
  support_case_id: string;
  support_message_id: string;
  category: SupportCategory;
  /** The case's status once this message was recorded. */
  status: SupportStatus;
  author_type: 'member' | 'agent' | 'support';
  agent_id: string | null;
  body: string;
  attachments: SupportAttachment[];
  created_at: string;
}

export interface SupportConversation {
  id: string;
  support_case_id: string;
  category: SupportCategory;
  status: SupportStatus;
  agent_id: string | null;
  message_count: number;
  last_message_at: string;
  resolved_at: string | null;
  created_at: string;
}

const CONVERSATION_COLUMNS = `c.id, c.case_number, c.member_id, c.agent_id, c.category, c.status, c.environment,
  c.message_count, c.last_message_at, c.resolved_at, c.created_at`;
type ConversationColumns = Pick<
  SupportConversationRow,
  | 'id'
  | 'case_number'
  | 'member_id'
  | 'agent_id'
  | 'category'
  | 'status'
  | 'environment'
  | 'message_count'
  | 'last_message_at'
  | 'resolved_at'
  | 'created_at'
>;

const MESSAGE_COLUMNS = `id, conversation_id, sequence, author_type, agent_id, category, body, created_at`;
type MessageColumns = Pick<
  SupportMessageRow,
  'id' | 'conversation_id' | 'sequence' | 'author_type' | 'agent_id' | 'category' | 'body' | 'created_at'
>;

function toConversation(row: ConversationColumns): SupportConversation {
  return {
    id: row.id,
    support_case_id: supportCaseId(row.case_number),
    category: row.category,
    status: row.status,
    agent_id: row.agent_id,
    message_count: row.message_count,
    last_message_at: row.last_message_at.toISOString(),
    resolved_at: row.resolved_at ? row.resolved_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
  };
}

function environmentOf(auth: AuthContext): 'live' | 'test' {
  return auth.testMode ? 'test' : 'live';
}

/** The caller's conversation, locked when `forUpdate`; another member's or agent's is 404. */
async function findConversation(
  db: Queryable,
  auth: AuthContext,
  id: string,
  forUpdate = false,
): Promise<ConversationColumns> {
  const [row] = await sqlRows<ConversationColumns>(
    db,
    `SELECT ${CONVERSATION_COLUMNS} FROM support_conversations c
      WHERE c.id = $1 AND c.member_id = $2 AND c.environment = $3 ${forUpdate ? 'FOR UPDATE' : ''}`,
    [id, auth.memberId, environmentOf(auth)],
  );
  if (!row || (isAgentKey(auth) && row.agent_id !== auth.agentId)) throw errors.notFound('Support conversation');
  return row;
}

function activeLimitError(active: number): ApiError {
  return errors.unprocessable(
    'SUPPORT_ACTIVE_TICKET_LIMIT',
    `This account already has ${active} unresolved support tickets (limit ${MAX_ACTIVE_TICKETS}).`,
    {
      suggestedAction:
        'Reply in an existing conversation (conversation_id) or resolve one before opening a new ticket.',
      details: { active_tickets: active, limit: MAX_ACTIVE_TICKETS },
    },
  );
}

/** Locks the member row and refuses a new (or reopened) ticket over the limits. */
async function assertTicketAllowed(tx: Queryable, memberId: string, opts: { newTicket: boolean }): Promise<void> {
  await sqlRun(tx, `SELECT id FROM members WHERE id = $1 FOR UPDATE`, [memberId]);
  const [{ active }] = await sqlRows<{ active: number }>(
    tx,
    `SELECT count(*)::int AS active FROM support_conversations WHERE member_id = $1 AND status <> 'resolved'`,
    [memberId],
  );
  if (!opts.newTicket) {
    if (active >= MAX_ACTIVE_TICKETS) throw activeLimitError(active);
    return;
  }
  const recent = await sqlRows<Pick<SupportConversationRow, 'created_at'>>(
    tx,
    `SELECT created_at FROM support_conversations WHERE member_id = $1 AND created_at > now() - interval '24 hours'`,
    [memberId],
  );
  const refusal = ticketLimitRefusal(
    active,
    recent.map((r) => r.created_at),
    new Date(),
  );
  if (!refusal) return;
  if (refusal.kind === 'active') throw activeLimitError(refusal.active);
  throw codedError(
    429,
    'SUPPORT_TICKET_RATE_LIMITED',
    `${refusal.opened} support tickets were opened in the last 24 hours (limit ${MAX_NEW_TICKETS_PER_DAY}).`,
    {
      retryable: true,
      suggestedAction: `Reply in an existing conversation, or open a new ticket after ${refusal.retryAfterSeconds} seconds.`,
      details: {
        opened_last_24h: refusal.opened,
        limit: MAX_NEW_TICKETS_PER_DAY,
        retry_after_seconds: refusal.retryAfterSeconds,
      },
      headers: { 'Retry-After': String(refusal.retryAfterSeconds) },
    },
  );
}

/** Base64-decoded attachments; an image (by its declared type) must decode in full as that type. */
async function decodeAttachments(
  inputs: SupportAttachmentInput[],
): Promise<Array<SupportAttachmentInput & { bytes: Buffer }>> {
  const decoded = inputs.map((a, i) => {
    const bytes = decodeBase64(a.content_base64);
    if (!bytes) throw errors.validation([{ path: `attachments.${i}.content_base64`, message: 'must be base64' }]);
    return { ...a, bytes };
  });
  const problem = attachmentTotalProblem(decoded.map((d) => d.bytes.length));
  if (problem) throw errors.validation([problem]);
  for (const [i, a] of decoded.entries()) {
    if (!a.content_type.startsWith('image/')) continue;
    const path = `attachments.${i}.content_base64`;
    const image = await checkImage(a.bytes, path);
    if (image.contentType !== a.content_type)
      throw errors.validation([{ path, message: `is a ${image.contentType} image, not ${a.content_type}` }]);
  }
  return decoded;
}

async function loadAttachments(
  deps: Deps,
  messageIds: string[],
  signed: boolean,
): Promise<Map<string, SupportAttachment[]>> {
  const out = new Map<string, SupportAttachment[]>();
  if (!messageIds.length) return out;
  const rows = await sqlRows<
    Pick<
      SupportAttachmentRow,
      'id' | 'message_id' | 'filename' | 'content_type' | 'size_bytes' | 'sha256' | 'storage_key'
    >
  >(
    deps.db,
    `SELECT id, message_id, filename, content_type, size_bytes, sha256, storage_key FROM support_attachments
      WHERE message_id = ANY($1) ORDER BY created_at, id`,
    [messageIds],
  );
  for (const r of rows) {
    const a: SupportAttachment = {
      id: r.id,
      filename: r.filename,
      content_type: r.content_type,
      size_bytes: r.size_bytes,
      sha256: r.sha256,
    };
    if (signed)
      a.url = await deps.storage.signedUrl(r.storage_key, {
        contentDisposition: contentDisposition(r.filename, { fallbackName: 'attachment' }),
      });
    out.set(r.message_id, [...(out.get(r.message_id) ?? []), a]);
  }
  return out;
}

function toMessage(
  row: MessageColumns,
  caseNumber: SupportConversationRow['case_number'],
  status: SupportStatus,
  attachments: SupportAttachment[],
): SupportMessage {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    support_case_id: supportCaseId(caseNumber),
    support_message_id: supportMessageId(caseNumber, row.sequence),
    category: row.category,
    status,
    author_type: row.author_type,
    agent_id: row.agent_id,
    body: row.body,
    attachments,
    created_at: row.created_at.toISOString(),
  };
}

async function insertMessage(
  deps: Deps,
  tx: Queryable,
  conversation: ConversationColumns,
  author: { type: 'member' | 'agent' | 'support'; agentId: string | null },
  category: SupportCategory,
  body: string,
  attachments: Array<SupportAttachmentInput & { bytes: Buffer }>,
  status: SupportStatus,
): Promise<SupportMessage> {
  const id = randomUUID();
  const sequence = conversation.message_count + 1;
  const [row] = await sqlRows<MessageColumns>(
    tx,
    `INSERT INTO support_messages (id, conversation_id, sequence, author_type, agent_id, category, body)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${MESSAGE_COLUMNS}`,
    [id, conversation.id, sequence, author.type, author.agentId, category, body],
  );
  const stored: SupportAttachment[] = [];
  for (const a of attachments) {
    const attachmentId = randomUUID();
    const key = `support/${conversation.id}/${id}/${attachmentId}`;
    await deps.storage.put(key, a.bytes, a.content_type);
    const sha = sha256Hex(a.bytes);
    await sqlRun(
      tx,
      `INSERT INTO support_attachments (id, message_id, filename, content_type, size_bytes, sha256, storage_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [attachmentId, id, a.filename, a.content_type, a.bytes.length, sha, key],
    );
    stored.push({
      id: attachmentId,
      filename: a.filename,
      content_type: a.content_type,
      size_bytes: a.bytes.length,
      sha256: sha,
    });
  }
  await sqlRun(
    tx,
    `UPDATE support_conversations SET message_count = $2, last_message_at = $3, status = $4,
            resolved_at = CASE WHEN $4 = 'resolved' THEN COALESCE(resolved_at, now()) ELSE NULL END
      WHERE id = $1`,
    [conversation.id, sequence, row.created_at, status],
  );
  return toMessage(row, conversation.case_number, status, stored);
}

/**
 * POST /v1/support/messages: opens a ticket, or adds a message to the existing
 * conversation the body names (`conversation_id`, 400 when it is not the caller's).
 */
export async function sendSupportMessage(
  deps: Deps,
  auth: AuthContext,
  input: SupportMessageInput,
): Promise<SupportMessage> {
  await assertLinkedObjects(deps.db, auth, { conversation_id: ['support_conversation', input.conversation_id] });
  return postSupportMessage(deps, auth, input);
}

/** POST /v1/support/conversations/{id}/messages: a reply to the conversation in the path (404 when it is not the caller's). */
export async function replyToSupportConversation(
  deps: Deps,
  auth: AuthContext,
  conversationId: string,
  input: Omit<SupportMessageInput, 'conversation_id'>,
): Promise<SupportMessage> {
  return postSupportMessage(deps, auth, { ...input, conversation_id: conversationId });
}

/** Replying to a resolved ticket reopens it, which counts against the unresolved limit. */
async function postSupportMessage(deps: Deps, auth: AuthContext, input: SupportMessageInput): Promise<SupportMessage> {
  if (!input.conversation_id && !input.category) {
    throw errors.validation([{ path: 'category', message: 'required when opening a new ticket (no conversation_id)' }]);
  }
  const attachments = await decodeAttachments(input.attachments ?? []);
  const author = { type: isAgentKey(auth) ? ('agent' as const) : ('member' as const), agentId: auth.agentId };
  return deps.db.transaction(async (tx) => {
    let conversation: ConversationColumns;
    if (input.conversation_id) {
      const found = await findConversation(tx, auth, input.conversation_id, true);
      if (found.status === 'resolved') await assertTicketAllowed(tx, auth.memberId!, { newTicket: false });
      conversation = found;
    } else {
      await assertTicketAllowed(tx, auth.memberId!, { newTicket: true });
      [conversation] = await sqlRows<ConversationColumns>(
        tx,
        `INSERT INTO support_conversations (member_id, agent_id, opened_by, category, environment)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${CONVERSATION_COLUMNS.replace(/c\./g, '')}`,
        [auth.memberId, auth.agentId, auth.ownerKey, input.category, environmentOf(auth)],
      );
    }
    return insertMessage(
      deps,
      tx,
      conversation,
      author,
      input.category ?? conversation.category,
      input.body,
      attachments,
      'open',
    );
  });
}

export async function listSupportConversations(
  deps: Deps,
  auth: AuthContext,
  filter: { status?: SupportStatus; agent_id?: string; limit: number; offset: number },
): Promise<{ conversations: SupportConversation[]; total: number }> {
  const agentId = await resolveAgentFilter(deps, auth, filter.agent_id);
  const args: unknown[] = [auth.memberId, environmentOf(auth)];
  let where = 'c.member_id = $1 AND c.environment = $2';
  if (agentId) {
    args.push(agentId);
    where += ` AND c.agent_id = $${args.length}`;
  }
  if (filter.status) {
    args.push(filter.status);
    where += ` AND c.status = $${args.length}`;
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM support_conversations c WHERE ${where}`,
    args,
  );
  const rows = await sqlRows<ConversationColumns>(
    deps.db,
    `SELECT ${CONVERSATION_COLUMNS} FROM support_conversations c WHERE ${where}
      ORDER BY c.last_message_at DESC, c.id LIMIT ${filter.limit} OFFSET ${filter.offset}`,
    args,
  );
  return { conversations: rows.map(toConversation), total };
}

/** A conversation's messages, oldest first, with signed attachment URLs. */
export async function getSupportMessages(
  deps: Deps,
  auth: AuthContext,
  conversationId: string,
  page: { limit: number; offset: number },
): Promise<{ conversation: SupportConversation; messages: SupportMessage[]; total: number }> {
  const conversation = await findConversation(deps.db, auth, conversationId);
  const rows = await sqlRows<MessageColumns>(
    deps.db,
    `SELECT ${MESSAGE_COLUMNS} FROM support_messages
      WHERE conversation_id = $1 ORDER BY sequence LIMIT ${page.limit} OFFSET ${page.offset}`,
    [conversationId],
  );
  const attachments = await loadAttachments(
    deps,
    rows.map((r) => r.id),
    true,
  );
  return {
    conversation: toConversation(conversation),
    messages: rows.map((r) => toMessage(r, conversation.case_number, conversation.status, attachments.get(r.id) ?? [])),
    total: conversation.message_count,
  };
}

/** The member (or agent) marks its ticket resolved; idempotent. */
export async function resolveSupportConversation(
  deps: Deps,
  auth: AuthContext,
  conversationId: string,
): Promise<SupportConversation> {
  return deps.db.transaction(async (tx) => {
    const row = await findConversation(tx, auth, conversationId, true);
    if (row.status === 'resolved') return toConversation(row);
    await sqlRun(tx, `UPDATE support_conversations SET status = 'resolved', resolved_at = now() WHERE id = $1`, [
      row.id,
    ]);
    return toConversation(await findConversation(tx, auth, row.id));
  });
}

/** The support team's side (operator CLI): answer a case, optionally resolving it. */
export async function answerSupportConversation(
  deps: Deps,
  caseRef: string,
  input: { body: string; resolve?: boolean },
): Promise<SupportMessage> {
  const byNumber = /^SUP-(\d+)$/i.exec(caseRef);
  return deps.db.transaction(async (tx) => {
    const [conversation] = await sqlRows<ConversationColumns>(
      tx,
      `SELECT ${CONVERSATION_COLUMNS} FROM support_conversations c WHERE ${byNumber ? 'c.case_number = $1' : 'c.id::text = $1'} FOR UPDATE`,
      [byNumber ? Number(byNumber[1]) : caseRef],
    );
    if (!conversation) throw errors.notFound('Support conversation');
    const status: SupportStatus = input.resolve ? 'resolved' : 'waiting_on_member';
    return insertMessage(
      deps,
      tx,
      conversation,
      { type: 'support', agentId: null },
      conversation.category,
      input.body,
      [],
      status,
    );
  });
}
