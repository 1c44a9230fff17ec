// The versioned standing-instructions document of each agent, and the guard that makes
// agent keys echo its current version on mutating calls.
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import type { AuthContext } from './auth';
import { isAgentKey } from './auth';
import { errors } from '../../domain/shared/errors';
import { sha256Hex } from '../../domain/accounts/keys';
import { assertAgentOfMember } from '../shared/scoping';
import type { InstructionsProposalRow, InstructionsVersionRow } from './rows';
import { sqlRows, sqlRun } from '../shared/sql';

export interface InstructionsDocument {
  agent_id: string;
  text: string;
  version: number;
  hash: string;
  updated_at: string;
  source: 'renter' | 'platform_fallback';
}

export const PLATFORM_FALLBACK_INSTRUCTIONS =
  'No standing instructions have been saved for this agent yet. Send only what your human asked for, ' +
  'prefer dry_run before a live send, and ask your human before anything that costs more than expected.';

export const MAX_INSTRUCTIONS_CHARS = 10000;

export function instructionsHash(text: string): string {
  return sha256Hex(text);
}

/** Creates version 1 (platform fallback) for a new agent, inside the caller's transaction. */
export async function createInitialInstructions(tx: EntityManager, agentId: string): Promise<void> {
  await sqlRun(
    tx,
    `INSERT INTO instructions_versions (agent_id, version, text, hash, source) VALUES ($1, 1, $2, $3, 'platform_fallback')`,
    [agentId, PLATFORM_FALLBACK_INSTRUCTIONS, instructionsHash(PLATFORM_FALLBACK_INSTRUCTIONS)],
  );
}

const DOCUMENT_COLUMNS = `agent_id, text, version, hash, created_at, source`;
type DocumentColumns = Pick<InstructionsVersionRow, 'agent_id' | 'text' | 'version' | 'hash' | 'created_at' | 'source'>;

function toDocument(row: DocumentColumns): InstructionsDocument {
  return {
    agent_id: row.agent_id,
    text: row.text,
    version: row.version,
    hash: row.hash,
    updated_at: row.created_at.toISOString(),
    source: row.source,
  };
}

export async function currentInstructions(
  deps: Deps | { db: { query: EntityManager['query'] } },
  agentId: string,
): Promise<InstructionsDocument | null> {
  const [row] = await sqlRows<DocumentColumns>(
    deps.db,
    `SELECT ${DOCUMENT_COLUMNS} FROM instructions_versions
      WHERE agent_id = $1 ORDER BY version DESC LIMIT 1`,
    [agentId],
  );
  return row ? toDocument(row) : null;
}

/** The latest version number, or 0 when the agent has none (reads no document text). */
async function latestVersion(db: Pick<EntityManager, 'query'>, agentId: string): Promise<number> {
  const [row] = await sqlRows<{ version: number | null }>(
    db,
    `SELECT max(version) AS version FROM instructions_versions WHERE agent_id = $1`,
    [agentId],
  );
  return Number(row.version ?? 0);
}

/**
 * Agent keys must send the current instructions version on mutating calls: 400 when
 * missing or not an integer, 409 when stale. Member and facility keys are not checked.
 * Returns the agent's current instructions as read for the check (null when not checked).
 */
export async function assertInstructionsVersion(
  deps: Deps,
  auth: AuthContext,
  sent: string | number | undefined | null,
): Promise<InstructionsDocument | null> {
  if (!isAgentKey(auth) || !auth.agentId) return null;
  if (sent === undefined || sent === null || String(sent).trim() === '') {
    throw errors.badRequest(
      'SERVICE_MD_VERSION_REQUIRED',
      'Agent keys must send X-Service-MD-Version with the current instructions version.',
      {
        suggestedAction: 'GET /v1/agents/{id}/instructions, read it, and send its version in X-Service-MD-Version.',
      },
    );
  }
  // Digits only: Number() would also read "0x1", "1e0" and " 1.0" as 1.
  const version = typeof sent === 'number' ? sent : /^\s*[0-9]+\s*$/.test(sent) ? Number(sent) : NaN;
  if (!Number.isInteger(version) || version < 1) {
    throw errors.badRequest('SERVICE_MD_VERSION_REQUIRED', 'X-Service-MD-Version must be a positive integer.', {
      fields: [{ path: 'headers.x-service-md-version', message: 'must be a positive integer' }],
      suggestedAction: 'Read GET /v1/agents/{id}/instructions and send its version in X-Service-MD-Version.',
    });
  }
  // The whole document, in the one statement the check needs: the request's own event (a
  // new piece's) carries it, so the submission reads no instructions again.
  const current = await currentInstructions(deps, auth.agentId);
  const currentVersion = current?.version || 1;
  if (version !== currentVersion) {
    throw errors.conflict(
      'SERVICE_MD_VERSION_MISMATCH',
      `Instructions version ${version} is stale; the current version is ${currentVersion}.`,
      {
        details: { current_version: currentVersion, sent_version: version },
        suggestedAction: 'Re-read the instructions document, then retry with its current version.',
      },
    );
  }
  return current;
}

