// Agents and agent credentials created through the real API, for integration tests.
import { randomBytes } from 'node:crypto';
import { client } from './http';

export interface TestAgent {
  id: string;
  name: string;
}

export interface TestCredential {
  id: string;
  key: string;
  key_prefix: string;
}

export async function newAgent(
  baseUrl: string,
  memberKey: string,
  body: Record<string, unknown> = {},
): Promise<TestAgent> {
  const res = await client(baseUrl)('POST', '/v1/agents', {
    key: memberKey,
    json: { name: `agent-${randomBytes(4).toString('hex')}`, ...body },
  });
  if (res.status !== 201) throw new Error(`creating agent failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, name: res.body.name };
}

export async function newCredential(
  baseUrl: string,
  memberKey: string,
  agentId: string,
  body: Record<string, unknown> = {},
): Promise<TestCredential> {
  const res = await client(baseUrl)('POST', `/v1/agents/${agentId}/credentials`, {
    key: memberKey,
    json: { scopes: ['mail.send', 'agent.read', 'agent.write', 'billing.read', 'mailbox.read'], ...body },
  });
  if (res.status !== 201) throw new Error(`creating credential failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, key: res.body.key, key_prefix: res.body.key_prefix };
}

/** An agent with one credential of the given environment. */
export async function newAgentWithKey(
  baseUrl: string,
  memberKey: string,
  opts: { environment?: 'live' | 'test'; scopes?: string[] } = {},
) {
  const agent = await newAgent(baseUrl, memberKey);
  const credential = await newCredential(baseUrl, memberKey, agent.id, {
    environment: opts.environment ?? 'live',
    ...(opts.scopes ? { scopes: opts.scopes } : {}),
  });
  return { agent, credential };
}
