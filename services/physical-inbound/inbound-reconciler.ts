// The physical inbound reconciler: every committed record gets its workflow, even if the
// process died between the commit and the start (a member's Open & Scan is charged in that
// commit). It starts unstarted handling operations, items and scan bundles, and signals an
// Open & Scan operation whose scan outcome was lost. A Temporal Schedule runs it every
// config.physicalInbound.reconcileEverySeconds.
import type { Deps } from '../shared/deps';
import { ensureIntervalSchedule } from '../operations/schedules';
import type { PhysicalInboundReconcileInput } from '../../workflows/physical-inbound/contracts';
import { startHandlingWorkflow } from './handling';
import type { HandlingOperationRow, ScanRequestRow } from './rows';
import { startInboundReceivedWorkflow, startScanBundleWorkflow } from './inbound-workflows';
import { ITEM_COLUMNS, ItemColumns, ItemRow, toItemRow } from './item-records';
import { signalScanOutcome } from './scan-requests';
import { sqlRows } from '../shared/sql';

export async function reconcilePhysicalInbound(
  deps: Deps,
  graceSeconds: number,
): Promise<{ operations: number; items: number; bundles: number; scanOutcomes: number }> {
  const age = `now() - ($1 || ' seconds')::interval`;
  const ops = await sqlRows<HandlingOperationRow>(
    deps.db,
    `SELECT * FROM handling_operations WHERE workflow_started_at IS NULL AND created_at <= ${age} ORDER BY created_at LIMIT 200`,
    [String(graceSeconds)],
  );
  for (const op of ops) await startHandlingWorkflow(deps, op);
  const items = await sqlRows<ItemColumns>(
    deps.db,
    `SELECT ${ITEM_COLUMNS} FROM physical_inbound_items i WHERE i.received_workflow_started_at IS NULL AND i.created_at <= ${age}
      ORDER BY i.created_at LIMIT 200`,
    [String(graceSeconds)],
  );
  for (const row of items) await startInboundReceivedWorkflow(deps, toItemRow(row));
  // Each bundle with its item (a bundle's item always exists: the bundle is deleted with it).
  const bundles = await sqlRows<Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'environment'> & { bundle_id: string }>(
    deps.db,
    `SELECT b.id AS bundle_id, i.id, i.member_id, i.agent_id, i.environment FROM scan_bundles b JOIN physical_inbound_items i ON i.id = b.item_id
      WHERE b.workflow_started_at IS NULL AND b.created_at <= ${age} ORDER BY b.created_at LIMIT 200`,
    [String(graceSeconds)],
  );
  for (const b of bundles) await startScanBundleWorkflow(deps, b.bundle_id, b);
  // Open & Scan operations whose scan was refused, or fulfilled with its context saved
  // (inbound.context_ready recorded: the outcome never goes before it), but whose signal was lost.
  const waiting = await sqlRows<
    Pick<HandlingOperationRow, 'id'> &
      Pick<ScanRequestRow, 'rejection_reason'> & {
        request_id: string;
        /** The WHERE selects refused or fulfilled requests only. */
        status: Exclude<ScanRequestRow['status'], 'requested'>;
        bundle_id: string | null;
      }
  >(
    deps.db,
    `SELECT o.id, r.id AS request_id, r.status, r.rejection_reason, b.id AS bundle_id
       FROM handling_operations o JOIN scan_requests r ON r.id = o.scan_request_id LEFT JOIN scan_bundles b ON b.request_id = r.id
      WHERE o.status = 'accepted' AND o.environment = 'live'
        AND (r.status = 'rejected' OR (r.status = 'fulfilled' AND EXISTS (
              SELECT 1 FROM events e WHERE e.event_key = 'inbound:' || b.id || ':inbound.context_ready')))
        AND COALESCE(r.fulfilled_at, r.requested_at) <= ${age} LIMIT 200`,
    [String(graceSeconds)],
  );
  for (const w of waiting) {
    await signalScanOutcome(deps, w.id, {
      scanRequestId: w.request_id,
      outcome: w.status,
      bundleId: w.bundle_id,
      reason: w.rejection_reason,
    });
  }
  return { operations: ops.length, items: items.length, bundles: bundles.length, scanOutcomes: waiting.length };
}

export function inboundReconcilerScheduleId(deps: Deps): string {
  return `physical-inbound-reconciler-${deps.config.taskQueue}`;
}

/**
 * Creates (or updates) the Temporal Schedule that runs the reconciler every
 * config.physicalInbound.reconcileEverySeconds. The worker calls it at start.
 */
export async function ensurePhysicalInboundReconcilerSchedule(deps: Deps): Promise<string> {
  const settings = deps.config.physicalInbound;
  const scheduleId = inboundReconcilerScheduleId(deps);
  const input: PhysicalInboundReconcileInput = { graceSeconds: settings.reconcileGraceSeconds };
  return ensureIntervalSchedule(deps, {
    scheduleId,
    workflowType: 'physicalInboundReconcileWorkflow',
    workflowId: scheduleId,
    args: [input],
    every: settings.reconcileEverySeconds * 1000,
    catchupWindow: '1 minute',
    workflowExecutionTimeout: 10 * 60 * 1000,
  });
}
