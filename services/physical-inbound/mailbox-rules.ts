// Mailbox rules: an agent's standing instructions for pieces that reach its private
// mailbox. A rule matches an arriving piece literally on its label (sender name terms,
// carrier, letter or parcel) and requests an action (the ActionRequest enum) and/or adds
// tags; services/physical-inbound/package-arrival.ts applies them when the facility commits a piece.
// Agent-specific (member keys pass ?agent_id=), account-enabled and live-only like packages.
import type { AuthContext } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { createdBy, ownsAgentRecord, scopedAgent } from '../accounts/agent-specific';
import { checkActionRequest } from './package-actions';
import { assertPackagesEnabled } from './package-custody';
import { Db, updateReturning } from './item-records';
import { errors } from '../../domain/shared/errors';
import type { FieldError } from '../../domain/shared/errors';
import { pagination } from '../../domain/shared/pagination';
import {
  ARRIVAL_LIMITS,
  emptyApplyProblem,
  emptyMatchProblem,
  MailboxRule,
  RuleApply,
  RuleMatch,
} from '../../domain/physical-inbound/package-arrival';
import { termProblem } from '../../domain/webhooks/rules';
import { sqlRows, sqlRun } from '../shared/sql';

interface RuleRow extends MailboxRule {
  member_id: string;
  agent_id: string;
  created_by: 'agent' | 'member';
  match_count: number;
  last_matched_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, member_id, agent_id, name, enabled, match, apply, created_by, match_count, last_matched_at, created_at, updated_at';

export function ruleView(r: RuleRow) {
  return {
    object: 'mailbox_rule' as const,
    id: r.id,
    agent_id: r.agent_id,
    name: r.name,
    enabled: r.enabled,
    match: r.match,
    apply: r.apply,
    created_by: r.created_by,
    match_count: r.match_count,
    last_matched_at: r.last_matched_at ? r.last_matched_at.toISOString() : null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/** Checks what zod cannot: something to match and something to do, visible terms, a permitted action. Returns what is stored. */
function checkedRule(
  auth: AuthContext,
  match: RuleMatch | undefined,
  apply: RuleApply | undefined,
): { match?: RuleMatch; apply?: RuleApply } {
  const fields: FieldError[] = [];
  if (match) {
    const empty = emptyMatchProblem(match);
    if (empty) fields.push({ path: 'match', message: empty });
    match.sender_contains?.forEach((term, i) => {
      const problem = termProblem(term);
      if (problem) fields.push({ path: `match.sender_contains.${i}`, message: problem });
    });
  }
  if (apply) {
    const empty = emptyApplyProblem(apply);
    if (empty) fields.push({ path: 'apply', message: empty });
  }
  if (fields.length) throw errors.validation(fields);
  if (!apply?.request_action) return { match, apply };
  const address = checkActionRequest(auth, apply.request_action, 'apply.request_action.');
  const requestAction = address
    ? { ...apply.request_action, parameters: { ...apply.request_action.parameters, ...address } }
    : apply.request_action;
  return { match, apply: { ...apply, request_action: requestAction } };
}

export interface RuleListQuery {
  agent_id?: string;
  enabled?: boolean;
  limit: number;
  offset: number;
}

export async function listMailboxRules(deps: Deps, auth: AuthContext, query: RuleListQuery) {
  await assertPackagesEnabled(deps, auth);
  const agentId = await scopedAgent(deps, auth, query.agent_id, { required: true });
  const params: unknown[] = [auth.memberId, agentId];
  let where = 'member_id = $1 AND agent_id = $2';
  if (query.enabled !== undefined) {
    params.push(query.enabled);
    where += ` AND enabled = $${params.length}`;
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM mailbox_rules WHERE ${where}`,
    params,
  );
  const rows = await sqlRows<RuleRow>(
    deps.db,
    `SELECT ${COLUMNS} FROM mailbox_rules WHERE ${where} ORDER BY created_at, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, query.limit, query.offset],
  );
  return { rules: rows.map(ruleView), pagination: pagination(total, query.limit, query.offset) };
}

export interface RuleBody {
  name: string;
  enabled: boolean;
  match: RuleMatch;
  apply: RuleApply;
}

export async function createMailboxRule(
  deps: Deps,
  auth: AuthContext,
  agentIdQuery: string | undefined,
  body: RuleBody,
) {
  await assertPackagesEnabled(deps, auth);
  const agentId = (await scopedAgent(deps, auth, agentIdQuery, { required: true }))!;
  const { match, apply } = checkedRule(auth, body.match, body.apply);
  const row = await deps.db.transaction(async (tx) => {
    // One creation at a time per agent, so the limit holds under concurrent calls.
    await sqlRun(tx, `SELECT 1 FROM agents WHERE id = $1 FOR UPDATE`, [agentId]);
    const [{ n }] = await sqlRows<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM mailbox_rules WHERE agent_id = $1`,
      [agentId],
    );
    if (n >= ARRIVAL_LIMITS.rulesPerAgent) {
      throw errors.unprocessable(
        'MAILBOX_RULE_LIMIT',
        `An agent may have at most ${ARRIVAL_LIMITS.rulesPerAgent} mailbox rules.`,
        {
          suggestedAction: 'Delete or combine rules.',
        },
      );
    }
    const [inserted] = await sqlRows<RuleRow>(
      tx,
      `INSERT INTO mailbox_rules (member_id, agent_id, name, enabled, match, apply, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [auth.memberId, agentId, body.name, body.enabled, JSON.stringify(match), JSON.stringify(apply), createdBy(auth)],
    );
    return inserted;
  });
  return { rule: ruleView(row) };
}

async function loadRule(
  db: Db,
  auth: AuthContext,
  id: string,
  agentFilter: string | null,
  forUpdate = false,
): Promise<RuleRow> {
  const [row] = await sqlRows<RuleRow>(
    db,
    `SELECT ${COLUMNS} FROM mailbox_rules WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [id],
  );
  if (!row || !ownsAgentRecord(auth, agentFilter, row)) throw errors.notFound('Mailbox rule');
  return row;
}

export async function getMailboxRule(deps: Deps, auth: AuthContext, id: string, agentIdQuery?: string) {
  await assertPackagesEnabled(deps, auth);
  const agentFilter = await scopedAgent(deps, auth, agentIdQuery, { required: false });
  return { rule: ruleView(await loadRule(deps.db, auth, id, agentFilter)) };
}

/** PATCH: name, enabled, and match or apply (each replaced whole). */
export async function updateMailboxRule(
  deps: Deps,
  auth: AuthContext,
  id: string,
  agentIdQuery: string | undefined,
  body: Partial<RuleBody>,
) {
  await assertPackagesEnabled(deps, auth);
  const agentFilter = await scopedAgent(deps, auth, agentIdQuery, { required: false });
  const { match, apply } = checkedRule(auth, body.match, body.apply);
  const row = await deps.db.transaction(async (tx) => {
    const current = await loadRule(tx, auth, id, agentFilter, true);
    const [updated]: RuleRow[] = await updateReturning(
      tx,
      `UPDATE mailbox_rules SET name = $2, enabled = $3, match = $4, apply = $5, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
      [
        id,
        body.name ?? current.name,
        body.enabled ?? current.enabled,
        JSON.stringify(match ?? current.match),
        JSON.stringify(apply ?? current.apply),
      ],
    );
    return updated;
  });
  return { rule: ruleView(row) };
}

