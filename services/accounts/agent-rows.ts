// Every statement that writes the `agents` table (the row type is AgentRow in rows.ts):
// creating an agent, editing and archiving it, and its legacy webhook settings and signing key.
import type { AgentRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** The agent columns an edit may set. */
export type AgentColumn = 'name' | 'display_name' | 'description' | 'webhook_url';

/** Creates an agent; returns its id. */
export async function insertAgent(
  tx: Queryable,
  a: {
    memberId: string | null;
    name: string;
    displayName: string | null;
    description: string | null;
    webhookUrl: string | null;
  },
): Promise<Pick<AgentRow, 'id'>> {
  const [row] = await sqlRows<Pick<AgentRow, 'id'>>(
    tx,
    `INSERT INTO agents (member_id, name, display_name, description, webhook_url) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [a.memberId, a.name, a.displayName, a.description, a.webhookUrl],
  );
  return row;
}

/** Sets the given columns of an agent (at least one), in the order given. */
export async function updateAgentColumns(
  tx: Queryable,
  agentId: string,
  columns: readonly AgentColumn[],
  values: unknown[],
): Promise<void> {
  const sets = columns.map((c, i) => `${c} = $${i + 2}`).join(', ');
  await sqlRun(tx, `UPDATE agents SET ${sets} WHERE id = $1`, [agentId, ...values]);
}

/** Archives an agent not archived yet; returns when, or null when there was none to archive. */
export async function archiveAgent(tx: Queryable, agentId: string): Promise<{ deleted_at: Date } | null> {
  const [agent] = await sqlRows<{ deleted_at: Date }>(
    tx,
    `WITH changed AS (UPDATE agents SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING deleted_at) SELECT * FROM changed`,
    [agentId],
  );
  return agent ?? null;
}

/** Stores the agent's legacy webhook signing key (its id and encrypted secret). */
export async function setAgentSigningKey(
  tx: Queryable,
  agentId: string,
  keyId: string,
  secretEnc: string,
): Promise<void> {
  await sqlRun(tx, `UPDATE agents SET webhook_signing_key_id = $2, webhook_signing_secret_enc = $3 WHERE id = $1`, [
    agentId,
    keyId,
    secretEnc,
  ]);
}

/** The legacy webhook settings of an agent, as updateAgentWebhookSettings stores them. */
export interface AgentWebhookSettings {
  url: string | null;
  enabled: boolean;
  eventTypes: string[];
  authType: string;
  authTokenEnc: string | null;
  authHeaderName: string | null;
  payloadFormat: string;
}

/** Stores the agent's legacy webhook settings; returns the updated row(s) as `Row`. */
export async function updateAgentWebhookSettings<Row>(
  tx: Queryable,
  agentId: string,
  s: AgentWebhookSettings,
): Promise<Row[]> {
  return sqlRows<Row>(
    tx,
    `UPDATE agents SET webhook_url = $2, webhook_enabled = $3, webhook_event_types = $4, webhook_auth_type = $5,
              webhook_auth_token_enc = $6, webhook_auth_header_name = $7, webhook_payload_format = $8
        WHERE id = $1 RETURNING *`,
    [agentId, s.url, s.enabled, s.eventTypes, s.authType, s.authTokenEnc, s.authHeaderName, s.payloadFormat],
  );
}
