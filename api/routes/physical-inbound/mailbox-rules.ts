import { TestMode } from '../../schemas/common';
// Mailbox rules: an agent's standing instructions for pieces arriving at its private
// mailbox (agent-specific: member keys pass ?agent_id=; physical inbound custody, live keys only).
import { defineRoute, RouteDef } from '../../route';
import {
  createMailboxRule,
  deleteMailboxRule,
  getMailboxRule,
  listMailboxRules,
  updateMailboxRule,
} from '../../../services/physical-inbound/mailbox-rules';
import { MailboxRuleBody, MailboxRuleList, RuleCreate, RuleListQuery, RuleUpdate } from './mailbox-rules.schemas';
import { AgentScopedQuery } from './expected-shipments.schemas';
import { IdParam } from './physical-inbound.schemas';
import { z } from 'zod';

const tags = ['Mailbox rules'];
const VERSION_HEADER = {
  'X-Service-MD-Version': 'agent keys: the current instructions version (400 when missing, 409 when stale)',
};
const refusals = {
  400: {
    description:
      'validation (fields[]; query.agent_id missing or not an agent of the account for member keys), SERVICE_MD_VERSION_REQUIRED',
  },
  403: {
    description:
      'missing scope, test key (reason sandbox_not_supported) or packages not enabled (reason packages_not_enabled)',
  },
};
const notFound = { 404: { description: "rule not found (another member's, or another agent's)" } };

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/rules',
    tags,
    summary: "List an agent's mailbox rules (in the order they apply)",
    description: "Member keys must pass agent_id; agent keys see their own agent's.",
    query: RuleListQuery,
    responses: { 200: { description: 'Rules', schema: MailboxRuleList }, ...refusals },
    handler: async ({ deps, auth, query }) => ({ body: await listMailboxRules(deps, auth, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/rules',
    tags,
    summary: 'Add a mailbox rule: when a matching piece arrives, request an action and/or tag it',
    description:
      "match: sender_contains (literal terms in the label's sender name), carriers, kinds (letter, parcel); every criterion given must hold. " +
      'apply: request_action (an ActionRequest) and/or add_tags. On arrival every matching enabled rule adds its tags; the first matching rule with an ' +
      "action requests it, unless the agent's expected shipment for the piece has its own on_arrival action. At most 25 rules per agent. Scope " +
      'package.write (forward.create for a forward). Member keys pass ?agent_id=.',
    query: AgentScopedQuery,
    body: RuleCreate,
    requestHeaders: VERSION_HEADER,
    responses: {
      201: { description: 'Rule', schema: MailboxRuleBody },
      ...refusals,
      409: { description: 'SERVICE_MD_VERSION_MISMATCH' },
      422: { description: 'MAILBOX_RULE_LIMIT' },
    },
    handler: async ({ deps, auth, query, body }) => ({
      status: 201,
      body: await createMailboxRule(deps, auth, query.agent_id, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/rules/:id',
    tags,
    summary: 'One mailbox rule',
    params: IdParam,
    query: AgentScopedQuery,
    responses: { 200: { description: 'Rule', schema: MailboxRuleBody }, ...refusals, ...notFound },
    handler: async ({ deps, auth, params, query }) => ({
      body: await getMailboxRule(deps, auth, params.id, query.agent_id),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/rules/:id',
    tags,
    summary: 'Change a mailbox rule (name, enabled, match or apply)',
    params: IdParam,
    query: AgentScopedQuery,
    body: RuleUpdate,
    requestHeaders: VERSION_HEADER,
    responses: {
      200: { description: 'Rule', schema: MailboxRuleBody },
      ...refusals,
      ...notFound,
      409: { description: 'SERVICE_MD_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, params, query, body }) => ({
      body: await updateMailboxRule(deps, auth, params.id, query.agent_id, body),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/rules/:id',
    tags,
    summary: 'Delete a mailbox rule',
    params: IdParam,
    query: AgentScopedQuery,
    requestHeaders: VERSION_HEADER,
    responses: {
      200: { description: 'Deleted', schema: z.object({ ...TestMode, deleted: z.literal(true), id: z.string() }) },
      ...refusals,
      ...notFound,
      409: { description: 'SERVICE_MD_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, params, query }) => ({
      body: await deleteMailboxRule(deps, auth, params.id, query.agent_id),
    }),
  }),
];
