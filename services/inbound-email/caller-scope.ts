// What every inbound-email read shares: the SQL condition that keeps it to the caller's
// records (its member, its key's environment, and for agent keys, or a member key naming
// agent_id, that agent), and timestamps as ISO strings.
import type { AuthContext } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { resolveAgentFilter } from '../shared/scoping';

export function iso(d: Date | string | null | undefined): string | null {
  if (!d) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}

/** SQL filter on (member_id, test_mode, agent_id) for the caller; `$1..$n` starting at `from`. */
export async function ownerFilter(
  deps: Deps,
  auth: AuthContext,
  alias: string,
  requestedAgentId: string | null | undefined,
  params: unknown[],
): Promise<string> {
  params.push(auth.memberId, auth.testMode);
  let sql = `${alias}.member_id = $${params.length - 1} AND ${alias}.test_mode = $${params.length}`;
  const agentId = await resolveAgentFilter(deps, auth, requestedAgentId);
  if (agentId) {
    params.push(agentId);
    sql += ` AND ${alias}.agent_id = $${params.length}`;
  }
  return sql;
}
