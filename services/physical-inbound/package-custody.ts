// Packages are physical inbound custody: letters and parcels held at the member's private
// mailbox, seen through the custody API. This module holds what every package request
// checks first (the account has packages enabled, the item is the caller's live package,
// an agent key has the scope) and the package's summary.
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { ApiError, errors } from '../../domain/shared/errors';
import { Db, findItem, ItemRow, updateReturning } from './item-records';
import type { MemberRow } from '../accounts/rows';
import { sqlRows } from '../shared/sql';
import { setMemberPackagesEnabled } from '../accounts/member-rows';

export async function enablePackages(
  deps: Deps,
  memberId: string,
  enabled = true,
): Promise<{ member_id: string; packages_enabled: boolean }> {
  const updated = await setMemberPackagesEnabled(deps.db, memberId, enabled);
  if (!updated.length) throw new Error(`no member ${memberId}`);
  return { member_id: updated[0].id, packages_enabled: updated[0].packages_enabled };
}

export async function assertPackagesEnabled(deps: Deps, auth: AuthContext): Promise<void> {
  const [member] = await sqlRows<Pick<MemberRow, 'packages_enabled'>>(
    deps.db,
    `SELECT packages_enabled FROM members WHERE id = $1`,
    [auth.memberId],
  );
  if (!member?.packages_enabled) {
    throw new ApiError(403, 'Physical inbound custody is not enabled for this account.', {
      reason: 'packages_not_enabled',
      suggestedAction: 'Ask the service to enable packages for the account.',
    });
  }
}

/** 404 for another member's (or a test) item; 403 for another agent's package. */
export async function loadPackage(
  deps: Deps,
  auth: AuthContext,
  id: string,
  db: Db = deps.db,
  forUpdate = false,
): Promise<ItemRow> {
  await assertPackagesEnabled(deps, auth);
  const item = await findItem(db, id, { forUpdate });
  if (!item || item.member_id !== auth.memberId || item.environment !== 'live') throw errors.notFound('Package');
  if (isAgentKey(auth) && item.agent_id !== auth.agentId) {
    throw new ApiError(403, 'This package belongs to another agent.', { reason: 'package_belongs_to_another_agent' });
  }
  return item;
}

export function requireScope(auth: AuthContext, scope: string): void {
  if (isAgentKey(auth) && !auth.scopes.has(scope)) {
    throw new ApiError(403, `Missing scope: ${scope}`, {
      reason: 'insufficient_scope',
      details: { required_scopes: [scope] },
    });
  }
}

export async function photoCounts(db: Db, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const rows = await sqlRows<{ item_id: string; n: number }>(
    db,
    `SELECT item_id, count(*)::int AS n FROM (
       SELECT item_id FROM inbound_photos WHERE item_id = ANY($1::uuid[])
       UNION ALL SELECT item_id FROM scan_pages WHERE item_id = ANY($1::uuid[])) x GROUP BY item_id`,
    [ids],
  );
  return new Map(rows.map((r) => [r.item_id, r.n]));
}

export function packageSummary(item: ItemRow, photos: number) {
  return {
    id: item.id,
    mailbox_id: item.mailbox_id,
    agent_id: item.agent_id,
    tracking_number: item.tracking_number,
    carrier: item.carrier,
    weight_oz: item.weight_oz,
    status: item.status,
    received_at: item.received_at.toISOString(),
    photos_count: photos,
    kind: item.kind,
    reference_code: item.reference_code,
  };
}
