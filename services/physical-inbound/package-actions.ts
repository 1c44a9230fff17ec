// Package actions, as agents and members ask for them: an action the facility carries out
// (scope forward.create for forward, package.write otherwise), a forwarding request (a
// forward action with its address), a scan request (a scan action), and changes to an
// active action. The facility's side is services/physical-inbound/facility-package-actions.ts.
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { errors } from '../../domain/shared/errors';
import {
  ACTIVE_PACKAGE_ACTION_STATUSES,
  checkForwardAddress,
  ForwardAddress,
  PackageActionStatus,
  PackageActionType,
  packageActionUnavailable,
  packageStatusOnRequest,
} from '../../domain/workflow-safe/handling';
import { bumpItem, Db, findItem, ItemRow, recordActivity } from './item-records';
import { loadItemBundles, scanSummary } from './scan-bundles';
import { refreshSearchFields } from './search-index';
import { scanRequestView } from './scan-request-view';
import { loadPackage, packageSummary, photoCounts, requireScope } from './package-custody';
import type { PackageActionRow, PackageForwardRow, ScanRequestRow } from './rows';
import { insertPackageActionScanRequest } from './scan-rows';
import { insertPackageAction, updatePackageActionByCaller } from './package-rows';
import { sqlRows, sqlRun } from '../shared/sql';

/** An action as ACTION_SELECT reads it: its row and the id of its scan request, if it has one. */
export type PackageAction = PackageActionRow & { scan_request_id: string | null };

export function actionView(r: PackageAction) {
  return {
    id: r.id,
    package_id: r.item_id,
    action: r.action,
    priority: r.priority,
    parameters: r.parameters,
    status: r.status,
    version: r.version,
    requested_by: r.requested_by,
    agent_notes: r.agent_notes,
    agent_data: r.agent_data,
    clarification_question: r.clarification_question,
    clarification_response: r.clarification_response,
    decision_context: r.decision_context,
    result: r.result,
    scan_request_id: r.scan_request_id ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    completed_at: r.completed_at ? r.completed_at.toISOString() : null,
  };
}

export const ACTION_SELECT = `SELECT p.*, (SELECT r.id FROM scan_requests r WHERE r.package_action_id = p.id LIMIT 1) AS scan_request_id FROM package_actions p`;

export interface ActionRequestBody {
  action: PackageActionType;
  priority?: 'low' | 'normal' | 'high' | 'urgent';
  parameters?: Record<string, unknown>;
}

const SCAN_TYPES = ['label', 'envelope', 'document', 'content'];

/** Who asks for an action: a caller, or an agent's standing instruction applied on arrival (with a note saying which). */
export interface ActionRequester {
  by: 'agent' | 'member';
  agentId: string | null;
  agentNotes?: string;
  agentData?: Record<string, unknown>;
}

function requesterOf(auth: AuthContext, item: ItemRow): ActionRequester {
  return isAgentKey(auth) ? { by: 'agent', agentId: auth.agentId } : { by: 'member', agentId: item.agent_id };
}

