// Package actions, facility side (sk_facility_ keys): the actions to carry out, most
// urgent first, and the facility's progress on each (in progress, clarification needed,
// completed, failed), which moves the package with it. Scan actions complete by fulfilling
// their scan request (services/physical-inbound/scan-requests.ts) instead.
import { paginationWithNext } from '../../domain/shared/pagination';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { errors } from '../../domain/shared/errors';
import { checkPackageActionUpdate, PackageActionStatus, packageStatusAfter } from '../../domain/workflow-safe/handling';
import type { ItemKind } from '../../domain/physical-inbound/search';
import { bumpItem, findItem, recordActivity } from './item-records';
import type { PackageActionRow, PackageForwardRow } from './rows';
import { updatePackageActionByFacility } from './package-rows';
import { sqlRows } from '../shared/sql';

type ForwardAddressColumn =
  | 'to_name'
  | 'to_line1'
  | 'to_line2'
  | 'to_city'
  | 'to_state'
  | 'to_zip'
  | 'to_country'
  | 'service_level'
  | 'carrier_preference'
  | 'insurance'
  | 'signature_required';

/** An action in the facility's list: its row, its package's columns and, for a forward, the address (null otherwise). */
type FacilityActionListRow = PackageActionRow & {
  reference_code: string;
  mailbox_id: string | null;
  kind: ItemKind;
  package_status: string;
  total: string;
} & { [K in ForwardAddressColumn]: PackageForwardRow[K] | null };

export async function listFacilityPackageActions(
  deps: Deps,
  auth: AuthContext,
  query: { status?: PackageActionStatus; limit: number; offset: number },
) {
  const statuses = query.status ? [query.status] : ['requested', 'clarification_needed', 'in_progress'];
  const rows = await sqlRows<FacilityActionListRow>(
    deps.db,
    `SELECT p.*, i.reference_code, i.mailbox_id, i.kind, i.status AS package_status, f.to_name, f.to_line1, f.to_line2, f.to_city, f.to_state,
            f.to_zip, f.to_country, f.service_level, f.carrier_preference, f.insurance, f.signature_required, count(*) OVER () AS total
       FROM package_actions p JOIN physical_inbound_items i ON i.id = p.item_id LEFT JOIN package_forwards f ON f.action_id = p.id
      WHERE i.facility_id = $1 AND p.status = ANY($2::text[]) ORDER BY
        CASE p.priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END, p.created_at, p.id
      LIMIT $3 OFFSET $4`,
    [auth.facilityId, statuses, query.limit, query.offset],
  );
  return {
    actions: rows.map((r) => ({
      id: r.id,
      package_id: r.item_id,
      action: r.action,
      priority: r.priority,
      parameters: r.parameters,
      status: r.status,
      version: r.version,
      agent_notes: r.agent_notes,
      clarification_question: r.clarification_question,
      clarification_response: r.clarification_response,
      package: { reference_code: r.reference_code, mailbox_id: r.mailbox_id, kind: r.kind, status: r.package_status },
      forwarding_address: r.to_name
        ? {
            to_name: r.to_name,
            to_line1: r.to_line1,
            to_line2: r.to_line2,
            to_city: r.to_city,
            to_state: r.to_state,
            to_zip: r.to_zip,
            to_country: r.to_country,
            service_level: r.service_level,
            carrier_preference: r.carrier_preference,
            insurance: r.insurance,
            signature_required: r.signature_required,
          }
        : null,
      created_at: r.created_at.toISOString(),
    })),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, query.limit, query.offset),
  };
}

export interface FacilityActionUpdate {
  status: 'in_progress' | 'clarification_needed' | 'completed' | 'failed';
  expected_version: number;
  clarification_question?: string;
  tracking_number?: string;
  carrier?: string;
  note?: string;
}

/** POST /v1/facility/package-actions/{id}/status: the facility's progress on a package action. */
export async function updateFacilityPackageAction(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: FacilityActionUpdate,
) {
  return deps.db.transaction(async (tx) => {
    const [action] = await sqlRows<PackageActionRow>(
      tx,
      `SELECT p.* FROM package_actions p JOIN physical_inbound_items i ON i.id = p.item_id WHERE p.id = $1 AND i.facility_id = $2 FOR UPDATE OF p`,
      [id, auth.facilityId],
    );
    if (!action) throw errors.notFound('Action');
    const refusal = checkPackageActionUpdate(action.action, action.status, body);
    if (refusal?.kind === 'invalid') throw errors.validation(refusal.fields);
    if (refusal?.kind === 'state') {
      throw errors.conflict('ACTION_NOT_ACTIVE', refusal.message, {
        suggestedAction: 'GET /v1/facility/package-actions lists the actions still open.',
      });
    }
    if (action.version !== body.expected_version) {
      throw errors.conflict(
        'VERSION_STALE',
        `The action is at version ${action.version}; expected_version ${body.expected_version} is stale.`,
        {
          details: { current_version: action.version },
          suggestedAction: "GET /v1/facility/package-actions again and retry with the action's current version.",
        },
      );
    }
    const item = (await findItem(tx, action.item_id, { forUpdate: true }))!;
    const result = {
      ...(action.result ?? {}),
      ...(body.tracking_number ? { tracking_number: body.tracking_number } : {}),
      ...(body.carrier ? { carrier: body.carrier } : {}),
      ...(body.note ? { note: body.note } : {}),
    };
    const updated = await updatePackageActionByFacility(
      tx,
      id,
      body.status,
      result,
      body.clarification_question ?? null,
    );
    const next = packageStatusAfter(action.action, body.status, action.package_status_before);
    await bumpItem(tx, item.id, next);
    await recordActivity(tx, item, 'package_action_updated', {
      action_id: id,
      action: action.action,
      status: body.status,
      ...(body.tracking_number ? { tracking_number: body.tracking_number } : {}),
    });
    return {
      action: {
        id: updated.id,
        package_id: item.id,
        action: updated.action,
        status: updated.status,
        version: updated.version,
        result,
      },
      package_status: next ?? item.status,
    };
  });
}
