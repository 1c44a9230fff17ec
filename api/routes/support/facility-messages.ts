// Facility messages. Members and agents (scope message.send) write to the facility that
// fulfils their mail and read the answers; facility keys (sk_facility_) read and answer
// the conversations addressed to their facility. Pages: default 50, max 100.
import { z } from 'zod';
import { defineRoute, RouteDef } from '../../route';
import { IdParams, Pagination, pagination, paginationQuery, Uuid, singleLine } from '../../schemas/common';
import { FACILITY_MESSAGES_PAGE } from '../../../domain/support/conversations';
import {
  answerAsFacility,
  getFacilityMessages,
  listFacilityConversations,
  sendFacilityMessage,
} from '../../../services/support/facility-messages';
import { idempotentPost, MessageText } from './support';
import { IDEMPOTENCY_KEY_HEADER, idempotentRoute } from '../../idempotent';
import type { Deps } from '../../../services/shared/deps';
import type { AuthContext } from '../../../services/accounts/auth';

export const FacilityMessageBody = z.strictObject({
  body: MessageText,
  conversation_id: Uuid.optional().describe('reply in this conversation instead of starting one'),
  subject: singleLine(z.string().min(1).max(200)).optional().describe('subject of a new conversation'),
});

export const FacilityAnswerBody = z.strictObject({ body: MessageText });

const page = () => paginationQuery({ limit: FACILITY_MESSAGES_PAGE.limit, max: FACILITY_MESSAGES_PAGE.max });

export const FacilityConversationsQuery = z.object({
  agent_id: Uuid.optional().describe("member keys: only this agent's conversations"),
  ...page(),
});
export const FacilityMessagesQuery = z.object({ ...page() });

export const FacilityConversationRecord = z.object({
  id: Uuid,
  subject: z.string().nullable(),
  agent_id: Uuid.nullable(),
  facility_id: Uuid.nullable().describe('null until a facility is assigned (sandbox conversations never are)'),
  member_id: Uuid.optional().describe('facility keys only'),
  message_count: z.number().int(),
  last_message_at: z.string(),
  created_at: z.string(),
  test_mode: z.boolean(),
});

export const FacilityMessageRecord = z.object({
  id: Uuid,
  conversation_id: Uuid,
  sender_type: z.enum(['member', 'agent', 'facility']),
  agent_id: Uuid.nullable(),
  facility_id: Uuid.nullable(),
  body: z.string(),
  created_at: z.string(),
});

export const FacilityMessageSent = z.object({
  message: FacilityMessageRecord,
  conversation: FacilityConversationRecord,
  test_mode: z.boolean(),
});
export const FacilityConversationList = z.object({
  conversations: z.array(FacilityConversationRecord),
  pagination: Pagination,
  test_mode: z.boolean(),
});
export const FacilityMessageList = z.object({
  conversation: FacilityConversationRecord,
  messages: z.array(FacilityMessageRecord),
  pagination: Pagination,
  test_mode: z.boolean(),
});

// The member's and the facility's sides read conversations the same way; the services
// scope what each caller sees.
async function conversationsPage(deps: Deps, auth: AuthContext, query: { limit: number; offset: number }) {
  const { conversations, total } = await listFacilityConversations(deps, auth, query);
  return { body: { conversations, pagination: pagination(total, query.limit, query.offset) } };
}

async function messagesPage(deps: Deps, auth: AuthContext, id: string, query: z.infer<typeof FacilityMessagesQuery>) {
  const { conversation, messages, total } = await getFacilityMessages(deps, auth, id, query);
  return { body: { conversation, messages, pagination: pagination(total, query.limit, query.offset) } };
}

export const routes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/v1/facility-messages',
    summary: 'Write to the facility that fulfils your mail (new conversation or reply)',
    tags: ['Facility messages'],
    body: FacilityMessageBody,
    requestHeaders: {
      'Idempotency-Key':
        'optional; a retry with the same key and body returns the first answer without a second message',
    },
    responses: {
      201: { description: 'Message recorded', schema: FacilityMessageSent },
      400: {
        description:
          "Validation, or a conversation_id that is not one of the caller's conversations (fields[].path conversation_id)",
      },
    },
    handler: async (args) =>
      idempotentPost(args, 'POST /v1/facility-messages', async () => ({
        status: 201,
        body: await sendFacilityMessage(args.deps, args.auth, args.body),
      })),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/facility-messages/conversations',
    summary: 'List facility conversations, most recent activity first',
    tags: ['Facility messages'],
    query: FacilityConversationsQuery,
    responses: { 200: { description: 'Conversations', schema: FacilityConversationList } },
    handler: ({ deps, auth, query }) => conversationsPage(deps, auth, query),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/facility-messages/conversations/:id/messages',
    summary: 'Read a facility conversation, oldest message first',
    tags: ['Facility messages'],
    params: IdParams,
    query: FacilityMessagesQuery,
    responses: { 200: { description: 'Messages', schema: FacilityMessageList }, 404: { description: 'Not found' } },
    handler: ({ deps, auth, params, query }) => messagesPage(deps, auth, params.id, query),
  }),

  // The facility's side.
  defineRoute({
    method: 'get',
    path: '/v1/facility/conversations',
    summary: 'Facility: conversations addressed to this facility (and unaddressed live ones)',
    tags: ['Facility'],
    query: z.object({ ...page() }),
    responses: { 200: { description: 'Conversations', schema: FacilityConversationList } },
    handler: ({ deps, auth, query }) => conversationsPage(deps, auth, query),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/facility/conversations/:id/messages',
    summary: 'Facility: read a conversation',
    tags: ['Facility'],
    params: IdParams,
    query: FacilityMessagesQuery,
    responses: { 200: { description: 'Messages', schema: FacilityMessageList }, 404: { description: 'Not found' } },
    handler: ({ deps, auth, params, query }) => messagesPage(deps, auth, params.id, query),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/conversations/:id/messages',
    summary: 'Facility: answer a conversation (claims it when unaddressed)',
    tags: ['Facility'],
    params: IdParams,
    body: FacilityAnswerBody,
    requestHeaders: IDEMPOTENCY_KEY_HEADER,
    responses: {
      201: { description: 'Answer recorded', schema: FacilityMessageSent },
      404: { description: 'Not found' },
      422: { description: 'IDEMPOTENCY_KEY_REUSED' },
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/conversations/:id/messages', async () => ({
        status: 201,
        body: await answerAsFacility(args.deps, args.auth, args.params.id, args.body),
      })),
  }),
];
