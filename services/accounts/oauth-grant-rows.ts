// Every statement that writes the `oauth_grants` table: a grant made by a token exchange,
// its last use, and its end.
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** Records the grant an authorization code was exchanged for; its id. */
export async function insertGrant(
  tx: Queryable,
  g: { memberId: string; agentId: string; clientId: string; credentialId: string; resource: string | null },
): Promise<{ id: string }> {
  const [grant] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO oauth_grants (member_id, agent_id, client_id, credential_id, resource) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [g.memberId, g.agentId, g.clientId, g.credentialId, g.resource],
  );
  return grant;
}

/** Records that the grant was used now. */
export async function touchGrant(db: Queryable, grantId: string): Promise<void> {
  await sqlRun(db, `UPDATE oauth_grants SET last_used_at = now() WHERE id = $1`, [grantId]);
}

/** Ends the grant with `reason` (the first end stands); its credential, or undefined when there is no such grant. */
export async function markGrantEnded(
  db: Queryable,
  grantId: string,
  reason: string,
): Promise<{ credential_id: string } | undefined> {
  const [grant] = await sqlRows<{ credential_id: string }>(
    db,
    `WITH ended AS (UPDATE oauth_grants SET revoked_at = COALESCE(revoked_at, now()), revoked_reason = COALESCE(revoked_reason, $2)
                     WHERE id = $1 RETURNING credential_id)
     SELECT credential_id FROM ended`,
    [grantId, reason],
  );
  return grant;
}
