// The versioned standing-instructions document of each agent, and the guard that makes
// agent keys echo its current version on mutating calls.
import type { EntityManager } from 'typeorm';
import type { Deps } from './deps';
import type { AuthContext } from './auth';
import { isAgentKey } from './auth';
import { errors } from '../domain/errors';
import { sha256Hex } from '../domain/keys';

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
  await tx.query(
    `INSERT INTO instructions_versions (agent_id, version, text, hash, source) VALUES ($1, 1, $2, $3, 'platform_fallback')`,
    [agentId, PLATFORM_FALLBACK_INSTRUCTIONS, instructionsHash(PLATFORM_FALLBACK_INSTRUCTIONS)],
  );
}

export async function currentInstructions(deps: Deps | { db: { query: EntityManager['query'] } }, agentId: string): Promise<InstructionsDocument | null> {
  const [row] = await deps.db.query(
    `SELECT agent_id, text, version, hash, created_at, source FROM instructions_versions
      WHERE agent_id = $1 ORDER BY version DESC LIMIT 1`, [agentId]);
  if (!row) return null;
  return { agent_id: row.agent_id, text: row.text, version: row.version, hash: row.hash, updated_at: row.created_at.toISOString(), source: row.source };
}

/**
 * Agent keys must send the current instructions version on mutating calls: 400 when
 * missing or not an integer, 409 when stale. Member and facility keys are not checked.
 */
export async function assertInstructionsVersion(deps: Deps, auth: AuthContext, sent: string | number | undefined | null): Promise<void> {
  if (!isAgentKey(auth) || !auth.agentId) return;
  if (sent === undefined || sent === null || String(sent).trim() === '') {
    throw errors.badRequest('SERVICE_MD_VERSION_REQUIRED', 'Agent keys must send X-Service-MD-Version with the current instructions version.', {
      suggestedAction: 'GET /v1/agents/{id}/instructions, read it, and send its version in X-Service-MD-Version.',
    });
  }
  const version = Number(sent);
  if (!Number.isInteger(version) || version < 1) {
    throw errors.badRequest('SERVICE_MD_VERSION_REQUIRED', 'X-Service-MD-Version must be a positive integer.', {
      fields: [{ path: 'headers.x-service-md-version', message: 'must be a positive integer' }],
    });
  }
  const current = await currentInstructions(deps, auth.agentId);
  const currentVersion = current?.version ?? 1;
  if (version !== currentVersion) {
    throw errors.conflict('SERVICE_MD_VERSION_MISMATCH', `Instructions version ${version} is stale; the current version is ${currentVersion}.`, {
      details: { current_version: currentVersion, sent_version: version },
      suggestedAction: 'Re-read the instructions document, then retry with its current version.',
    });
  }
}
