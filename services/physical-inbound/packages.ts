// Packages: physical inbound custody (letters and parcels held at the member's private
// mailbox), account-enabled and live-only. A package is a physical inbound item seen
// through the custody API: list, detail, photos, actions the facility carries out,
// forwarding, scans, tags and notes. Another agent's package is refused with 403.
import { pagination, paginationWithNext } from '../../domain/shared/pagination';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { assertAgentOfMember } from '../shared/scoping';
import { ApiError, errors } from '../../domain/shared/errors';
import {
  ACTIVE_PACKAGE_ACTION_STATUSES, checkForwardAddress, ForwardAddress, PackageActionStatus, PackageActionType, packageActionUnavailable,
  packageStatusOnRequest,
} from '../../domain/workflow-safe/handling';
import { sourcesKind } from '../../domain/physical-inbound/agent-inbox';
import { bumpItem, Db, findItem, ITEM_COLUMNS, ItemRow, recordActivity, toItemRow, updateReturning } from './item-records';
import { loadItemBundles, ocrPageView, scanSummary } from './scan-bundles';
import { refreshSearchFields } from './search-index';
import { scanRequestView } from './scan-requests';
import { shipmentOfPackage } from './expected-shipments';

export async function enablePackages(deps: Deps, memberId: string, enabled = true): Promise<{ member_id: string; packages_enabled: boolean }> {
  const updated = await updateReturning(deps.db, `UPDATE members SET packages_enabled = $2 WHERE id = $1 RETURNING id, packages_enabled`, [memberId, enabled]);
  if (!updated.length) throw new Error(`no member ${memberId}`);
  return { member_id: updated[0].id, packages_enabled: updated[0].packages_enabled };
}

export async function assertPackagesEnabled(deps: Deps, auth: AuthContext): Promise<void> {
  const [member] = await deps.db.query(`SELECT packages_enabled FROM members WHERE id = $1`, [auth.memberId]);
  if (!member?.packages_enabled) {
    throw new ApiError(403, 'Physical inbound custody is not enabled for this account.', {
      reason: 'packages_not_enabled', suggestedAction: 'Ask the service to enable packages for the account.',
    });
  }
}

/** 404 for another member's (or a test) item; 403 for another agent's package. */
async function loadPackage(deps: Deps, auth: AuthContext, id: string, db: Db = deps.db, forUpdate = false): Promise<ItemRow> {
  await assertPackagesEnabled(deps, auth);
  const item = await findItem(db, id, { forUpdate });
  if (!item || item.member_id !== auth.memberId || item.environment !== 'live') throw errors.notFound('Package');
  if (isAgentKey(auth) && item.agent_id !== auth.agentId) {
    throw new ApiError(403, 'This package belongs to another agent.', { reason: 'package_belongs_to_another_agent' });
  }
  return item;
}

function requireScope(auth: AuthContext, scope: string): void {
  if (isAgentKey(auth) && !auth.scopes.has(scope)) {
    throw new ApiError(403, `Missing scope: ${scope}`, { reason: 'insufficient_scope', details: { required_scopes: [scope] } });
  }
}

