// Every statement that writes `agent_inbox_assignments` (row type in rows.ts): an item put
// in an agent's inbox by the facility's commit, a sandbox seed, or the member sample.
import type { AgentInboxAssignmentRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** A live item the facility committed, in its agent's inbox. */
export async function assignReceivedItem(
  tx: Queryable,
  itemId: string,
  agentId: string | null,
  memberId: string | null,
): Promise<AgentInboxAssignmentRow> {
  const [assignment] = await sqlRows<AgentInboxAssignmentRow>(
    tx,
    `INSERT INTO agent_inbox_assignments (item_id, agent_id, member_id, source_domain, environment)
       VALUES ($1, $2, $3, 'internal_team', 'live') RETURNING *`,
    [itemId, agentId, memberId],
  );
  return assignment;
}

/** A sandbox seed, in the test agent's inbox. */
export async function assignSandboxItem(
  tx: Queryable,
  itemId: string,
  agentId: string | null,
  memberId: string | null,
): Promise<AgentInboxAssignmentRow> {
  const [assignment] = await sqlRows<AgentInboxAssignmentRow>(
    tx,
    `INSERT INTO agent_inbox_assignments (item_id, agent_id, member_id, source_domain, environment)
       VALUES ($1, $2, $3, 'sandbox', 'test') RETURNING *`,
    [itemId, agentId, memberId],
  );
  return assignment;
}

/** The member sample in a test agent's inbox (`id` derived, so a repeat is a no-op). */
export async function assignMemberSample(
  db: Queryable,
  id: string,
  itemId: string,
  agentId: string,
  memberId: string,
): Promise<void> {
  await sqlRun(
    db,
    `INSERT INTO agent_inbox_assignments (id, item_id, agent_id, member_id, source_domain, environment)
     VALUES ($1, $2, $3, $4, 'member_sample', 'test') ON CONFLICT DO NOTHING`,
    [id, itemId, agentId, memberId],
  );
}