// ---------------------------------------------------------------- reading and saving

function staleVersion(expected: number, current: number) {
  return errors.conflict(
    'SERVICE_MD_VERSION_MISMATCH',
    `expected_version ${expected} is stale; the current version is ${current}.`,
    {
      details: { current_version: current, expected_version: expected },
      suggestedAction:
        'Re-read the instructions document, merge your change into it, and save with its current version.',
    },
  );
}

function isPrimaryKeyRace(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  return (e.code ?? e.driverError?.code) === '23505';
}

/** The current document of a visible agent (agent keys: only their own; others 404). */
export async function getInstructions(deps: Deps, auth: AuthContext, agentId: string): Promise<InstructionsDocument> {
  await assertAgentOfMember(deps, auth, agentId);
  const doc = await currentInstructions(deps, agentId);
  if (!doc) throw errors.notFound('Instructions');
  return doc;
}

/**
 * Saves `text` as version expected+1. The (agent_id, version) primary key decides between
 * concurrent saves: exactly one wins, the other gets 409 like any stale version.
 */
async function insertNextVersion(
  tx: Pick<EntityManager, 'query'>,
  agentId: string,
  expected: number,
  text: string,
  reason: string | null,
): Promise<InstructionsDocument> {
  const current = await latestVersion(tx, agentId);
  if (current !== expected) throw staleVersion(expected, current);
  try {
    const [row] = await sqlRows<DocumentColumns>(
      tx,
      `INSERT INTO instructions_versions (agent_id, version, text, hash, source, reason) VALUES ($1, $2, $3, $4, 'renter', $5)
       RETURNING ${DOCUMENT_COLUMNS}`,
      [agentId, expected + 1, text, instructionsHash(text), reason],
    );
    return toDocument(row);
  } catch (err) {
    if (isPrimaryKeyRace(err)) throw staleVersion(expected, expected + 1);
    throw err;
  }
}

export async function saveInstructions(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  input: { text: string; expected_version: number },
): Promise<InstructionsDocument> {
  await assertAgentOfMember(deps, auth, agentId);
  return insertNextVersion(deps.db, agentId, input.expected_version, input.text, null);
}

export interface InstructionsVersionRecord {
  version: number;
  text: string;
  hash: string;
  source: 'renter' | 'platform_fallback';
  reason: string | null;
  created_at: string;
}

