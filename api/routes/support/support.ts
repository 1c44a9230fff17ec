// Support tickets: open a ticket or reply in one, list conversations, read messages
// (with signed attachment URLs), resolve. Scope message.send for every call.
import { z } from 'zod';
import { defineRoute, HandlerArgs, RouteDef, RouteResult } from '../../route';
import { IdParams, Pagination, pagination, paginationQuery, Uuid, multiLine, singleLine } from '../../schemas/common';
import {
  ATTACHMENT_CONTENT_TYPES,
  ATTACHMENT_FILENAME_MAX,
  decodeBase64,
  MAX_ACTIVE_TICKETS,
  MAX_ATTACHMENT_TOTAL_BYTES,
  MAX_ATTACHMENTS,
  MAX_NEW_TICKETS_PER_DAY,
  MESSAGE_BODY_MAX,
  SUPPORT_CATEGORIES,
  SUPPORT_STATUSES,
} from '../../../domain/support/conversations';
import { idempotentRoute } from '../../idempotent';
import {
  getSupportMessages,
  listSupportConversations,
  replyToSupportConversation,
  resolveSupportConversation,
  sendSupportMessage,
} from '../../../services/support/support';

export const MessageText = multiLine(
  z.string().min(1, { abort: true }).max(MESSAGE_BODY_MAX, { abort: true }),
).describe(`1-${MESSAGE_BODY_MAX} characters`);

export const SupportAttachmentBody = z.strictObject({
  filename: singleLine(z.string().min(1).max(ATTACHMENT_FILENAME_MAX)),
  content_type: z.enum(ATTACHMENT_CONTENT_TYPES),
  content_base64: z
    .string()
    .min(1)
    .refine((v) => decodeBase64(v) !== null, 'must be base64')
    .describe('file content, base64'),
});

const attachmentsField = z
  .array(SupportAttachmentBody)
  .max(MAX_ATTACHMENTS)
  .describe(
    `at most ${MAX_ATTACHMENTS} files (PDF, PNG, JPEG, TXT, CSV), ${MAX_ATTACHMENT_TOTAL_BYTES} bytes in total after decoding`,
  );

export const SupportMessageBody = z.strictObject({
  category: z
    .enum(SUPPORT_CATEGORIES)
    .optional()
    .describe('required when opening a ticket; defaults to the conversation category on replies'),
  body: MessageText,
  conversation_id: Uuid.optional().describe('reply in this existing conversation instead of opening a ticket'),
  attachments: attachmentsField.optional(),
});

export const SupportReplyBody = SupportMessageBody.omit({ conversation_id: true });

export const SupportConversationsQuery = z.object({
  status: z.enum(SUPPORT_STATUSES).optional(),
  agent_id: Uuid.optional().describe("member keys: only this agent's conversations"),
  ...paginationQuery(),
});

export const SupportMessagesQuery = z.object({ ...paginationQuery({ limit: 50 }) });

export const SupportAttachment = z.object({
  id: Uuid,
  filename: z.string(),
  content_type: z.string(),
  size_bytes: z.number().int(),
  sha256: z.string(),
  url: z.string().optional().describe('signed, 1-hour expiry (on reads)'),
});

export const SupportMessageRecord = z.object({
  id: Uuid,
  conversation_id: Uuid,
  support_case_id: z.string().describe('the case reference a human quotes, e.g. SUP-000042'),
  support_message_id: z.string().describe('this message within the case, e.g. SUP-000042-M1'),
  category: z.enum(SUPPORT_CATEGORIES),
  status: z.enum(SUPPORT_STATUSES).describe('the case status once this message was recorded'),
  author_type: z.enum(['member', 'agent', 'support']),
  agent_id: Uuid.nullable(),
  body: z.string(),
  attachments: z.array(SupportAttachment),
  created_at: z.string(),
});

export const SupportConversationRecord = z.object({
  id: Uuid,
  support_case_id: z.string(),
  category: z.enum(SUPPORT_CATEGORIES),
  status: z.enum(SUPPORT_STATUSES),
  agent_id: Uuid.nullable(),
  message_count: z.number().int(),
  last_message_at: z.string(),
  resolved_at: z.string().nullable(),
  created_at: z.string(),
});

