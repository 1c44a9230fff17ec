// GET /v1/usage: what a period cost. Pieces by status, live spend and refunds, the
// current balance, and the ledger movements of the period. Agent keys see only their
// own agent's pieces and the debits and refunds of those pieces; member keys see the
// whole account (or one agent with ?agent_id=). The sandbox spends nothing, so test-mode
// usage counts test pieces and lists no ledger movements.
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { errors } from '../../domain/shared/errors';
import { formatCents } from '../../domain/shared/money';
import { getBalance } from './credits';
import { resolveAgentFilter } from '../shared/scoping';
import { sqlRows } from '../shared/sql';

export interface UsageQuery {
  period_start?: string;
  period_end?: string;
  agent_id?: string;
  test_mode?: boolean;
}

/** Ledger movements listed per call; older ones in a longer period are summarised only. */
export const USAGE_EVENTS_LIMIT = 1000;

export async function getUsage(deps: Deps, auth: AuthContext, query: UsageQuery) {
  const now = new Date();
  const start = query.period_start
    ? new Date(query.period_start)
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = query.period_end ? new Date(query.period_end) : now;
  if (start.getTime() >= end.getTime())
    throw errors.validation([{ path: 'query.period_start', message: 'must be before period_end' }]);
  const agentId = await resolveAgentFilter(deps, auth, query.agent_id);
  const testMode = query.test_mode ?? auth.testMode;

  const pieceParams: unknown[] = [auth.memberId, testMode, start, end];
  const agentClause = agentId ? ` AND agent_id = $${pieceParams.push(agentId)}` : '';
  const pieceRows = await sqlRows<{ status: string; n: number }>(
    deps.db,
    `SELECT status, count(*)::int AS n FROM outbound_mail
      WHERE member_id = $1 AND test_mode = $2 AND created_at >= $3 AND created_at < $4${agentClause} GROUP BY status`,
    pieceParams,
  );
  const byStatus = Object.fromEntries(pieceRows.map((r) => [r.status, r.n]));
  const total = pieceRows.reduce((sum, r) => sum + r.n, 0);

  // Ledger movements of the period; an agent's view is limited to its own pieces' money.
  const ledgerParams: unknown[] = [auth.memberId, start, end];
  const ledgerScope = agentId
    ? ` AND l.reference_type = 'outbound_mail' AND EXISTS (SELECT 1 FROM outbound_mail o WHERE o.id::text = l.reference_id AND o.agent_id = $${ledgerParams.push(agentId)})`
    : '';
  const ledgerWhere = `l.member_id = $1 AND l.created_at >= $2 AND l.created_at < $3${ledgerScope}`;
  let spend = 0;
  let refunds = 0;
  let events: Record<string, unknown>[] = [];
  let truncated = false;
  if (!testMode) {
    const [sums] = await sqlRows<{ spend: string; refunds: string; n: number }>(
      deps.db,
      `SELECT COALESCE(-SUM(amount_cents) FILTER (WHERE kind = 'debit'), 0)::bigint AS spend,
              COALESCE(SUM(amount_cents) FILTER (WHERE kind = 'refund'), 0)::bigint AS refunds,
              count(*)::int AS n
         FROM credits_ledger l WHERE ${ledgerWhere}`,
      ledgerParams,
    );
    spend = Number(sums.spend);
    refunds = Number(sums.refunds);
    truncated = sums.n > USAGE_EVENTS_LIMIT;
    const rows = await sqlRows<{
      id: string;
      kind: string;
      amount_cents: number;
      description: string | null;
      reference_type: string | null;
      reference_id: string | null;
      created_at: Date;
    }>(
      deps.db,
      `SELECT l.id, l.kind, l.amount_cents, l.description, l.reference_type, l.reference_id, l.created_at
         FROM credits_ledger l WHERE ${ledgerWhere} ORDER BY l.created_at DESC, l.id LIMIT ${USAGE_EVENTS_LIMIT}`,
      ledgerParams,
    );
    events = rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      amount_cents: r.amount_cents,
      amount_display: formatCents(r.amount_cents),
      description: r.description,
      reference_type: r.reference_type,
      reference_id: r.reference_id,
      created_at: r.created_at.toISOString(),
    }));
  }

  return {
    period: { start: start.toISOString(), end: end.toISOString() },
    summary: {
      pieces: { total, by_status: byStatus },
      spend_cents: spend,
      refunds_cents: refunds,
      net_spend_cents: spend - refunds,
      net_spend_display: formatCents(spend - refunds),
    },
    credits: await getBalance(deps, auth.memberId!),
    events,
    events_truncated: truncated,
  };
}
