// Account tools: the outbound mailbox, usage, and messages to the fulfilling facility.
import { z } from 'zod';
import { listMailboxes } from '../../../services/accounts/agents';
import { getUsage } from '../../../services/billing/usage';
import {
  getFacilityMessages,
  listFacilityConversations,
  sendFacilityMessage,
} from '../../../services/support/facility-messages';
import { pagination, Uuid } from '../../schemas/common';
import {
  FacilityConversationsQuery,
  FacilityMessageBody,
  FacilityMessagesQuery,
} from '../../routes/support/facility-messages';
import { UsageQuery } from '../../routes/outbound-mail/mail.schemas';
import { defineTool } from '../tool';
import { testModeFlag } from './outbound';

export const accountTools = [
  defineTool({
    name: 'get_mailbox',
    description:
      'The logical outbound mailbox you send from (member keys: one per agent), with its return address. It is never a receiving address.',
    input: z.object({}),
    access: 'GET /v1/mailboxes',
    handler: async (deps, auth) => ({ mailboxes: await listMailboxes(deps, auth) }),
  }),
  defineTool({
    name: 'get_usage',
    description:
      'Usage and spend for a period (period_start/period_end, ISO 8601; default this calendar month): pieces by status, spend, refunds, balance and ledger movements.',
    input: UsageQuery.extend(testModeFlag),
    access: 'GET /v1/usage',
    handler: (deps, auth, input) => getUsage(deps, auth, input),
  }),
  defineTool({
    name: 'send_facility_message',
    description:
      'Write to the facility that prints and posts your mail (body 1-5000 characters). Omit conversation_id to start a conversation (optional subject); pass it to reply.',
    input: FacilityMessageBody,
    access: 'POST /v1/facility-messages',
    mutation: true,
    handler: (deps, auth, input) =>
      sendFacilityMessage(deps, auth, {
        body: input.body,
        conversation_id: input.conversation_id,
        subject: input.subject,
      }),
  }),
  defineTool({
    name: 'list_facility_conversations',
    description: 'Your conversations with the facility, most recent activity first (limit default 50, max 100).',
    input: FacilityConversationsQuery,
    access: 'GET /v1/facility-messages/conversations',
    handler: async (deps, auth, input) => {
      const { conversations, total } = await listFacilityConversations(deps, auth, input);
      return { conversations, pagination: pagination(total, input.limit, input.offset) };
    },
  }),
  defineTool({
    name: 'get_facility_messages',
    description: 'The messages of one facility conversation, oldest first (limit default 50, max 100).',
    input: FacilityMessagesQuery.extend({ conversation_id: Uuid }),
    access: 'GET /v1/facility-messages/conversations/:id/messages',
    handler: async (deps, auth, input) => {
      const { conversation, messages, total } = await getFacilityMessages(deps, auth, input.conversation_id, input);
      return { conversation, messages, pagination: pagination(total, input.limit, input.offset) };
    },
  }),
];
