// Schemas of agents, their instructions document and proposals, and mailboxes.
import { z } from 'zod';
import { AGENT_NAME_MAX, AGENT_NAME_MIN } from '../../../domain/accounts/agents';
import { MAX_INSTRUCTIONS_CHARS } from '../../../services/accounts/instructions';
import {
  ExpectedVersion,
  multiLine,
  Pagination,
  PG_INT_MAX,
  singleLine,
  withoutHiddenCharacters,
} from '../../schemas/common';
import { WebhookLogEntry } from '../webhooks/webhooks.schemas';

const AgentName = singleLine(
  z
    .string()
    .trim()
    .min(AGENT_NAME_MIN, { message: `must be ${AGENT_NAME_MIN}-${AGENT_NAME_MAX} characters` })
    .max(AGENT_NAME_MAX, { message: `must be ${AGENT_NAME_MIN}-${AGENT_NAME_MAX} characters` }),
);
const DisplayName = withoutHiddenCharacters(z.string().max(100), 'single_line');
const Description = withoutHiddenCharacters(z.string().max(2000), 'multi_line');
const WebhookUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048);

export const AgentCreateRequest = z.strictObject({
  name: AgentName,
  display_name: DisplayName.optional(),
  description: Description.optional(),
  webhook_url: WebhookUrl.optional().describe('public https URL for legacy agent webhooks'),
});

export const AgentPatchRequest = z.strictObject({
  name: AgentName.optional(),
  display_name: DisplayName.nullable().optional(),
  description: Description.nullable().optional(),
  webhook_url: WebhookUrl.nullable().optional(),
});

export const AgentIdParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });

const InstructionsRef = z.object({ version: z.number().int(), hash: z.string(), updated_at: z.string() });

export const Agent = z.object({
  id: z.string(),
  name: z.string(),
  display_name: z.string().nullable(),
  description: z.string().nullable(),
  webhook_url: z.string().nullable(),
  webhook_signing_key_id: z.string().nullable().describe('id of the legacy webhook signing key (whsk_...)'),
  status: z.literal('active'),
  mailbox_id: z.string(),
  instructions: InstructionsRef,
  created_at: z.string(),
});

export const AgentDetail = Agent.extend({
  recent_webhooks: z
    .array(WebhookLogEntry)
    .describe(
      'latest live deliveries to the agent webhook (GET /v1/webhooks/events/{id} has the attempts); always empty for test keys',
    ),
  webhook_signing_key: z
    .string()
    .optional()
    .describe('the legacy webhook signing secret; only in the answer that set a webhook_url on an agent without one'),
  test_mode: z.boolean(),
});

export const AgentList = z.object({ agents: z.array(Agent), pagination: Pagination, test_mode: z.boolean() });

export const AgentDeleted = z.object({
  id: z.string(),
  deleted: z.literal(true),
  deleted_at: z.string(),
  revoked_credentials: z.number().int(),
  test_mode: z.boolean(),
});

export const InstructionsDocument = z.object({
  agent_id: z.string(),
  text: z.string(),
  version: z.number().int(),
  hash: z.string().describe('SHA-256 hex of text'),
  updated_at: z.string(),
  source: z.enum(['renter', 'platform_fallback']),
  test_mode: z.boolean(),
});

export const InstructionsSaveRequest = z.strictObject({
  text: z.string().max(MAX_INSTRUCTIONS_CHARS, { message: `must be at most ${MAX_INSTRUCTIONS_CHARS} characters` }),
  expected_version: ExpectedVersion,
});

export const InstructionsVersions = z.object({
  versions: z.array(
    z.object({
      version: z.number().int(),
      text: z.string(),
      hash: z.string(),
      source: z.enum(['renter', 'platform_fallback']),
      reason: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
  pagination: Pagination,
  test_mode: z.boolean(),
});

export const ProposalRequest = z.strictObject({
  suggested_content: multiLine(
    z
      .string()
      .min(1)
      .max(MAX_INSTRUCTIONS_CHARS, { message: `must be at most ${MAX_INSTRUCTIONS_CHARS} characters` }),
  ),
  reason: withoutHiddenCharacters(z.string().max(2000), 'multi_line').optional(),
});

export const Proposal = z.object({
  id: z.string(),
  agent_id: z.string(),
  status: z.enum(['pending', 'accepted', 'rejected']),
  base_version: z.number().int(),
  suggested_content: z.string(),
  reason: z.string().nullable(),
  resulting_version: z.number().int().nullable(),
  decided_at: z.string().nullable(),
  created_at: z.string(),
});

export const ProposalQuery = z.object({
  status: z.enum(['pending', 'accepted', 'rejected']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(PG_INT_MAX).default(0),
});

export const ProposalParams = AgentIdParams.extend({ proposalId: z.uuid({ message: 'must be a UUID' }) });

export const ProposalDecisionRequest = z.strictObject({
  decision: z.enum(['accept', 'reject']),
  expected_version: ExpectedVersion.optional().describe('required to accept: the current instructions version'),
});

export const Mailbox = z.object({
  id: z.string(),
  type: z.literal('outbound'),
  agent_id: z.string(),
  name: z.string(),
  return_address: z
    .object({
      name: z.string().nullable(),
      company: z.string().nullable(),
      line1: z.string(),
      line2: z.string().nullable(),
      city: z.string(),
      state: z.string(),
      zip: z.string(),
    })
    .nullable(),
  status: z.literal('active'),
});
