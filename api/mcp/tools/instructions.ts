// Instructions tools: read the instructions document, propose an edit of it.
import { z } from 'zod';
import { errors } from '../../../domain/shared/errors';
import { isAgentKey } from '../../../services/accounts/auth';
import { getInstructions, proposeInstructionsEdit } from '../../../services/accounts/instructions';
import type { AuthContext } from '../../../services/accounts/auth';
import { ProposalRequest } from '../../routes/accounts/agents.schemas';
import { Uuid } from '../../schemas/common';
import { defineTool } from '../tool';

/** Agent keys act on their own agent; member keys name it (the REST path's :id). */
export function agentIdFor(auth: AuthContext, requested: string | undefined): string {
  if (isAgentKey(auth)) return auth.agentId!;
  if (!requested) throw errors.validation([{ path: 'agent_id', message: 'required for member keys' }]);
  return requested;
}

const AgentIdInput = {
  agent_id: Uuid.optional().describe(
    'member keys: the agent whose document to read; agent keys: ignored (always your own)',
  ),
};

export const instructionsTools = [
  defineTool({
    name: 'get_service_md',
    description:
      'Read the current instructions document (service.md) of the agent: text, version, hash, updated_at, source. Agent keys send its version as service_md_version on mutating tools.',
    input: z.object(AgentIdInput),
    access: 'GET /v1/agents/:id/instructions',
    handler: (deps, auth, input) => getInstructions(deps, auth, agentIdFor(auth, input.agent_id)),
  }),
  defineTool({
    name: 'propose_service_md_edit',
    description:
      'Propose an edit of your instructions document: suggested_content (the whole new text, at most 10,000 characters) and a reason. Nothing changes until your human accepts it.',
    input: ProposalRequest,
    access: 'POST /v1/agents/:id/instructions/proposals',
    mutation: true,
    handler: async (deps, auth, input) => ({
      proposal: await proposeInstructionsEdit(deps, auth, auth.agentId!, {
        suggested_content: input.suggested_content,
        reason: input.reason,
      }),
    }),
  }),
];
