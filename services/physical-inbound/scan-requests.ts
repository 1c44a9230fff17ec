// Scan requests, facility side: the open requests (from package actions, package scans and
// live Open & Scan operations), their fulfilment with page images (page_1 .. page_20) as a
// scan bundle whose workflow then runs OCR, and their refusal. An Open & Scan operation
// learns the outcome by a signal to its handling workflow.
import { paginationWithNext } from '../../domain/shared/pagination';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import type { UploadedFile } from '../shared/uploads';
import { errors } from '../../domain/shared/errors';
import { sha256Hex } from '../../domain/accounts/keys';
import type { PageRole } from '../../domain/physical-inbound/agent-inbox';
import { handlingScanOutcomeSignal, handlingWorkflowId, ScanOutcome } from '../../workflows/physical-inbound/contracts';
import { readImage } from './facility-intake';
import { startAfterCommit, startScanBundleWorkflow } from './inbound-workflows';
import { bumpItem, Db, findItem, recordActivity } from './item-records';
import { refreshSearchFields } from './search-index';
import type { ScanRequestRow } from './rows';
import { completeScanAction, failScanAction } from './package-rows';
import { insertPhysicalPage, insertScanBundle, markScanFulfilled, markScanRejected } from './scan-rows';
import { scanRequestView, type ScanRequestItemColumns } from './scan-request-view';
import { sqlRows } from '../shared/sql';

export { scanRequestView };

export async function listScanRequests(
  deps: Deps,
  auth: AuthContext,
  query: { status?: string; limit: number; offset: number },
) {
  const rows = await sqlRows<ScanRequestRow & ScanRequestItemColumns & { total: string }>(
    deps.db,
    `SELECT r.*, i.reference_code, i.kind, i.mailbox_id, count(*) OVER () AS total
       FROM scan_requests r JOIN physical_inbound_items i ON i.id = r.item_id
      WHERE r.facility_id = $1 AND r.status = $2 ORDER BY r.requested_at, r.id LIMIT $3 OFFSET $4`,
    [auth.facilityId, query.status ?? 'requested', query.limit, query.offset],
  );
  return {
    scan_requests: rows.map(scanRequestView),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, query.limit, query.offset),
  };
}