async function photoCounts(db: Db, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const rows = await db.query(
    `SELECT item_id, count(*)::int AS n FROM (
       SELECT item_id FROM inbound_photos WHERE item_id = ANY($1::uuid[])
       UNION ALL SELECT item_id FROM scan_pages WHERE item_id = ANY($1::uuid[])) x GROUP BY item_id`, [ids]);
  return new Map(rows.map((r: { item_id: string; n: number }) => [r.item_id, r.n]));
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

export interface PackageListQuery {
  agent_id?: string;
  mailbox_id?: string;
  status?: string;
  carrier?: string;
  since?: Date;
  before?: Date;
  limit: number;
  offset: number;
}

export async function listPackages(deps: Deps, auth: AuthContext, query: PackageListQuery) {
  await assertPackagesEnabled(deps, auth);
  let agentId: string;
  if (isAgentKey(auth)) {
    agentId = auth.agentId!;
  } else {
    if (!query.agent_id) throw errors.validation([{ path: 'query.agent_id', message: 'agent_id is required with a member key' }]);
    await assertAgentOfMember(deps, auth, query.agent_id);
    agentId = query.agent_id;
  }
  const params: unknown[] = [auth.memberId, agentId];
  const where = [`i.member_id = $1`, `i.agent_id = $2`, `i.environment = 'live'`];
  if (query.mailbox_id) { params.push(query.mailbox_id.toUpperCase()); where.push(`upper(i.mailbox_id) = $${params.length}`); }
  if (query.status) { params.push(query.status); where.push(`i.status = $${params.length}`); }
  if (query.carrier) { params.push(query.carrier.toLowerCase()); where.push(`lower(i.carrier) = $${params.length}`); }
  if (query.since) { params.push(query.since); where.push(`i.received_at >= $${params.length}`); }
  if (query.before) { params.push(query.before); where.push(`i.received_at <= $${params.length}`); }
  params.push(query.limit, query.offset);
  const rows = await deps.db.query(
    `SELECT ${ITEM_COLUMNS}, count(*) OVER () AS total FROM physical_inbound_items i WHERE ${where.join(' AND ')}
      ORDER BY i.received_at DESC, i.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && query.offset > 0) {
    const [c] = await deps.db.query(`SELECT count(*) AS total FROM physical_inbound_items i WHERE ${where.join(' AND ')}`, params.slice(0, -2));
    total = Number(c.total);
  }
  const items = rows.map(toItemRow);
  const counts = await photoCounts(deps.db, items.map((i: ItemRow) => i.id));
  return {
    packages: items.map((i: ItemRow) => packageSummary(i, counts.get(i.id) ?? 0)),
    pagination: pagination(total, query.limit, query.offset),
  };
}

// ---------------------------------------------------------------------------------------
// Photos

export const PACKAGE_PHOTO_TYPES = ['sealed_exterior', 'label', 'scan_envelope', 'scan_letter'] as const;

async function packagePhotos(deps: Deps, item: ItemRow, photoType?: string) {
  const expiresAt = new Date(Date.now() + 3600_000).toISOString();
  const intake: Array<Record<string, unknown>> = await deps.db.query(
    `SELECT * FROM inbound_photos WHERE item_id = $1 ORDER BY created_at, id`, [item.id]);
  const bundles = await loadItemBundles(deps.db, item.id);
  const photos = [
    ...await Promise.all(intake.map(async (p) => ({
      id: p.id as string, photo_type: p.photo_type as string, content_type: p.content_type as string, size_bytes: p.size_bytes as number,
      sha256: p.sha256 as string, url: await deps.storage.signedUrl(p.storage_key as string), url_expires_at: expiresAt,
      created_at: (p.created_at as Date).toISOString(), scan: null, ocr: null,
    }))),
    ...await Promise.all(bundles.flatMap((b) => b.pages.map(async (p) => {
      const ocr = ocrPageView(p);
      return {
        id: p.id, photo_type: `scan_${p.page_role}`, content_type: p.content_type, size_bytes: p.size_bytes, sha256: p.source_sha256,
        url: await deps.storage.signedUrl(p.storage_key), url_expires_at: expiresAt, created_at: p.created_at.toISOString(),
        scan: { request_id: b.request_id, bundle_id: b.id, page_number: p.page_number, source_kind: sourcesKind({ role: p.page_role, origin: p.origin }) },
        ocr: { status: ocr.status, text: ocr.text, is_blank: ocr.is_blank, uncertain_spans: ocr.uncertain_spans, provider: ocr.provider, model: ocr.model,
          completed_at: ocr.completed_at, attempts: ocr.attempts, error_code: ocr.error_code },
      };
    }))),
  ];
  return photoType ? photos.filter((p) => p.photo_type === photoType) : photos;
}

export async function listPackagePhotos(deps: Deps, auth: AuthContext, id: string, photoType?: string) {
  const item = await loadPackage(deps, auth, id);
  return { package_id: item.id, photos: await packagePhotos(deps, item, photoType) };
}

// ---------------------------------------------------------------------------------------
// Actions

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function actionView(r: any) {
  return {
    id: r.id as string,
    package_id: r.item_id as string,
    action: r.action as PackageActionType,
    priority: r.priority as string,
    parameters: r.parameters as Record<string, unknown>,
    status: r.status as PackageActionStatus,
    version: r.version as number,
    requested_by: r.requested_by as string,
    agent_notes: r.agent_notes as string | null,
    agent_data: r.agent_data as Record<string, unknown> | null,
    clarification_question: r.clarification_question as string | null,
    clarification_response: r.clarification_response as string | null,
    decision_context: r.decision_context as Record<string, unknown> | null,
    result: r.result as Record<string, unknown> | null,
    scan_request_id: (r.scan_request_id ?? null) as string | null,
    created_at: (r.created_at as Date).toISOString(),
    updated_at: (r.updated_at as Date).toISOString(),
    completed_at: r.completed_at ? (r.completed_at as Date).toISOString() : null,
  };
}

const ACTION_SELECT = `SELECT p.*, (SELECT r.id FROM scan_requests r WHERE r.package_action_id = p.id LIMIT 1) AS scan_request_id FROM package_actions p`;

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
export async function insertAction(tx: EntityManager, requester: ActionRequester, item: ItemRow, body: ActionRequestBody, forward: ForwardAddress & {
  carrier_preference?: string | null; service_level?: string; insurance?: boolean; signature_required?: boolean;
} | null) {
  const reason = packageActionUnavailable(body.action, item.status);
  if (reason) {
    const message = `${body.action} is not possible: ${reason}.`;
    const suggestedAction = 'GET /v1/packages/{id} for its current status; only the actions its status allows can be requested.';
    if (body.action === 'forward') throw errors.badRequest('PACKAGE_NOT_FORWARDABLE', message, { suggestedAction });
    throw errors.conflict('PACKAGE_ACTION_NOT_AVAILABLE', message, { suggestedAction });
  }
  const parameters = body.parameters ?? {};
  const [action] = await tx.query(
    `INSERT INTO package_actions (item_id, member_id, agent_id, action, priority, parameters, requested_by, package_status_before, agent_notes, agent_data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [item.id, item.member_id, requester.agentId, body.action, body.priority ?? 'normal', JSON.stringify(parameters),
      requester.by, item.status, requester.agentNotes ?? null, requester.agentData ? JSON.stringify(requester.agentData) : null],
  );
  if (forward) {
    await tx.query(
      `INSERT INTO package_forwards (item_id, action_id, to_name, to_line1, to_line2, to_city, to_state, to_zip, to_country, carrier_preference,
         service_level, insurance, signature_required) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [item.id, action.id, forward.to_name, forward.to_line1, forward.to_line2, forward.to_city, forward.to_state, forward.to_zip,
        forward.to_country, forward.carrier_preference ?? null, forward.service_level ?? 'ground', forward.insurance ?? false, forward.signature_required ?? false]);
  }
  let scanRequestId: string | null = null;
  if (body.action === 'scan' || body.action === 'open_and_scan') {
    const scanType = typeof parameters.scan_type === 'string' && SCAN_TYPES.includes(parameters.scan_type)
      ? parameters.scan_type : body.action === 'open_and_scan' ? 'content' : 'document';
    const [request] = await tx.query(
      `INSERT INTO scan_requests (item_id, member_id, agent_id, facility_id, scan_type, origin, package_action_id, options)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [item.id, item.member_id, action.agent_id, item.facility_id, scanType, parameters.origin === 'package_scan' ? 'package_scan' : 'package_action',
        action.id, JSON.stringify((parameters.options as Record<string, unknown>) ?? {})]);
    scanRequestId = request.id;
  }
  await bumpItem(tx, item.id, packageStatusOnRequest(body.action));
  await recordActivity(tx, item, 'package_action_requested', { action_id: action.id, action: body.action, priority: action.priority });
  if (scanRequestId) await refreshSearchFields(tx, item.id);
  return { ...action, scan_request_id: scanRequestId };
}

export async function listPackageActions(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadPackage(deps, auth, id);
  const rows = await deps.db.query(`${ACTION_SELECT} WHERE p.item_id = $1 ORDER BY p.created_at DESC, p.id`, [item.id]);
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

async function loadAction(db: Db, itemId: string, actionId: string, lock = false) {
  const [row] = await db.query(`${ACTION_SELECT} WHERE p.id = $1 AND p.item_id = $2${lock ? ' FOR UPDATE OF p NOWAIT' : ''}`, [actionId, itemId]);
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
export async function patchPackageAction(deps: Deps, auth: AuthContext, id: string, actionId: string, body: ActionPatch, ifMatch?: string) {
  const item = await loadPackage(deps, auth, id);
  try {
    const updated = await deps.db.transaction(async (tx) => {
      const action = await loadAction(tx, item.id, actionId, true);
      if (ifMatch !== undefined && ifMatch.replace(/"/g, '').trim() !== String(action.version)) {
        throw errors.conflict('VERSION_STALE', `The action is at version ${action.version}; If-Match ${ifMatch} is stale.`, {
          details: { current_version: action.version }, suggestedAction: 'GET the action again and retry with its current version in If-Match.',
        });
      }
      if (!ACTIVE_PACKAGE_ACTION_STATUSES.includes(action.status)) {
        throw errors.badRequest('ACTION_NOT_ACTIVE', `The action is ${action.status} and can no longer be changed.`, {
          suggestedAction: 'Request a new action with POST /v1/packages/{id}/actions if one is still needed.',
        });
      }
      if (body.respond_to_clarification !== undefined && action.status !== 'clarification_needed') {
        throw errors.validation([{ path: 'respond_to_clarification', message: 'the action is not waiting for a clarification' }]);
      }
      const [row] = await updateReturning(tx,
        `UPDATE package_actions SET agent_notes = COALESCE($2, agent_notes), agent_data = COALESCE($3, agent_data),
           decision_context = COALESCE($4, decision_context), clarification_response = COALESCE($5, clarification_response),
           status = CASE WHEN $5::text IS NOT NULL THEN 'requested' ELSE status END, version = version + 1, updated_at = now()
          WHERE id = $1 RETURNING *, $6::uuid AS scan_request_id`,
        [actionId, body.agent_notes ?? null, body.agent_data ? JSON.stringify(body.agent_data) : null,
          body.decision_context ? JSON.stringify(body.decision_context) : null, body.respond_to_clarification ?? null, action.scan_request_id]);
      await recordActivity(tx, item, 'package_action_updated', {
        action_id: actionId, by: isAgentKey(auth) ? 'agent' : 'member', ...(body.respond_to_clarification !== undefined ? { clarified: true } : {}),
      });
      return row;
    });
    return { action: actionView(updated) };
  } catch (err) {
    if ((err as { code?: string }).code === '55P03' || (err as { driverError?: { code?: string } }).driverError?.code === '55P03') {
      throw errors.conflict('CONCURRENT_MODIFICATION', 'Another change to this action is in progress; re-read it and retry.', {
        retryable: true, suggestedAction: 'GET the action again and retry the change.',
      });
    }
    throw err;
  }
}

// ---------------------------------------------------------------------------------------
// Forwarding

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function forwardView(r: any) {
  return {
    id: r.id as string, package_id: r.item_id as string, action_id: r.action_id as string, status: r.action_status as string,
    to_name: r.to_name, to_line1: r.to_line1, to_line2: r.to_line2, to_city: r.to_city, to_state: r.to_state, to_zip: r.to_zip,
    to_country: r.to_country, carrier_preference: r.carrier_preference, service_level: r.service_level, insurance: r.insurance,
    signature_required: r.signature_required, tracking_number: (r.result?.tracking_number ?? null) as string | null,
    carrier: (r.result?.carrier ?? null) as string | null, created_at: (r.created_at as Date).toISOString(),
  };
}

const FORWARD_SELECT = `SELECT f.*, a.status AS action_status, a.result FROM package_forwards f JOIN package_actions a ON a.id = f.action_id`;

export async function listPackageForwards(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadPackage(deps, auth, id);
  const rows = await deps.db.query(`${FORWARD_SELECT} WHERE f.item_id = $1 ORDER BY f.created_at DESC, f.id`, [item.id]);
  return { package_id: item.id, forwarding_requests: rows.map(forwardView) };
}

export interface ForwardBody {
  to_name: string; to_line1: string; to_line2?: string; to_city: string; to_state: string; to_zip: string; to_country?: string;
  carrier_preference?: string; service_level?: string; insurance?: boolean; signature_required?: boolean;
}

/** POST /v1/packages/{id}/forward: a forwarding request; the package becomes forwarding_requested. */
export async function createPackageForward(deps: Deps, auth: AuthContext, id: string, body: ForwardBody) {
  const checked = checkForwardAddress(body as unknown as Record<string, unknown>);
  if (!checked.ok) throw errors.validation(checked.fields);
  const extras = { carrier_preference: body.carrier_preference ?? null, service_level: body.service_level ?? 'ground',
    insurance: body.insurance ?? false, signature_required: body.signature_required ?? false };
  const { action, item } = await deps.db.transaction(async (tx) => {
    const locked = await loadPackage(deps, auth, id, tx, true);
    const created = await insertAction(tx, requesterOf(auth, locked), locked, { action: 'forward', parameters: { ...checked.address, ...extras } }, { ...checked.address, ...extras });
    return { action: created, item: locked };
  });
  const [forward] = await deps.db.query(`${FORWARD_SELECT} WHERE f.action_id = $1`, [action.id]);
  const fresh = (await findItem(deps.db, item.id))!;
  const counts = await photoCounts(deps.db, [item.id]);
  return { forwarding_request: forwardView(forward), action: actionView(action), package: packageSummary(fresh, counts.get(item.id) ?? 0) };
}

// ---------------------------------------------------------------------------------------
// Scans

export async function listPackageScans(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadPackage(deps, auth, id);
  const requests = await deps.db.query(`SELECT * FROM scan_requests WHERE item_id = $1 ORDER BY requested_at DESC, id`, [item.id]);
  const bundles = await loadItemBundles(deps.db, item.id);
  const byRequest = new Map(bundles.map((b) => [b.request_id, b]));
  return {
    package_id: item.id,
    scans: requests.map((r: { id: string }) => {
      const bundle = byRequest.get(r.id);
      return { scan_request: scanRequestView(r), bundle: bundle ? scanSummary(bundle) : null };
    }),
  };
}

/** POST /v1/packages/{id}/scan: a scan request, recorded as a scan action. */
export async function createPackageScan(deps: Deps, auth: AuthContext, id: string, body: { scan_type?: string; options?: Record<string, unknown> }) {
  const scanType = body.scan_type ?? 'document';
  const action = await deps.db.transaction(async (tx) => {
    const item = await loadPackage(deps, auth, id, tx, true);
    return insertAction(tx, requesterOf(auth, item), item, { action: 'scan', parameters: { scan_type: scanType, options: body.options ?? {}, origin: 'package_scan' } }, null);
  });
  const [request] = await deps.db.query(`SELECT * FROM scan_requests WHERE id = $1`, [action.scan_request_id]);
  return { scan_request: scanRequestView(request), action: actionView(action) };
}

// ---------------------------------------------------------------------------------------
// Tags and notes

async function packageTags(db: Db, item: ItemRow) {
  const rows = await db.query(`SELECT tag, created_at FROM package_tags WHERE item_id = $1 ORDER BY created_at, tag`, [item.id]);
  return { package_id: item.id, tags: rows.map((r: { tag: string; created_at: Date }) => ({ tag: r.tag, created_at: r.created_at.toISOString() })) };
}

export async function listPackageTags(deps: Deps, auth: AuthContext, id: string) {
  return packageTags(deps.db, await loadPackage(deps, auth, id));
}

export async function addPackageTag(deps: Deps, auth: AuthContext, id: string, tag: string) {
  const item = await loadPackage(deps, auth, id);
  const inserted = await deps.db.query(`INSERT INTO package_tags (item_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING tag`, [item.id, tag]);
  if (inserted.length) await recordActivity(deps.db, item, 'tag_added', { tag });
  return { tag, created: inserted.length > 0, ...(await packageTags(deps.db, item)) };
}

export async function removePackageTag(deps: Deps, auth: AuthContext, id: string, tag: string) {
  const item = await loadPackage(deps, auth, id);
  const removed = await updateReturning(deps.db, `DELETE FROM package_tags WHERE item_id = $1 AND tag = $2 RETURNING tag`, [item.id, tag]);
  if (!removed.length) throw errors.notFound('Tag');
  await recordActivity(deps.db, item, 'tag_removed', { tag });
  return { removed: tag, ...(await packageTags(deps.db, item)) };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function noteView(r: any) {
  return { id: r.id as string, package_id: r.item_id as string, note: r.note as string, metadata: r.metadata as Record<string, unknown> | null,
    author: r.author as string, agent_id: r.agent_id as string | null, created_at: (r.created_at as Date).toISOString() };
}

export async function listPackageNotes(deps: Deps, auth: AuthContext, id: string, page: { limit: number; offset: number }) {
  const item = await loadPackage(deps, auth, id);
  const rows = await deps.db.query(
    `SELECT *, count(*) OVER () AS total FROM package_notes WHERE item_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    [item.id, page.limit, page.offset]);
  return { package_id: item.id, notes: rows.map(noteView), pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, page.limit, page.offset) };
}

export async function addPackageNote(deps: Deps, auth: AuthContext, id: string, note: string, metadata?: Record<string, unknown>) {
  const item = await loadPackage(deps, auth, id);
  const [row] = await deps.db.query(
    `INSERT INTO package_notes (item_id, note, metadata, author, agent_id) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [item.id, note, metadata ? JSON.stringify(metadata) : null, isAgentKey(auth) ? 'agent' : 'member', isAgentKey(auth) ? auth.agentId : null]);
  await recordActivity(deps.db, item, 'note_added', { note_id: row.id });
  return { note: noteView(row) };
}

// ---------------------------------------------------------------------------------------
// Detail

export async function getPackage(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadPackage(deps, auth, id);
  const [photos, actions, forwards, tags, notes, events, expectedShipment] = await Promise.all([
    packagePhotos(deps, item),
    deps.db.query(`${ACTION_SELECT} WHERE p.item_id = $1 ORDER BY p.created_at DESC, p.id`, [item.id]),
    deps.db.query(`${FORWARD_SELECT} WHERE f.item_id = $1 ORDER BY f.created_at DESC, f.id`, [item.id]),
    deps.db.query(`SELECT tag FROM package_tags WHERE item_id = $1 ORDER BY created_at, tag`, [item.id]),
    deps.db.query(`SELECT count(*)::int AS n FROM package_notes WHERE item_id = $1`, [item.id]),
    deps.db.query(`SELECT id, kind, detail, created_at FROM inbound_item_activity WHERE item_id = $1 ORDER BY created_at, id`, [item.id]),
    shipmentOfPackage(deps.db, item.id),
  ]);
  return {
    package: {
      ...packageSummary(item, photos.length),
      version: item.version,
      label_data: {
        carrier: item.carrier, tracking_number: item.tracking_number, weight_oz: item.weight_oz, sender_name: item.sender_name,
        recipient_name: item.recipient_name, mailbox_id: item.mailbox_id,
      },
      photos,
      events: events.map((e: { id: string; kind: string; detail: unknown; created_at: Date }) => ({ id: e.id, event_type: e.kind, detail: e.detail, created_at: e.created_at.toISOString() })),
      actions: actions.map(actionView),
      forwarding_requests: forwards.map(forwardView),
      tags: tags.map((t: { tag: string }) => t.tag),
      notes_count: notes[0].n as number,
      expected_shipment: expectedShipment,
    },
  };
}
