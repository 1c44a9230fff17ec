// Which records a caller may see. Member keys span all their agents (optionally narrowed
// with ?agent_id=); agent keys see only their own agent, whatever they pass. Test keys
// see only sandbox records and live keys only live ones, for every read and write by id:
// an id from the other environment is as unknown as another member's.
import type { Deps } from './deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey, isMemberKey } from '../accounts/auth';
import { errors } from '../../domain/shared/errors';
import { sqlRows } from './sql';

/** The agent id to filter by, or null for "all agents of the member". */
export async function resolveAgentFilter(
  deps: Deps,
  auth: AuthContext,
  requestedAgentId?: string | null,
): Promise<string | null> {
  if (isAgentKey(auth)) return auth.agentId;
  if (isMemberKey(auth) && requestedAgentId) {
    await assertAgentOfMember(deps, auth, requestedAgentId);
    return requestedAgentId;
  }
  return null;
}

/** 404 unless the agent belongs to the caller's member (and, for agent keys, is the caller) and is not archived. */
export async function assertAgentOfMember(deps: Deps, auth: AuthContext, agentId: string): Promise<void> {
  if (isAgentKey(auth) && auth.agentId !== agentId) throw errors.notFound('Agent');
  const rows = await sqlRows<{ '?column?': number }>(
    deps.db,
    `SELECT 1 FROM agents WHERE id = $1 AND member_id = $2 AND deleted_at IS NULL`,
    [agentId, auth.memberId],
  );
  if (!rows.length) throw errors.notFound('Agent');
}

export interface RecordOwner {
  memberId: string;
  agentId: string | null;
  /** The record's environment: true for sandbox records. */
  testMode: boolean;
}

/**
 * Whether the caller may see a record owned by (memberId, agentId) in its environment.
 * Used to answer 404 for another member's, another agent's and the other environment's
 * objects, so their existence is not revealed.
 */
export function canSee(auth: AuthContext, owner: RecordOwner): boolean {
  return ownsAcrossEnvironments(auth, owner) && owner.testMode === auth.testMode;
}

/**
 * Member and agent ownership without the environment check: only for the records the
 * spec shows to both environments (the legacy agent-webhook event log, which "includes
 * sandbox and live"). Everything else goes through canSee.
 */
export function ownsAcrossEnvironments(auth: AuthContext, owner: Pick<RecordOwner, 'memberId' | 'agentId'>): boolean {
  if (auth.memberId !== owner.memberId) return false;
  if (isAgentKey(auth)) return owner.agentId === auth.agentId;
  return true;
}