async function loadScanRequest(db: Db, auth: AuthContext, id: string, forUpdate = false): Promise<ScanRequestRow> {
  const [r] = await sqlRows<ScanRequestRow>(
    db,
    `SELECT * FROM scan_requests WHERE id = $1 AND facility_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [id, auth.facilityId],
  );
  if (!r) throw errors.notFound('Scan request');
  return r;
}

function assertRequested(r: { status: string }) {
  if (r.status !== 'requested')
    throw errors.conflict('SCAN_REQUEST_NOT_OPEN', `The scan request is already ${r.status}.`, {
      suggestedAction: 'Nothing to do: GET /v1/facility/scan-requests lists the open requests.',
    });
}

/** Tells an Open & Scan operation its scan's outcome; a lost signal is sent again by the reconciler. */
export async function signalScanOutcome(deps: Deps, operationId: string, outcome: ScanOutcome): Promise<void> {
  await startAfterCommit(deps, `scan outcome of ${operationId}`, () =>
    deps.temporal.workflow.getHandle(handlingWorkflowId(operationId)).signal(handlingScanOutcomeSignal, outcome),
  );
}

export const SCAN_PAGE_FIELDS = Array.from({ length: 20 }, (_, n) => `page_${n + 1}`);

/**
 * POST /v1/facility/scan-requests/{id}/fulfil: page images (page_1..page_20) become a
 * scan bundle; OCR runs in the bundle's workflow, which publishes inbound.scan_available,
 * then inbound.context_ready, and then completes the Open & Scan operation that asked.
 */
export async function fulfilScanRequest(
  deps: Deps,
  auth: AuthContext,
  id: string,
  files: Record<string, UploadedFile>,
  body: { source_kinds?: string },
) {
  const request = await loadScanRequest(deps.db, auth, id);
  assertRequested(request);
  const present = SCAN_PAGE_FIELDS.filter((f) => files[f]);
  if (!present.length)
    throw errors.validation([{ path: 'page_1', message: 'at least one page image (page_1 .. page_20) is required' }]);
  const defaultRole: PageRole =
    request.scan_type === 'label' || request.scan_type === 'envelope' ? 'envelope' : 'letter';
  const roles = body.source_kinds ? body.source_kinds.split(',').map((s) => s.trim()) : [];
  if (roles.length && (roles.length !== present.length || roles.some((r) => r !== 'envelope' && r !== 'letter'))) {
    throw errors.validation([
      {
        path: 'source_kinds',
        message: `must list envelope or letter for each of the ${present.length} pages, comma-separated`,
      },
    ]);
  }
  const bundleId = randomUUID();
  const pages: Array<{
    id: string;
    n: number;
    role: PageRole;
    key: string;
    contentType: string;
    size: number;
    sha: string;
  }> = [];
  for (const [index, field] of present.entries()) {
    const image = await readImage(files[field], field);
    const pageId = randomUUID();
    const key = `inbound/${request.item_id}/scans/${bundleId}/page-${index + 1}.${image.ext}`;
    await deps.storage.put(key, image.data, image.contentType);
    pages.push({
      id: pageId,
      n: index + 1,
      role: (roles[index] as PageRole) ?? defaultRole,
      key,
      contentType: image.contentType,
      size: image.data.length,
      sha: sha256Hex(image.data),
    });
  }
  const item = await deps.db.transaction(async (tx) => {
    const locked = await loadScanRequest(tx, auth, id, true);
    assertRequested(locked);
    const target = (await findItem(tx, locked.item_id, { forUpdate: true }))!;
    await insertScanBundle(tx, bundleId, id, target.id);
    for (const p of pages) await insertPhysicalPage(tx, bundleId, target.id, p);
    await markScanFulfilled(tx, id);
    if (locked.package_action_id) {
      await completeScanAction(tx, locked.package_action_id, {
        scan_request_id: id,
        bundle_id: bundleId,
        page_count: pages.length,
      });
    }
    await bumpItem(tx, target.id);
    await recordActivity(tx, target, 'scan_fulfilled', {
      scan_request_id: id,
      bundle_id: bundleId,
      page_count: pages.length,
    });
    await refreshSearchFields(tx, target.id);
    return target;
  });
  // An Open & Scan operation learns of the scan from the bundle's workflow once its OCR is
  // saved (reportScanBundleOutcome), so inbound.action_completed follows inbound.context_ready.
  await startAfterCommit(deps, `bundle ${bundleId}`, () => startScanBundleWorkflow(deps, bundleId, item));
  return {
    scan_request: scanRequestView(await loadScanRequest(deps.db, auth, id)),
    bundle: {
      id: bundleId,
      item_id: item.id,
      pages: pages.map((p) => ({ page_id: p.id, page_number: p.n, source_kind: p.role, source_sha256: p.sha })),
    },
  };
}

export async function rejectScanRequest(deps: Deps, auth: AuthContext, id: string, body: { reason: string }) {
  const request = await deps.db.transaction(async (tx) => {
    const locked = await loadScanRequest(tx, auth, id, true);
    assertRequested(locked);
    const updated = await markScanRejected(tx, id, body.reason);
    if (locked.package_action_id) {
      await failScanAction(tx, locked.package_action_id, { scan_request_id: id, reason: body.reason });
    }
    const item = (await findItem(tx, locked.item_id))!;
    await recordActivity(tx, item, 'scan_rejected', { scan_request_id: id, reason: body.reason });
    return updated;
  });
  if (request.handling_id)
    await signalScanOutcome(deps, request.handling_id, {
      scanRequestId: id,
      outcome: 'rejected',
      bundleId: null,
      reason: body.reason,
    });
  return { scan_request: scanRequestView(request) };
}