export async function deleteMailboxRule(deps: Deps, auth: AuthContext, id: string, agentIdQuery?: string) {
  await assertPackagesEnabled(deps, auth);
  const agentFilter = await scopedAgent(deps, auth, agentIdQuery, { required: false });
  const rule = await loadRule(deps.db, auth, id, agentFilter);
  await sqlRun(deps.db, `DELETE FROM mailbox_rules WHERE id = $1`, [rule.id]);
  return { deleted: true, id: rule.id };
}

// ---------------------------------------------------------------------------------------
// Arrival (facility intake)

/** The agent's rules in the order they apply (oldest first). */
export async function rulesOfAgent(tx: Db, memberId: string, agentId: string): Promise<Array<RuleRow>> {
  return sqlRows<RuleRow>(
    tx,
    `SELECT ${COLUMNS} FROM mailbox_rules WHERE member_id = $1 AND agent_id = $2 ORDER BY created_at, id`,
    [memberId, agentId],
  );
}

export async function countRuleMatches(tx: Db, ruleIds: string[]): Promise<void> {
  if (!ruleIds.length) return;
  await sqlRun(
    tx,
    `UPDATE mailbox_rules SET match_count = match_count + 1, last_matched_at = now() WHERE id = ANY($1::uuid[])`,
    [ruleIds],
  );
}
