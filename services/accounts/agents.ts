// Agents of a member: create (with instructions version 1 in the same transaction), read,
// update, archive, and the logical outbound mailbox each agent sends from. Agent keys see
// only their own agent; anything else is 404 so other agents' existence is not revealed.
// Updates that return rows are written as `WITH changed AS (UPDATE ... RETURNING ...) SELECT`:
// TypeORM answers a bare UPDATE with [rows, rowCount] instead of the rows.
import type { Deps } from '../shared/deps';
import type { AuthContext } from './auth';
import { isAgentKey } from './auth';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import { mailboxIdFor } from '../../domain/accounts/agents';
import { createInitialInstructions } from './instructions';
import { assertAgentOfMember } from '../shared/scoping';
import { issueAgentSigningKey, listWebhookEvents } from '../webhooks/agent-webhooks';
import { assertWebhookTarget } from '../webhooks/targets';
import type { AgentCredentialRow, AgentRow, InstructionsVersionRow, MemberRow } from './rows';
import type { SenderMember } from './sender-member';
import { sqlRows } from '../shared/sql';
import { revokeAgentCredentials } from './agent-credential-rows';
import { archiveAgent, insertAgent, updateAgentColumns } from './agent-rows';

export type { SenderMember };

export interface AgentInput {
  name: string;
  display_name?: string | null;
  description?: string | null;
  webhook_url?: string | null;
}

export interface AgentRecord {
  id: string;
  name: string;
  display_name: string | null;
  description: string | null;
  webhook_url: string | null;
  webhook_signing_key_id: string | null;
  status: 'active';
  mailbox_id: string;
  instructions: { version: number; hash: string; updated_at: string };
  created_at: string;
}

/** One entry of the agent's legacy webhook log (the shape GET /v1/webhooks/events lists). */
export type RecentWebhook = Awaited<ReturnType<typeof listWebhookEvents>>['events'][number];

export interface AgentDetail extends AgentRecord {
  recent_webhooks: RecentWebhook[];
  /** The legacy webhook signing key, only in the answer that issued it. */
  webhook_signing_key?: string;
}

const AGENT_COLUMNS = `a.id, a.member_id, a.name, a.display_name, a.description, a.webhook_url, a.webhook_signing_key_id, a.created_at,
  iv.version AS instructions_version, iv.hash AS instructions_hash, iv.created_at AS instructions_updated_at`;
const CURRENT_INSTRUCTIONS = `LEFT JOIN LATERAL (
    SELECT version, hash, created_at FROM instructions_versions WHERE agent_id = a.id ORDER BY version DESC LIMIT 1
  ) iv ON true`;
/** What AGENT_COLUMNS selects. Every agent has instructions version 1 from its creation, so the lateral join always finds one. */
type AgentColumns = Pick<
  AgentRow,
  'id' | 'member_id' | 'name' | 'display_name' | 'description' | 'webhook_url' | 'webhook_signing_key_id' | 'created_at'
> & {
  instructions_version: InstructionsVersionRow['version'];
  instructions_hash: InstructionsVersionRow['hash'];
  instructions_updated_at: InstructionsVersionRow['created_at'];
};

function toRecord(row: AgentColumns): AgentRecord {
  return {
    id: row.id,
    name: row.name,
    display_name: row.display_name,
    description: row.description,
    webhook_url: row.webhook_url,
    webhook_signing_key_id: row.webhook_signing_key_id,
    status: 'active',
    mailbox_id: mailboxIdFor(row.id),
    instructions: {
      version: row.instructions_version,
      hash: row.instructions_hash,
      updated_at: row.instructions_updated_at.toISOString(),
    },
    created_at: row.created_at.toISOString(),
  };
}

function nameTaken(name: string): ApiError {
  return codedError(409, 'agent_name_taken', `An agent named "${name}" already exists on this account.`, {
    nested: { type: 'invalid_request' },
    suggestedAction: 'Choose another name, or use the existing agent (GET /v1/agents).',
  });
}

function isNameViolation(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  return (
    (e.code ?? e.driverError?.code) === '23505' && (e.constraint ?? e.driverError?.constraint) === 'agents_member_name'
  );
}

/** The caller's view of one agent; 404 for another member's or another agent's. */
async function findAgentRow(deps: Deps, auth: AuthContext, agentId: string): Promise<AgentColumns> {
  if (isAgentKey(auth) && auth.agentId !== agentId) throw errors.notFound('Agent');
  const [row] = await sqlRows<AgentColumns>(
    deps.db,
    `SELECT ${AGENT_COLUMNS} FROM agents a ${CURRENT_INSTRUCTIONS}
      WHERE a.id = $1 AND a.member_id = $2 AND a.deleted_at IS NULL`,
    [agentId, auth.memberId],
  );
  if (!row) throw errors.notFound('Agent');
  return row;
}

