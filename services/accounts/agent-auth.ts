// Agent sign-in intents (POST {site}/agent/auth): an agent without a key records which
// human (by email) it acts for. Nothing is issued: the answer tells the agent what its
// human must do, and the same answer is given whether or not the email has an account.
import type { Deps } from '../shared/deps';
import { humanActionsAfterSignup } from '../../domain/accounts/onboarding';
import { agentResources, contact, onboardingUrls } from './signup';
import { sqlRows } from '../shared/sql';

export interface AgentAuthInput {
  email: string;
  agent_name?: string;
  purpose?: string;
}

export async function recordAgentAuthIntent(deps: Deps, input: AgentAuthInput, clientIp: string) {
  const [row] = await sqlRows<{ id: string; status: string; created_at: Date }>(
    deps.db,
    `INSERT INTO agent_auth_intents (email, agent_name, purpose, client_ip) VALUES ($1, $2, $3, $4) RETURNING id, status, created_at`,
    [input.email, input.agent_name ?? null, input.purpose ?? null, clientIp],
  );
  const urls = onboardingUrls(deps);
  const agentName = input.agent_name ?? 'your agent';
  return {
    intent_id: row.id as string,
    status: row.status as 'awaiting_human',
    credentials_issued: false,
    email: input.email,
    created_at: (row.created_at as Date).toISOString(),
    message:
      'Sign-in intent recorded. No credentials were issued: API keys come only from a human who controls this email.',
    human_action_required: [
      {
        step: 'sign_up_or_sign_in',
        summary: `Sign up (POST ${urls.signupUrl}) or sign in with ${input.email}.`,
        blocker: true,
      },
      ...humanActionsAfterSignup(urls),
      {
        step: 'create_agent_key',
        summary: `With the member key, create an agent for ${agentName} (POST ${deps.config.baseUrl}/v1/agents) and an agent key (POST ${deps.config.baseUrl}/v1/agents/{id}/credentials), then give the key to the agent.`,
        blocker: true,
      },
    ],
    relay_message: `Please sign in to the Postal Mail API with ${input.email}, verify the email, and create an API key for ${agentName}; I cannot send mail until you give me that key.`,
    agent_resources: agentResources(deps),
    contact: contact(deps),
  };
}
