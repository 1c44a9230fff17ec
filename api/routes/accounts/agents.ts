// Agents, their instructions document (read, save, versions, proposals) and the
// logical outbound mailboxes.
import { z } from 'zod';
import { defineRoute, RouteDef } from '../../route';
import { Pagination, pagination, paginationQuery } from '../../schemas/common';
import {
  AgentCreateRequest,
  AgentDeleted,
  AgentDetail,
  AgentIdParams,
  AgentList,
  AgentPatchRequest,
  InstructionsDocument,
  InstructionsSaveRequest,
  InstructionsVersions,
  Mailbox,
  Proposal,
  ProposalDecisionRequest,
  ProposalParams,
  ProposalQuery,
  ProposalRequest,
} from './agents.schemas';
import {
  createAgent,
  deleteAgent,
  getAgent,
  listAgents,
  listMailboxes,
  updateAgent,
} from '../../../services/accounts/agents';
import {
  decideInstructionsProposal,
  getInstructions,
  listInstructionsProposals,
  listInstructionsVersions,
  proposeInstructionsEdit,
  saveInstructions,
} from '../../../services/accounts/instructions';

const PageQuery = z.object(paginationQuery());
const VERSION_HEADER = {
  'X-Service-MD-Version': 'Agent keys: the current instructions version (400 if missing, 409 if stale)',
};

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/agents',
    summary: 'List agents (an agent key sees only its own)',
    tags: ['Agents'],
    query: PageQuery,
    responses: { 200: { description: 'Agents', schema: AgentList } },
    handler: async ({ deps, auth, query }) => {
      const { agents, total } = await listAgents(deps, auth, query);
      return { body: { agents, pagination: pagination(total, query.limit, query.offset) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/agents',
    summary: 'Create an agent (its instructions document starts at version 1)',
    tags: ['Agents'],
    body: AgentCreateRequest,
    responses: {
      201: { description: 'Agent created', schema: AgentDetail },
      400: { description: 'Validation failed' },
      409: {
        description:
          'agent_name_taken, in the nested shape {error: {type: invalid_request, message, code}} (decision 0131)',
        errorShape: 'nested',
      },
    },
    handler: async ({ deps, auth, body }) => ({ status: 201, body: await createAgent(deps, auth, body) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agents/:id',
    summary: 'Agent profile (test keys: recent_webhooks is empty)',
    tags: ['Agents'],
    params: AgentIdParams,
    responses: {
      200: { description: 'Agent', schema: AgentDetail },
      404: { description: 'Not found (or another agent)' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await getAgent(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/agents/:id',
    summary: 'Update an agent (live keys only)',
    tags: ['Agents'],
    params: AgentIdParams,
    body: AgentPatchRequest,
    requestHeaders: VERSION_HEADER,
    responses: {
      200: { description: 'Agent', schema: AgentDetail },
      400: { description: 'Validation failed or SERVICE_MD_VERSION_REQUIRED' },
      403: { description: 'live_key_required or insufficient_scope' },
      404: { description: 'Not found' },
      409: {
        description:
          'SERVICE_MD_VERSION_MISMATCH, or agent_name_taken in the nested shape {error: {type, message, code}}',
        errorShape: 'flat-or-nested',
      },
    },
    handler: async ({ deps, auth, params, body }) => ({ body: await updateAgent(deps, auth, params.id, body) }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/agents/:id',
    summary: 'Archive an agent and revoke its credentials (live member keys)',
    tags: ['Agents'],
    params: AgentIdParams,
    responses: { 200: { description: 'Archived', schema: AgentDeleted }, 404: { description: 'Not found' } },
    handler: async ({ deps, auth, params }) => ({ body: await deleteAgent(deps, auth, params.id) }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/agents/:id/instructions',
    summary: 'Current instructions document: text, version, hash, updated_at, source',
    tags: ['Instructions'],
    params: AgentIdParams,
    responses: {
      200: { description: 'Instructions', schema: InstructionsDocument },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await getInstructions(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'put',
    path: '/v1/agents/:id/instructions',
    summary: 'Save a new version of the instructions document',
    description:
      'Saves text as version expected_version + 1. A stale expected_version, or losing a concurrent save, gives 409 SERVICE_MD_VERSION_MISMATCH.',
    tags: ['Instructions'],
    params: AgentIdParams,
    body: InstructionsSaveRequest,
    responses: {
      200: { description: 'Saved', schema: InstructionsDocument },
      400: { description: 'Validation failed' },
      404: { description: 'Not found' },
      409: { description: 'SERVICE_MD_VERSION_MISMATCH (stale or concurrent save)' },
    },
    handler: async ({ deps, auth, params, body }) => ({ body: await saveInstructions(deps, auth, params.id, body) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agents/:id/instructions/versions',
    summary: 'Saved versions of the instructions document, newest first',
    tags: ['Instructions'],
    params: AgentIdParams,
    query: PageQuery,
    responses: { 200: { description: 'Versions', schema: InstructionsVersions }, 404: { description: 'Not found' } },
    handler: async ({ deps, auth, params, query }) => {
      const { versions, total } = await listInstructionsVersions(deps, auth, params.id, query);
      return { body: { versions, pagination: pagination(total, query.limit, query.offset) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/agents/:id/instructions/proposals',
    summary: 'Propose an edit of the instructions document (agent keys; the member reviews it)',
    tags: ['Instructions'],
    params: AgentIdParams,
    body: ProposalRequest,
    requestHeaders: VERSION_HEADER,
    responses: {
      201: { description: 'Proposal recorded', schema: z.object({ proposal: Proposal, test_mode: z.boolean() }) },
      400: { description: 'Validation failed or SERVICE_MD_VERSION_REQUIRED' },
      404: { description: 'Not found (or another agent)' },
      409: { description: 'SERVICE_MD_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, params, body }) => ({
      status: 201,
      body: { proposal: await proposeInstructionsEdit(deps, auth, params.id, body) },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agents/:id/instructions/proposals',
    summary: 'Proposed instructions edits, newest first',
    tags: ['Instructions'],
    params: AgentIdParams,
    query: ProposalQuery,
    responses: {
      200: {
        description: 'Proposals',
        schema: z.object({ proposals: z.array(Proposal), pagination: Pagination, test_mode: z.boolean() }),
      },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params, query }) => {
      const { proposals, total } = await listInstructionsProposals(deps, auth, params.id, query);
      return { body: { proposals, pagination: pagination(total, query.limit, query.offset) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/agents/:id/instructions/proposals/:proposalId/decision',
    summary: 'Accept (saves the next version) or reject a proposed edit',
    tags: ['Instructions'],
    params: ProposalParams,
    body: ProposalDecisionRequest,
    responses: {
      200: {
        description: 'Decided',
        schema: z.object({
          proposal: Proposal,
          instructions: InstructionsDocument.omit({ test_mode: true }),
          test_mode: z.boolean(),
        }),
      },
      400: { description: 'Validation failed (expected_version is required to accept)' },
      404: { description: 'Not found' },
      409: { description: 'PROPOSAL_ALREADY_DECIDED or SERVICE_MD_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, params, body }) => ({
      body: await decideInstructionsProposal(deps, auth, params.id, params.proposalId, body),
    }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/mailboxes',
    summary: 'Logical outbound endpoints (one per agent); never a receiving address',
    tags: ['Agents'],
    responses: {
      200: { description: 'Mailboxes', schema: z.object({ mailboxes: z.array(Mailbox), test_mode: z.boolean() }) },
    },
    handler: async ({ deps, auth }) => ({ body: { mailboxes: await listMailboxes(deps, auth) } }),
  }),
];
