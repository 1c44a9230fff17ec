// Agent-specific routes (expected shipments, mailbox rules): each record belongs to one
// agent. Agent keys always act for their own agent and an agent_id they pass is ignored;
// member keys name the agent with ?agent_id=, which must be a live agent of the account.
import type { AuthContext } from './auth';
import { isAgentKey } from './auth';
import type { Deps } from '../shared/deps';
import { errors } from '../../domain/shared/errors';
import { sqlRows } from '../shared/sql';

/**
 * The agent the call acts for. Member keys: `agentId` when it is an agent of the account
 * (else 400 on query.agent_id), null when absent and not required.
 */
export async function scopedAgent(
  deps: Deps,
  auth: AuthContext,
  agentId: string | undefined,
  opts: { required: boolean },
): Promise<string | null> {
  if (isAgentKey(auth)) return auth.agentId;
  if (!agentId) {
    if (opts.required)
      throw errors.validation([{ path: 'query.agent_id', message: 'agent_id is required with a member key' }]);
    return null;
  }
  const rows = await sqlRows<{ '?column?': number }>(
    deps.db,
    `SELECT 1 FROM agents WHERE id = $1 AND member_id = $2 AND deleted_at IS NULL`,
    [agentId, auth.memberId],
  );
  if (!rows.length) throw errors.validation([{ path: 'query.agent_id', message: 'is not an agent of this account' }]);
  return agentId;
}

/** Whether a record of (memberId, agentId) is visible to the caller narrowed to `agentFilter`. */
export function ownsAgentRecord(
  auth: AuthContext,
  agentFilter: string | null,
  record: { member_id: string; agent_id: string },
): boolean {
  if (record.member_id !== auth.memberId) return false;
  return agentFilter === null || record.agent_id === agentFilter;
}

/** Who made a record: the caller's kind. */
export function createdBy(auth: AuthContext): 'agent' | 'member' {
  return isAgentKey(auth) ? 'agent' : 'member';
}
