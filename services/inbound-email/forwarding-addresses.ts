// Intake aliases (inbound forwarding addresses): list, read, create (a random or a vanity
// local part at the intake domain) and update (settings, the agent, pause or archive).
// Agent keys see and create only aliases of their own agent; an archived alias stays archived.
import { randomBytes } from 'node:crypto';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { canSee } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { errors } from '../../domain/shared/errors';
import { pagination } from '../../domain/shared/pagination';
import {
  aliasStatusMoveProblem,
  AliasStatus,
  randomLocalPart,
  vanityProblem,
} from '../../domain/inbound-email/aliases';
import { iso, ownerFilter } from './caller-scope';
import { ALIAS_COLUMNS, type AliasRow, insertAlias, updateAlias } from './alias-rows';
import { sqlRows } from '../shared/sql';

export { ALIAS_COLUMNS };
export type { AliasRow };

function shapeAlias(r: AliasRow) {
  return {
    id: r.id,
    member_id: r.member_id,
    agent_id: r.agent_id,
    label: r.label,
    alias_local_part: r.alias_local_part,
    domain: r.domain,
    email: r.email,
    alias_type: r.alias_type,
    requested_alias_local_part: r.requested_alias_local_part,
    source_type: r.source_type,
    provider: r.provider,
    handled_by: r.handled_by,
    capture_method: r.capture_method,
    automation_level: r.automation_level,
    approval_mode: r.approval_mode,
    status: r.status,
    last_received_at: iso(r.last_received_at),
    metadata: r.metadata ?? {},
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
export type ForwardingAddress = ReturnType<typeof shapeAlias>;

export interface ListAliasesInput {
  status?: AliasStatus;
  agent_id?: string;
  limit: number;
  offset: number;
}

export async function listForwardingAddresses(deps: Deps, auth: AuthContext, input: ListAliasesInput) {
  const params: unknown[] = [];
  let where = await ownerFilter(deps, auth, 'a', input.agent_id, params);
  if (input.status) {
    params.push(input.status);
    where += ` AND a.status = $${params.length}`;
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM inbound_forwarding_aliases a WHERE ${where}`,
    params,
  );
  const rows = await sqlRows<AliasRow>(
    deps.db,
    `SELECT ${ALIAS_COLUMNS} FROM inbound_forwarding_aliases a WHERE ${where} ORDER BY created_at DESC, id LIMIT ${input.limit} OFFSET ${input.offset}`,
    params,
  );
  return { forwarding_addresses: rows.map(shapeAlias), pagination: pagination(total, input.limit, input.offset) };
}

async function loadAlias(deps: Deps, auth: AuthContext, id: string): Promise<AliasRow> {
  const [row] = await sqlRows<AliasRow>(
    deps.db,
    `SELECT ${ALIAS_COLUMNS} FROM inbound_forwarding_aliases WHERE id = $1`,
    [id],
  );
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) {
    throw errors.notFound('Inbound forwarding address');
  }
  return row;
}

export async function getForwardingAddress(deps: Deps, auth: AuthContext, id: string) {
  return { forwarding_address: shapeAlias(await loadAlias(deps, auth, id)) };
}

export interface AliasSettings {
  label?: string;
  source_type?: string;
  provider?: string | null;
  handled_by?: string;
  capture_method?: string;
  automation_level?: string;
  approval_mode?: string;
  metadata?: Record<string, unknown>;
}

export interface CreateAliasInput extends AliasSettings {
  agent_id?: string | null;
  alias_type: 'random' | 'vanity';
  requested_alias_local_part?: string;
}

const RANDOM_ATTEMPTS = 5;
const ALIAS_ARCHIVED_HINT =
  'Archived aliases stay archived; create a new alias with POST /v1/inbound-forwarding-addresses.';

export async function createForwardingAddress(deps: Deps, auth: AuthContext, input: CreateAliasInput) {
  // Agent keys always create aliases for their own agent (an agent_id they pass is ignored).
  const agentId = isAgentKey(auth) ? auth.agentId : (input.agent_id ?? null);
  if (!isAgentKey(auth)) await assertLinkedObjects(deps.db, auth, { agent_id: ['agent', agentId] });
  const handledBy = input.handled_by ?? (agentId ? 'agent' : 'member');
  if (handledBy === 'agent' && !agentId) {
    throw errors.validation([{ path: 'handled_by', message: 'handled_by agent needs an agent_id' }]);
  }
  let requested: string | null = null;
  if (input.alias_type === 'vanity') {
    if (!input.requested_alias_local_part)
      throw errors.validation([{ path: 'requested_alias_local_part', message: 'required when alias_type is vanity' }]);
    const problem = vanityProblem(input.requested_alias_local_part);
    if (problem) throw errors.validation([{ path: 'requested_alias_local_part', message: problem }]);
    requested = input.requested_alias_local_part;
  } else if (input.requested_alias_local_part !== undefined) {
    throw errors.validation([
      { path: 'requested_alias_local_part', message: 'only allowed when alias_type is vanity' },
    ]);
  }

  for (let attempt = 0; attempt < (requested ? 1 : RANDOM_ATTEMPTS); attempt++) {
    const localPart = requested ? requested.trim().toLowerCase() : randomLocalPart(randomBytes(10));
    const rows = await insertAlias(deps.db, [
      auth.memberId,
      agentId,
      auth.testMode,
      input.label ?? 'Forwarded mail',
      localPart,
      deps.config.inboundEmailDomain,
      input.alias_type,
      requested,
      input.source_type ?? 'email_forward',
      input.provider ?? null,
      handledBy,
      input.capture_method ?? 'any',
      input.automation_level ?? 'medium',
      input.approval_mode ?? 'always_require',
      JSON.stringify(input.metadata ?? {}),
    ]);
    if (rows.length) return { forwarding_address: shapeAlias(rows[0]) };
  }
  if (requested) {
    throw errors.conflict(
      'ALIAS_TAKEN',
      `${requested.toLowerCase()}@${deps.config.inboundEmailDomain} is already taken.`,
      {
        suggestedAction: 'Choose another requested_alias_local_part, or create a random alias.',
      },
    );
  }
  throw errors.unavailable('ALIAS_GENERATION_FAILED', 'Could not generate a free random alias; retry.');
}

export interface UpdateAliasInput extends AliasSettings {
  agent_id?: string | null;
  status?: AliasStatus;
}

export async function updateForwardingAddress(deps: Deps, auth: AuthContext, id: string, input: UpdateAliasInput) {
  const current = await loadAlias(deps, auth, id);
  if (input.agent_id !== undefined && isAgentKey(auth) && input.agent_id !== current.agent_id) {
    throw errors.forbidden('member_key_required', 'Only a member key can reassign an alias to another agent.');
  }
  if (!isAgentKey(auth)) await assertLinkedObjects(deps.db, auth, { agent_id: ['agent', input.agent_id] });
  if (input.status) {
    const problem = aliasStatusMoveProblem(current.status, input.status);
    if (problem)
      throw errors.conflict('ALIAS_ARCHIVED', `This alias is archived: ${problem}.`, {
        suggestedAction: ALIAS_ARCHIVED_HINT,
      });
  } else if (current.status === 'archived' && Object.keys(input).length) {
    throw errors.conflict('ALIAS_ARCHIVED', 'This alias is archived and can no longer be changed.', {
      suggestedAction: ALIAS_ARCHIVED_HINT,
    });
  }
  const agentId = input.agent_id !== undefined ? input.agent_id : current.agent_id;
  const handledBy =
    input.handled_by ?? (input.agent_id === null && current.handled_by === 'agent' ? 'member' : current.handled_by);
  if (handledBy === 'agent' && !agentId) {
    throw errors.validation([{ path: 'handled_by', message: 'handled_by agent needs an agent_id' }]);
  }
  const [updated] = await updateAlias(deps.db, [
    id,
    input.label ?? current.label,
    agentId,
    input.source_type ?? current.source_type,
    input.provider !== undefined ? input.provider : current.provider,
    handledBy,
    input.capture_method ?? current.capture_method,
    input.automation_level ?? current.automation_level,
    input.approval_mode ?? current.approval_mode,
    input.status ?? current.status,
    JSON.stringify(input.metadata ?? current.metadata ?? {}),
  ]);
  return { forwarding_address: shapeAlias(updated) };
}