export const SupportMessageResponse = z.object({ message: SupportMessageRecord, test_mode: z.boolean() });

const IDEMPOTENCY_HEADER = {
  'Idempotency-Key': 'optional; a retry with the same key and body returns the first answer without a second message',
};

/** Runs a POST once per Idempotency-Key (when sent) and returns the stored answer to retries. */
export function idempotentPost(
  args: HandlerArgs<unknown, unknown, unknown>,
  operation: string,
  fn: () => Promise<RouteResult>,
): Promise<RouteResult> {
  return idempotentRoute(args, operation, () => fn());
}

const LIMITS = `At most ${MAX_ACTIVE_TICKETS} unresolved tickets per member (422 SUPPORT_ACTIVE_TICKET_LIMIT) and ${MAX_NEW_TICKETS_PER_DAY} new tickets per rolling 24 hours (429 SUPPORT_TICKET_RATE_LIMITED with Retry-After); replies do not count, except that replying to a resolved ticket reopens it.`;

export const routes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/v1/support/messages',
    summary: 'Open a support ticket, or reply in an existing conversation',
    description: LIMITS,
    tags: ['Support'],
    body: SupportMessageBody,
    requestHeaders: IDEMPOTENCY_HEADER,
    responses: {
      201: { description: 'Message recorded', schema: SupportMessageResponse },
      400: {
        description:
          "Validation, or a conversation_id that is not one of the caller's conversations (fields[].path conversation_id)",
      },
      422: { description: 'SUPPORT_ACTIVE_TICKET_LIMIT' },
      429: { description: 'SUPPORT_TICKET_RATE_LIMITED or the API rate limit' },
    },
    handler: async (args) =>
      idempotentPost(args, 'POST /v1/support/messages', async () => ({
        status: 201,
        body: { message: await sendSupportMessage(args.deps, args.auth, args.body) },
      })),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/support/conversations',
    summary: 'List support conversations, most recent activity first',
    tags: ['Support'],
    query: SupportConversationsQuery,
    responses: {
      200: {
        description: 'Conversations',
        schema: z.object({
          conversations: z.array(SupportConversationRecord),
          pagination: Pagination,
          test_mode: z.boolean(),
        }),
      },
    },
    handler: async ({ deps, auth, query }) => {
      const { conversations, total } = await listSupportConversations(deps, auth, query);
      return { body: { conversations, pagination: pagination(total, query.limit, query.offset) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/support/conversations/:id/messages',
    summary: 'Read a support conversation, oldest message first',
    tags: ['Support'],
    params: IdParams,
    query: SupportMessagesQuery,
    responses: {
      200: {
        description: 'Messages',
        schema: z.object({
          conversation: SupportConversationRecord,
          messages: z.array(SupportMessageRecord),
          pagination: Pagination,
          test_mode: z.boolean(),
        }),
      },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params, query }) => {
      const { conversation, messages, total } = await getSupportMessages(deps, auth, params.id, query);
      return { body: { conversation, messages, pagination: pagination(total, query.limit, query.offset) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/support/conversations/:id/messages',
    summary: 'Reply in a support conversation',
    description: 'Replying to a resolved ticket reopens it (subject to the unresolved-ticket limit).',
    tags: ['Support'],
    params: IdParams,
    body: SupportReplyBody,
    requestHeaders: IDEMPOTENCY_HEADER,
    responses: {
      201: { description: 'Message recorded', schema: SupportMessageResponse },
      404: { description: 'Not found' },
      422: { description: 'SUPPORT_ACTIVE_TICKET_LIMIT (reopening)' },
    },
    handler: async (args) =>
      idempotentPost(args, 'POST /v1/support/conversations/:id/messages', async () => ({
        status: 201,
        body: { message: await replyToSupportConversation(args.deps, args.auth, args.params.id, args.body) },
      })),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/support/conversations/:id/resolve',
    summary: 'Mark a support ticket resolved',
    tags: ['Support'],
    params: IdParams,
    responses: {
      200: {
        description: 'Resolved (idempotent)',
        schema: z.object({ conversation: SupportConversationRecord, test_mode: z.boolean() }),
      },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params }) => ({
      body: { conversation: await resolveSupportConversation(deps, auth, params.id) },
    }),
  }),
];
