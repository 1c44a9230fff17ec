// Conversations between a member (or one of its agents) and the facility that fulfils
// its mail. A new live conversation goes to the facility that fulfils the member's
// pieces; facility keys read and answer the conversations addressed to them (and claim
// unaddressed live ones by answering). Test keys keep sandbox conversations apart: no
// facility ever sees them.
import { randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { assignFacility } from '../operations/facilities';
import { resolveAgentFilter } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { errors } from '../../domain/shared/errors';
import type { FacilityConversationRow, FacilityMessageRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

export interface FacilityMessageInput {
  body: string;
  conversation_id?: string;
  subject?: string;
}

export interface FacilityConversation {
  id: string;
  subject: string | null;
  agent_id: string | null;
  facility_id: string | null;
  message_count: number;
  last_message_at: string;
  created_at: string;
  test_mode: boolean;
}

export interface FacilityMessage {
  id: string;
  conversation_id: string;
  sender_type: 'member' | 'agent' | 'facility';
  agent_id: string | null;
  facility_id: string | null;
  body: string;
  created_at: string;
}

// Every column of each table, so their rows are FacilityConversationRow and FacilityMessageRow.
const CONVERSATION_COLUMNS = `c.id, c.member_id, c.agent_id, c.facility_id, c.subject, c.environment, c.message_count,
  c.last_message_at, c.created_at`;
const MESSAGE_COLUMNS = `id, conversation_id, sequence, sender_type, agent_id, facility_id, body, created_at`;

function toConversation(row: FacilityConversationRow): FacilityConversation {
  return {
    id: row.id,
    subject: row.subject,
    agent_id: row.agent_id,
    facility_id: row.facility_id,
    message_count: row.message_count,
    last_message_at: row.last_message_at.toISOString(),
    created_at: row.created_at.toISOString(),
    test_mode: row.environment === 'test',
  };
}

function toMessage(row: FacilityMessageRow): FacilityMessage {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    sender_type: row.sender_type,
    agent_id: row.agent_id,
    facility_id: row.facility_id,
    body: row.body,
    created_at: row.created_at.toISOString(),
  };
}

/** Which conversations a key may see: its member's (agent keys: its agent's) in its environment, or a facility's. */
function visibility(auth: AuthContext, firstArg: number): { where: string; args: unknown[] } {
  if (auth.kind === 'facility') {
    return {
      where: `c.environment = 'live' AND (c.facility_id = $${firstArg} OR c.facility_id IS NULL)`,
      args: [auth.facilityId],
    };
  }
  const args: unknown[] = [auth.memberId, auth.testMode ? 'test' : 'live'];
  let where = `c.member_id = $${firstArg} AND c.environment = $${firstArg + 1}`;
  if (isAgentKey(auth)) {
    args.push(auth.agentId);
    where += ` AND c.agent_id = $${firstArg + 2}`;
  }
  return { where, args };
}

async function findConversation(
  db: Queryable,
  auth: AuthContext,
  id: string,
  forUpdate = false,
): Promise<FacilityConversationRow> {
  const v = visibility(auth, 2);
  const [row] = await sqlRows<FacilityConversationRow>(
    db,
    `SELECT ${CONVERSATION_COLUMNS} FROM facility_conversations c WHERE c.id = $1 AND ${v.where} ${forUpdate ? 'FOR UPDATE' : ''}`,
    [id, ...v.args],
  );
  if (!row) throw errors.notFound('Facility conversation');
  return row;
}

/** Appends a message and answers it with the conversation as updated by it. */
async function appendMessage(
  tx: Queryable,
  conversation: FacilityConversationRow,
  sender: Pick<FacilityMessage, 'sender_type' | 'agent_id' | 'facility_id'>,
  body: string,
): Promise<{ message: FacilityMessage; conversation: FacilityConversation }> {
  const sequence = conversation.message_count + 1;
  const [row] = await sqlRows<FacilityMessageRow>(
    tx,
    `INSERT INTO facility_messages (id, conversation_id, sequence, sender_type, agent_id, facility_id, body)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${MESSAGE_COLUMNS}`,
    [randomUUID(), conversation.id, sequence, sender.sender_type, sender.agent_id, sender.facility_id, body],
  );
  const [updated] = await sqlRows<FacilityConversationRow>(
    tx,
    `WITH changed AS (UPDATE facility_conversations c SET message_count = $2, last_message_at = $3 WHERE c.id = $1
                       RETURNING ${CONVERSATION_COLUMNS}) SELECT * FROM changed`,
    [conversation.id, sequence, row.created_at],
  );
  return { message: toMessage(row), conversation: toConversation(updated) };
}

/** A member or agent writes to the facility: a new conversation, or a reply in one (`conversation_id`). */
export async function sendFacilityMessage(
  deps: Deps,
  auth: AuthContext,
  input: FacilityMessageInput,
): Promise<{ message: FacilityMessage; conversation: FacilityConversation }> {
  await assertLinkedObjects(deps.db, auth, { conversation_id: ['facility_conversation', input.conversation_id] });
  return deps.db.transaction(async (tx) => {
    let conversation: FacilityConversationRow;
    if (input.conversation_id) {
      conversation = await findConversation(tx, auth, input.conversation_id, true);
    } else {
      const facility = await assignFacility(tx, auth.testMode, auth.memberId);
      [conversation] = await sqlRows<FacilityConversationRow>(
        tx,
        `INSERT INTO facility_conversations (member_id, agent_id, facility_id, subject, environment)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${CONVERSATION_COLUMNS.replace(/c\./g, '')}`,
        [auth.memberId, auth.agentId, facility.id, input.subject ?? null, auth.testMode ? 'test' : 'live'],
      );
    }
    return appendMessage(
      tx,
      conversation,
      { sender_type: isAgentKey(auth) ? 'agent' : 'member', agent_id: auth.agentId, facility_id: null },
      input.body,
    );
  });
}

/** Conversations, most recent activity first. Member keys may narrow to one agent. */
export async function listFacilityConversations(
  deps: Deps,
  auth: AuthContext,
  filter: { agent_id?: string; limit: number; offset: number },
): Promise<{ conversations: Array<FacilityConversation & { member_id?: string }>; total: number }> {
  const v = visibility(auth, 1);
  let where = v.where;
  const args = [...v.args];
  if (auth.kind !== 'facility') {
    const agentId = await resolveAgentFilter(deps, auth, filter.agent_id);
    if (agentId && !isAgentKey(auth)) {
      args.push(agentId);
      where += ` AND c.agent_id = $${args.length}`;
    }
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM facility_conversations c WHERE ${where}`,
    args,
  );
  const rows = await sqlRows<FacilityConversationRow>(
    deps.db,
    `SELECT ${CONVERSATION_COLUMNS} FROM facility_conversations c WHERE ${where}
      ORDER BY c.last_message_at DESC, c.id LIMIT ${filter.limit} OFFSET ${filter.offset}`,
    args,
  );
  // The facility needs to know which account wrote; members already know.
  const conversations = rows.map((r) =>
    auth.kind === 'facility' ? { ...toConversation(r), member_id: r.member_id } : toConversation(r),
  );
  return { conversations, total };
}

/** A conversation's messages, oldest first. */
export async function getFacilityMessages(
  deps: Deps,
  auth: AuthContext,
  conversationId: string,
  page: { limit: number; offset: number },
): Promise<{ conversation: FacilityConversation; messages: FacilityMessage[]; total: number }> {
  const conversation = await findConversation(deps.db, auth, conversationId);
  const rows = await sqlRows<FacilityMessageRow>(
    deps.db,
    `SELECT ${MESSAGE_COLUMNS} FROM facility_messages WHERE conversation_id = $1 ORDER BY sequence LIMIT ${page.limit} OFFSET ${page.offset}`,
    [conversationId],
  );
  return {
    conversation: toConversation(conversation),
    messages: rows.map(toMessage),
    total: conversation.message_count,
  };
}

/** The facility answers; answering an unaddressed live conversation claims it for this facility. */
export async function answerAsFacility(
  deps: Deps,
  auth: AuthContext,
  conversationId: string,
  input: { body: string },
): Promise<{ message: FacilityMessage; conversation: FacilityConversation }> {
  return deps.db.transaction(async (tx) => {
    const conversation = await findConversation(tx, auth, conversationId, true);
    if (!conversation.facility_id) {
      await sqlRun(tx, `UPDATE facility_conversations SET facility_id = $2 WHERE id = $1`, [
        conversation.id,
        auth.facilityId,
      ]);
    }
    return appendMessage(
      tx,
      conversation,
      { sender_type: 'facility', agent_id: null, facility_id: auth.facilityId },
      input.body,
    );
  });
}