/** Records an action (inside `tx`): forwarding record, package state and scan request as the action needs. */
export async function insertAction(
  tx: EntityManager,
  requester: ActionRequester,
  item: ItemRow,
  body: ActionRequestBody,
  forward:
    | (ForwardAddress & {
        carrier_preference?: string | null;
        service_level?: string;
        insurance?: boolean;
        signature_required?: boolean;
      })
    | null,
): Promise<PackageAction> {
  const reason = packageActionUnavailable(body.action, item.status);
  if (reason) {
    const message = `${body.action} is not possible: ${reason}.`;
    const suggestedAction =
      'GET /v1/packages/{id} for its current status; only the actions its status allows can be requested.';
    if (body.action === 'forward') throw errors.badRequest('PACKAGE_NOT_FORWARDABLE', message, { suggestedAction });
    throw errors.conflict('PACKAGE_ACTION_NOT_AVAILABLE', message, { suggestedAction });
  }
  const parameters = body.parameters ?? {};
  const action = await insertPackageAction(tx, {
    item_id: item.id,
    member_id: item.member_id,
    agent_id: requester.agentId,
    action: body.action,
    priority: body.priority ?? 'normal',
    parameters,
    requested_by: requester.by,
    package_status_before: item.status,
    agent_notes: requester.agentNotes ?? null,
    agent_data: requester.agentData,
  });
  if (forward) {
    await sqlRun(
      tx,
      `INSERT INTO package_forwards (item_id, action_id, to_name, to_line1, to_line2, to_city, to_state, to_zip, to_country, carrier_preference,
         service_level, insurance, signature_required) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        item.id,
        action.id,
        forward.to_name,
        forward.to_line1,
        forward.to_line2,
        forward.to_city,
        forward.to_state,
        forward.to_zip,
        forward.to_country,
        forward.carrier_preference ?? null,
        forward.service_level ?? 'ground',
        forward.insurance ?? false,
        forward.signature_required ?? false,
      ],
    );
  }
  let scanRequestId: string | null = null;
  if (body.action === 'scan' || body.action === 'open_and_scan') {
    const scanType =
      typeof parameters.scan_type === 'string' && SCAN_TYPES.includes(parameters.scan_type)
        ? parameters.scan_type
        : body.action === 'open_and_scan'
          ? 'content'
          : 'document';
    const request = await insertPackageActionScanRequest(tx, item, {
      agentId: action.agent_id,
      scanType,
      origin: parameters.origin === 'package_scan' ? 'package_scan' : 'package_action',
      packageActionId: action.id,
      options: (parameters.options as Record<string, unknown>) ?? {},
    });
    scanRequestId = request.id;
  }
  await bumpItem(tx, item.id, packageStatusOnRequest(body.action));
  await recordActivity(tx, item, 'package_action_requested', {
    action_id: action.id,
    action: body.action,
    priority: action.priority,
  });
  if (scanRequestId) await refreshSearchFields(tx, item.id);
  return { ...action, scan_request_id: scanRequestId };
}

export async function listPackageActions(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadPackage(deps, auth, id);
  const rows = await sqlRows<PackageAction>(
    deps.db,
    `${ACTION_SELECT} WHERE p.item_id = $1 ORDER BY p.created_at DESC, p.id`,
    [item.id],
  );
  return { package_id: item.id, actions: rows.map(actionView) };
}

/**
 * The caller may ask for this action (forward needs forward.create, anything else
 * package.write) and a forward names a valid address, which is returned. `prefix` is the
 * field path of the ActionRequest in the body.
 */
export function checkActionRequest(auth: AuthContext, body: ActionRequestBody, prefix = ''): ForwardAddress | null {
  requireScope(auth, body.action === 'forward' ? 'forward.create' : 'package.write');
  if (body.action !== 'forward') return null;
  const checked = checkForwardAddress(body.parameters ?? {}, `${prefix}parameters.`);
  if (!checked.ok) throw errors.validation(checked.fields);
  return checked.address;
}

/**
 * POST /v1/packages/{id}/actions: scope forward.create for forward, package.write otherwise
 * (once per optional Idempotency-Key: api/routes/physical-inbound/idempotent-requests.ts).
 */
export async function createPackageAction(deps: Deps, auth: AuthContext, id: string, body: ActionRequestBody) {
  const forward = checkActionRequest(auth, body);
  const action = await deps.db.transaction(async (tx) => {
    const item = await loadPackage(deps, auth, id, tx, true);
    return insertAction(tx, requesterOf(auth, item), item, body, forward);
  });
  return { action: actionView(action) };
}

async function loadAction(db: Db, itemId: string, actionId: string, lock = false): Promise<PackageAction> {
  const [row] = await sqlRows<PackageAction>(
    db,
    `${ACTION_SELECT} WHERE p.id = $1 AND p.item_id = $2${lock ? ' FOR UPDATE OF p NOWAIT' : ''}`,
    [actionId, itemId],
  );
  if (!row) throw errors.notFound('Action');
  return row;
}

export async function getPackageAction(deps: Deps, auth: AuthContext, id: string, actionId: string) {
  const item = await loadPackage(deps, auth, id);
  return { action: actionView(await loadAction(deps.db, item.id, actionId)) };
}

export interface ActionPatch {
  agent_notes?: string;
  agent_data?: Record<string, unknown>;
  respond_to_clarification?: string;
  decision_context?: { mailbox_md_section?: string; reasoning?: string };
}

/**
 * PATCH an active action. Concurrent changes get 409: a change in progress holds the
 * row (NOWAIT), and an If-Match header naming an older version is stale.
 */
export async function patchPackageAction(
  deps: Deps,
  auth: AuthContext,
  id: string,
  actionId: string,
  body: ActionPatch,
  ifMatch?: string,
) {
  const item = await loadPackage(deps, auth, id);
  try {
    const updated = await deps.db.transaction(async (tx) => {
      const action = await loadAction(tx, item.id, actionId, true);
      if (ifMatch !== undefined && ifMatch.replace(/"/g, '').trim() !== String(action.version)) {
        throw errors.conflict(
          'VERSION_STALE',
          `The action is at version ${action.version}; If-Match ${ifMatch} is stale.`,
          {
            details: { current_version: action.version },
            suggestedAction: 'GET the action again and retry with its current version in If-Match.',
          },
        );
      }
      if (!ACTIVE_PACKAGE_ACTION_STATUSES.includes(action.status)) {
        throw errors.badRequest('ACTION_NOT_ACTIVE', `The action is ${action.status} and can no longer be changed.`, {
          suggestedAction: 'Request a new action with POST /v1/packages/{id}/actions if one is still needed.',
        });
      }
      if (body.respond_to_clarification !== undefined && action.status !== 'clarification_needed') {
        throw errors.validation([
          { path: 'respond_to_clarification', message: 'the action is not waiting for a clarification' },
        ]);
      }
      const row = await updatePackageActionByCaller(
        tx,
        actionId,
        {
          agentNotes: body.agent_notes ?? null,
          agentData: body.agent_data ?? null,
          decisionContext: body.decision_context ?? null,
          clarificationResponse: body.respond_to_clarification ?? null,
        },
        action.scan_request_id,
      );
      await recordActivity(tx, item, 'package_action_updated', {
        action_id: actionId,
        by: isAgentKey(auth) ? 'agent' : 'member',
        ...(body.respond_to_clarification !== undefined ? { clarified: true } : {}),
      });
      return row;
    });
    return { action: actionView(updated) };
  } catch (err) {
    if (
      (err as { code?: string }).code === '55P03' ||
      (err as { driverError?: { code?: string } }).driverError?.code === '55P03'
    ) {
      throw errors.conflict(
        'CONCURRENT_MODIFICATION',
        'Another change to this action is in progress; re-read it and retry.',
        {
          retryable: true,
          suggestedAction: 'GET the action again and retry the change.',
        },
      );
    }
    throw err;
  }
}

// ---------------------------------------------------------------------------------------
// Forwarding

/** A forwarding request as FORWARD_SELECT reads it: its row with its action's status and result. */
export type PackageForward = PackageForwardRow & {
  action_status: PackageActionStatus;
  result: PackageActionRow['result'];
};

export function forwardView(r: PackageForward) {
  return {
    id: r.id,
    package_id: r.item_id,
    action_id: r.action_id,
    status: r.action_status,
    to_name: r.to_name,
    to_line1: r.to_line1,
    to_line2: r.to_line2,
    to_city: r.to_city,
    to_state: r.to_state,
    to_zip: r.to_zip,
    to_country: r.to_country,
    carrier_preference: r.carrier_preference,
    service_level: r.service_level,
    insurance: r.insurance,
    signature_required: r.signature_required,
    tracking_number: (r.result?.tracking_number ?? null) as string | null,
    carrier: (r.result?.carrier ?? null) as string | null,
    created_at: r.created_at.toISOString(),
  };
}

export const FORWARD_SELECT = `SELECT f.*, a.status AS action_status, a.result FROM package_forwards f JOIN package_actions a ON a.id = f.action_id`;

export async function listPackageForwards(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadPackage(deps, auth, id);
  const rows = await sqlRows<PackageForward>(
    deps.db,
    `${FORWARD_SELECT} WHERE f.item_id = $1 ORDER BY f.created_at DESC, f.id`,
    [item.id],
  );
  return { package_id: item.id, forwarding_requests: rows.map(forwardView) };
}

export interface ForwardBody {
  to_name: string;
  to_line1: string;
  to_line2?: string;
  to_city: string;
  to_state: string;
  to_zip: string;
  to_country?: string;
  carrier_preference?: string;
  service_level?: string;
  insurance?: boolean;
  signature_required?: boolean;
}

/** POST /v1/packages/{id}/forward: a forwarding request; the package becomes forwarding_requested. */
export async function createPackageForward(deps: Deps, auth: AuthContext, id: string, body: ForwardBody) {
  const checked = checkForwardAddress(body as unknown as Record<string, unknown>);
  if (!checked.ok) throw errors.validation(checked.fields);
  const extras = {
    carrier_preference: body.carrier_preference ?? null,
    service_level: body.service_level ?? 'ground',
    insurance: body.insurance ?? false,
    signature_required: body.signature_required ?? false,
  };
  const { action, item } = await deps.db.transaction(async (tx) => {
    const locked = await loadPackage(deps, auth, id, tx, true);
    const created = await insertAction(
      tx,
      requesterOf(auth, locked),
      locked,
      { action: 'forward', parameters: { ...checked.address, ...extras } },
      { ...checked.address, ...extras },
    );
    return { action: created, item: locked };
  });
  const [forward] = await sqlRows<PackageForward>(deps.db, `${FORWARD_SELECT} WHERE f.action_id = $1`, [action.id]);
  const fresh = (await findItem(deps.db, item.id))!;
  const counts = await photoCounts(deps.db, [item.id]);
  return {
    forwarding_request: forwardView(forward),
    action: actionView(action),
    package: packageSummary(fresh, counts.get(item.id) ?? 0),
  };
}

// ---------------------------------------------------------------------------------------
// Scans

export async function listPackageScans(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadPackage(deps, auth, id);
  const requests = await sqlRows<ScanRequestRow>(
    deps.db,
    `SELECT * FROM scan_requests WHERE item_id = $1 ORDER BY requested_at DESC, id`,
    [item.id],
  );
  const bundles = await loadItemBundles(deps.db, item.id);
  const byRequest = new Map(bundles.map((b) => [b.request_id, b]));
  return {
    package_id: item.id,
    scans: requests.map((r) => {
      const bundle = byRequest.get(r.id);
      return { scan_request: scanRequestView(r), bundle: bundle ? scanSummary(bundle) : null };
    }),
  };
}

/** POST /v1/packages/{id}/scan: a scan request, recorded as a scan action. */
export async function createPackageScan(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: { scan_type?: string; options?: Record<string, unknown> },
) {
  const scanType = body.scan_type ?? 'document';
  const action = await deps.db.transaction(async (tx) => {
    const item = await loadPackage(deps, auth, id, tx, true);
    return insertAction(
      tx,
      requesterOf(auth, item),
      item,
      { action: 'scan', parameters: { scan_type: scanType, options: body.options ?? {}, origin: 'package_scan' } },
      null,
    );
  });
  const [request] = await sqlRows<ScanRequestRow>(deps.db, `SELECT * FROM scan_requests WHERE id = $1`, [
    action.scan_request_id,
  ]);
  return { scan_request: scanRequestView(request), action: actionView(action) };
}