export async function listAgents(deps: Deps, auth: AuthContext, page: { limit: number; offset: number }) {
  const filter = isAgentKey(auth) ? 'AND a.id = $2' : '';
  const args: unknown[] = [auth.memberId, ...(isAgentKey(auth) ? [auth.agentId] : [])];
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM agents a WHERE a.member_id = $1 AND a.deleted_at IS NULL ${filter}`,
    args,
  );
  const rows = await sqlRows<AgentColumns>(
    deps.db,
    `SELECT ${AGENT_COLUMNS} FROM agents a ${CURRENT_INSTRUCTIONS}
      WHERE a.member_id = $1 AND a.deleted_at IS NULL ${filter}
      ORDER BY a.created_at, a.id LIMIT ${page.limit} OFFSET ${page.offset}`,
    args,
  );
  return { agents: rows.map(toRecord), total };
}

/**
 * Creates the agent, its instructions version 1 and, when it has a webhook URL, its
 * legacy webhook signing key, in one transaction. The signing key is shown once.
 */
export async function createAgent(deps: Deps, auth: AuthContext, input: AgentInput): Promise<AgentDetail> {
  if (input.webhook_url) await assertWebhookTarget(deps, input.webhook_url, 'agent_webhook', 'webhook_url');
  const created = await deps.db.transaction(async (tx) => {
    const [dup] = await sqlRows<unknown>(
      tx,
      `SELECT 1 FROM agents WHERE member_id = $1 AND lower(name) = lower($2) AND deleted_at IS NULL`,
      [auth.memberId, input.name],
    );
    if (dup) throw nameTaken(input.name);
    let agentId: string;
    try {
      const row = await insertAgent(tx, {
        memberId: auth.memberId,
        name: input.name,
        displayName: input.display_name ?? null,
        description: input.description ?? null,
        webhookUrl: input.webhook_url ?? null,
      });
      agentId = row.id;
    } catch (err) {
      if (isNameViolation(err)) throw nameTaken(input.name);
      throw err;
    }
    await createInitialInstructions(tx, agentId);
    const issued = await issueAgentSigningKey(deps, tx, agentId);
    return { agentId, signingKey: issued?.webhook_signing_key };
  });
  const agent = await getAgent(deps, auth, created.agentId);
  return created.signingKey ? { ...agent, webhook_signing_key: created.signingKey } : agent;
}

const RECENT_WEBHOOKS = 10;

/**
 * The agent profile with its latest live webhook deliveries. Test keys get an empty
 * recent_webhooks list: sandbox keys never see live traffic.
 */
export async function getAgent(deps: Deps, auth: AuthContext, agentId: string): Promise<AgentDetail> {
  const row = await findAgentRow(deps, auth, agentId);
  let recent: RecentWebhook[] = [];
  if (!auth.testMode) {
    const log = await listWebhookEvents(deps, auth, { agent_id: agentId, limit: RECENT_WEBHOOKS * 2, offset: 0 });
    recent = log.events.filter((e) => !e.test_mode).slice(0, RECENT_WEBHOOKS);
  }
  return { ...toRecord(row), recent_webhooks: recent };
}

/** Setting a webhook URL on an agent without a signing key issues one (shown once). */
export async function updateAgent(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  patch: Partial<AgentInput>,
): Promise<AgentDetail> {
  await assertAgentOfMember(deps, auth, agentId);
  if (patch.webhook_url) await assertWebhookTarget(deps, patch.webhook_url, 'agent_webhook', 'webhook_url');
  const columns = (['name', 'display_name', 'description', 'webhook_url'] as const).filter(
    (c) => patch[c] !== undefined,
  );
  const signingKey = await deps.db.transaction(async (tx) => {
    if (!columns.length) return undefined;
    try {
      await updateAgentColumns(
        tx,
        agentId,
        columns,
        columns.map((c) => patch[c]),
      );
    } catch (err) {
      if (isNameViolation(err)) throw nameTaken(patch.name!);
      throw err;
    }
    return (await issueAgentSigningKey(deps, tx, agentId))?.webhook_signing_key;
  });
  const agent = await getAgent(deps, auth, agentId);
  return signingKey ? { ...agent, webhook_signing_key: signingKey } : agent;
}

/**
 * Archives the agent: it disappears from lists and reads, its name is free again, and
 * every credential it had is revoked in the same transaction. Its mail and other records
 * stay (they keep pointing at the archived agent).
 */
export async function deleteAgent(deps: Deps, auth: AuthContext, agentId: string) {
  await assertAgentOfMember(deps, auth, agentId);
  return deps.db.transaction(async (tx) => {
    const agent = await archiveAgent(tx, agentId);
    if (!agent) throw errors.notFound('Agent');
    const revoked = await revokeAgentCredentials(tx, agentId);
    return {
      id: agentId,
      deleted: true as const,
      deleted_at: agent.deleted_at.toISOString(),
      revoked_credentials: revoked.length,
    };
  });
}

export interface Mailbox {
  id: string;
  type: 'outbound';
  agent_id: string;
  name: string;
  return_address: {
    name: string | null;
    company: string | null;
    line1: string;
    line2: string | null;
    city: string;
    state: string;
    zip: string;
  } | null;
  status: 'active';
}

function toMailbox(row: MailboxColumns): Mailbox {
  return {
    id: mailboxIdFor(row.id),
    type: 'outbound',
    agent_id: row.id,
    name: row.display_name ?? row.name,
    // The member's return address is stored whole or not at all (services/accounts/accounts.ts createMember).
    return_address:
      row.return_line1 && row.return_city && row.return_state && row.return_zip
        ? {
            name: row.return_name,
            company: row.return_company,
            line1: row.return_line1,
            line2: row.return_line2,
            city: row.return_city,
            state: row.return_state,
            zip: row.return_zip,
          }
        : null,
    status: 'active',
  };
}

const MAILBOX_COLUMNS = `a.id, a.name, a.display_name, m.return_name, m.return_company, m.return_line1, m.return_line2,
    m.return_city, m.return_state, m.return_zip`;
const MAILBOX_FROM = `FROM agents a JOIN members m ON m.id = a.member_id
 WHERE a.member_id = $1 AND a.deleted_at IS NULL`;
type MailboxColumns = Pick<AgentRow, 'id' | 'name' | 'display_name'> &
  Pick<
    MemberRow,
    'return_name' | 'return_company' | 'return_line1' | 'return_line2' | 'return_city' | 'return_state' | 'return_zip'
  >;

/** A mailbox a piece may be sent from, with its member's settings. */
export interface SendingMailbox {
  mailbox: Mailbox;
  member: SenderMember;
}

// The mailbox query with the member's settings: a submission reads both in one statement.
const SENDER_QUERY = `SELECT ${MAILBOX_COLUMNS}, m.per_transaction_limit_cents, m.daily_spend_limit_cents, m.pricing_overrides ${MAILBOX_FROM}`;
type SenderColumns = MailboxColumns &
  Pick<SenderMember, 'per_transaction_limit_cents' | 'daily_spend_limit_cents' | 'pricing_overrides'>;

function toSendingMailbox(row: SenderColumns): SendingMailbox {
  return {
    mailbox: toMailbox(row),
    member: {
      return_name: row.return_name,
      return_company: row.return_company,
      return_line1: row.return_line1,
      return_line2: row.return_line2,
      return_city: row.return_city,
      return_state: row.return_state,
      return_zip: row.return_zip,
      per_transaction_limit_cents: row.per_transaction_limit_cents,
      daily_spend_limit_cents: row.daily_spend_limit_cents,
      pricing_overrides: row.pricing_overrides,
    },
  };
}

/**
 * Logical outbound endpoints: one per agent (an agent key sees its own), with the
 * member profile's return address. Never a receiving address.
 */
export async function listMailboxes(deps: Deps, auth: AuthContext): Promise<Mailbox[]> {
  return (await listSendingMailboxes(deps, auth)).map((m) => m.mailbox);
}

/** The outbound mailbox a piece is sent from, with its member's settings in the same statement; 404 "No active mailbox" when the agent has none. */
export async function getSendingMailbox(deps: Deps, auth: AuthContext, agentId: string): Promise<SendingMailbox> {
  if (isAgentKey(auth) && auth.agentId !== agentId) throw noActiveMailbox();
  const [row] = await sqlRows<SenderColumns>(deps.db, `${SENDER_QUERY} AND a.id = $2`, [auth.memberId, agentId]);
  if (!row) throw noActiveMailbox();
  return toSendingMailbox(row);
}

/** listMailboxes with the member's settings, in the same statement (none without an active agent). */
export async function listSendingMailboxes(deps: Deps, auth: AuthContext): Promise<SendingMailbox[]> {
  const rows = isAgentKey(auth)
    ? await sqlRows<SenderColumns>(deps.db, `${SENDER_QUERY} AND a.id = $2`, [auth.memberId, auth.agentId])
    : await sqlRows<SenderColumns>(deps.db, `${SENDER_QUERY} ORDER BY a.created_at, a.id`, [auth.memberId]);
  return rows.map(toSendingMailbox);
}

/** The outbound mailbox a piece is sent from; 404 "No active mailbox" when the agent has none. */
export async function getOutboundMailbox(deps: Deps, auth: AuthContext, agentId: string): Promise<Mailbox> {
  return (await getSendingMailbox(deps, auth, agentId)).mailbox;
}

function noActiveMailbox(): ApiError {
  return codedError(404, 'MAILBOX_NOT_FOUND', 'No active mailbox for this agent', {
    suggestedAction: 'Use an existing agent (GET /v1/mailboxes lists the active ones).',
  });
}
