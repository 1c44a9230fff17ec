// Schemas of mailbox rules (agent-specific standing instructions for arriving pieces).
import { z } from 'zod';
import { PG_INT_MAX, TestMode } from '../../schemas/common';
import { ARRIVAL_LIMITS, PIECE_KINDS } from '../../../domain/physical-inbound/package-arrival';
import { AgentIdQuery, ArrivalAction, ArrivalActionRequest } from './expected-shipments.schemas';
import { PageInfo, qEnum, qInt } from './physical-inbound.schemas';

const L = ARRIVAL_LIMITS;

export const RuleMatch = z
  .strictObject({
    sender_contains: z
      .array(z.string().min(1).max(L.senderTermLength))
      .max(L.termsPerList)
      .optional()
      .describe("any of these literal terms in the label's sender name (NFKC, lower case, spaces collapsed)"),
    carriers: z
      .array(z.string().trim().min(1).max(L.carrierLength))
      .max(L.termsPerList)
      .optional()
      .describe('any of these carriers (whole name, any case)'),
    kinds: z.array(z.enum(PIECE_KINDS)).max(PIECE_KINDS.length).optional(),
  })
  .describe('every criterion given must hold; at least one is required');

export const RuleApply = z
  .strictObject({
    request_action: ArrivalActionRequest.optional(),
    add_tags: z.array(z.string().trim().min(1).max(L.tagLength)).max(L.tagsPerRule).optional().describe('package tags'),
  })
  .describe('at least one of request_action and add_tags');

export const RuleCreate = z.strictObject({
  name: z.string().trim().min(1).max(L.nameLength),
  enabled: z.boolean().default(true),
  match: RuleMatch,
  apply: RuleApply,
});

export const RuleUpdate = z.strictObject({
  name: z.string().trim().min(1).max(L.nameLength).optional(),
  enabled: z.boolean().optional(),
  match: RuleMatch.optional().describe('replaces the match'),
  apply: RuleApply.optional().describe('replaces what the rule does'),
});

export const RuleListQuery = z.strictObject({
  ...AgentIdQuery,
  enabled: qEnum(['true', 'false'] as const)
    .transform((v) => v === 'true')
    .optional(),
  limit: qInt(1, 100, 20),
  offset: qInt(0, PG_INT_MAX, 0),
});

export const MailboxRule = z.object({
  object: z.literal('mailbox_rule'),
  id: z.string(),
  agent_id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  match: z.object({
    sender_contains: z.array(z.string()).optional(),
    carriers: z.array(z.string()).optional(),
    kinds: z.array(z.enum(PIECE_KINDS)).optional(),
  }),
  apply: z.object({
    request_action: ArrivalAction.optional(),
    add_tags: z.array(z.string()).optional(),
  }),
  created_by: z.enum(['agent', 'member']),
  match_count: z.number().int().describe('pieces it matched'),
  last_matched_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const MailboxRuleBody = z.object({ ...TestMode, rule: MailboxRule });
export const MailboxRuleList = z.object({ ...TestMode, rules: z.array(MailboxRule), pagination: PageInfo });
