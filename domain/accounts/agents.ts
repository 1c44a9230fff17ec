// Agent rules that other areas share: an agent's logical outbound mailbox id.
// The service never issues receiving addresses; a mailbox here is only the sending
// endpoint of one agent, named after it.

export function mailboxIdFor(agentId: string): string {
  return `mbx_${agentId}`;
}

export const AGENT_NAME_MIN = 2;
export const AGENT_NAME_MAX = 50;