export async function listInstructionsVersions(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  page: { limit: number; offset: number },
) {
  await assertAgentOfMember(deps, auth, agentId);
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM instructions_versions WHERE agent_id = $1`,
    [agentId],
  );
  const rows = await sqlRows<
    Pick<InstructionsVersionRow, 'version' | 'text' | 'hash' | 'source' | 'reason' | 'created_at'>
  >(
    deps.db,
    `SELECT version, text, hash, source, reason, created_at FROM instructions_versions WHERE agent_id = $1
      ORDER BY version DESC LIMIT $2 OFFSET $3`,
    [agentId, page.limit, page.offset],
  );
  const versions: InstructionsVersionRecord[] = rows.map((r) => ({
    version: r.version,
    text: r.text,
    hash: r.hash,
    source: r.source,
    reason: r.reason,
    created_at: r.created_at.toISOString(),
  }));
  return { versions, total };
}

// ---------------------------------------------------------------- proposals

export interface InstructionsProposal {
  id: string;
  agent_id: string;
  status: 'pending' | 'accepted' | 'rejected';
  base_version: number;
  suggested_content: string;
  reason: string | null;
  resulting_version: number | null;
  decided_at: string | null;
  created_at: string;
}

const PROPOSAL_COLUMNS = `id, agent_id, status, base_version, suggested_content, reason, resulting_version, decided_at, created_at`;
type ProposalColumns = Pick<
  InstructionsProposalRow,
  | 'id'
  | 'agent_id'
  | 'status'
  | 'base_version'
  | 'suggested_content'
  | 'reason'
  | 'resulting_version'
  | 'decided_at'
  | 'created_at'
>;

function toProposal(row: ProposalColumns): InstructionsProposal {
  return {
    id: row.id,
    agent_id: row.agent_id,
    status: row.status,
    base_version: row.base_version,
    suggested_content: row.suggested_content,
    reason: row.reason,
    resulting_version: row.resulting_version,
    decided_at: row.decided_at ? row.decided_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * An agent suggests an edit of its own instructions; nothing changes until the member
 * accepts it. The router has already checked that the agent echoed the current version.
 */
export async function proposeInstructionsEdit(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  input: { suggested_content: string; reason?: string | null },
): Promise<InstructionsProposal> {
  await assertAgentOfMember(deps, auth, agentId);
  const baseVersion = (await latestVersion(deps.db, agentId)) || 1;
  const [row] = await sqlRows<ProposalColumns>(
    deps.db,
    `INSERT INTO instructions_proposals (agent_id, member_id, credential_id, base_version, suggested_content, reason)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${PROPOSAL_COLUMNS}`,
    [
      agentId,
      auth.memberId,
      isAgentKey(auth) ? auth.keyId : null,
      baseVersion,
      input.suggested_content,
      input.reason ?? null,
    ],
  );
  return toProposal(row);
}

export async function listInstructionsProposals(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  filter: { status?: InstructionsProposal['status']; limit: number; offset: number },
) {
  await assertAgentOfMember(deps, auth, agentId);
  const args: unknown[] = [agentId];
  let where = 'agent_id = $1';
  if (filter.status) {
    args.push(filter.status);
    where += ` AND status = $${args.length}`;
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM instructions_proposals WHERE ${where}`,
    args,
  );
  const rows = await sqlRows<ProposalColumns>(
    deps.db,
    `SELECT ${PROPOSAL_COLUMNS} FROM instructions_proposals WHERE ${where} ORDER BY created_at DESC, id
      LIMIT ${filter.limit} OFFSET ${filter.offset}`,
    args,
  );
  return { proposals: rows.map(toProposal), total };
}

/**
 * The member's review. Accepting saves the suggested content as the next version under
 * the same expected_version rule as a direct save; either decision is final.
 */
export async function decideInstructionsProposal(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  proposalId: string,
  input: { decision: 'accept' | 'reject'; expected_version?: number },
): Promise<{ proposal: InstructionsProposal; instructions: InstructionsDocument }> {
  await assertAgentOfMember(deps, auth, agentId);
  const proposal = await deps.db.transaction(async (tx) => {
    const [row] = await sqlRows<ProposalColumns>(
      tx,
      `SELECT ${PROPOSAL_COLUMNS} FROM instructions_proposals WHERE id = $1 AND agent_id = $2 FOR UPDATE`,
      [proposalId, agentId],
    );
    if (!row) throw errors.notFound('Proposal');
    if (row.status !== 'pending') {
      throw errors.conflict('PROPOSAL_ALREADY_DECIDED', `This proposal was already ${row.status}.`, {
        suggestedAction: 'Nothing to do: GET /v1/agents/{id}/instructions/proposals shows the pending ones.',
      });
    }
    let resulting: number | null = null;
    if (input.decision === 'accept') {
      if (input.expected_version === undefined) {
        throw errors.validation([{ path: 'expected_version', message: 'required when accepting' }]);
      }
      await insertNextVersion(
        tx,
        agentId,
        input.expected_version,
        row.suggested_content,
        row.reason ?? `proposal ${proposalId}`,
      );
      resulting = input.expected_version + 1;
    }
    // A CTE: TypeORM answers a bare UPDATE with [rows, rowCount] instead of the rows.
    const [updated] = await sqlRows<ProposalColumns>(
      tx,
      `WITH changed AS (UPDATE instructions_proposals SET status = $2, resulting_version = $3, decided_at = now() WHERE id = $1
                         RETURNING ${PROPOSAL_COLUMNS}) SELECT * FROM changed`,
      [proposalId, input.decision === 'accept' ? 'accepted' : 'rejected', resulting],
    );
    return toProposal(updated);
  });
  return { proposal, instructions: (await currentInstructions(deps, agentId))! };
}
