// Activities of the physical inbound workflows: handling transitions (each guarded by the
// operation's version and safe to retry), the sandbox facility, and the scan pipeline
// (events, OCR, rule matching). Events are published only after the change is committed.
import type { Deps } from '../../services/shared/deps';
import {
  acceptOperation,
  approveOperation,
  completeOperation,
  publishHandlingOutcome,
  rejectOperation,
  sandboxFulfilOperation,
} from '../../services/physical-inbound/handling-transitions';
import { reconcilePhysicalInbound } from '../../services/physical-inbound/inbound-reconciler';
import {
  finishScanBundle,
  ocrScanPage,
  publishInboundReceived,
  publishScanAvailable,
  reportScanBundleOutcome,
} from '../../services/physical-inbound/scan-pipeline';

export function createHandlingActivities(deps: Deps) {
  return {
    approveHandlingOperation: (input: Parameters<typeof approveOperation>[1]) => approveOperation(deps, input),
    rejectHandlingOperation: (input: Parameters<typeof rejectOperation>[1]) => rejectOperation(deps, input),
    acceptHandlingOperation: (input: Parameters<typeof acceptOperation>[1]) => acceptOperation(deps, input),
    completeHandlingOperation: (input: Parameters<typeof completeOperation>[1]) => completeOperation(deps, input),
    sandboxFulfilHandlingOperation: (input: { operationId: string }) => sandboxFulfilOperation(deps, input),
    publishHandlingOutcome: (input: { operationId: string }) => publishHandlingOutcome(deps, input.operationId),
    publishPhysicalInboundReceived: (input: { itemId: string }) => publishInboundReceived(deps, input.itemId),
    publishPhysicalScanAvailable: (input: { bundleId: string }) => publishScanAvailable(deps, input.bundleId),
    ocrPhysicalScanPage: (input: { pageId: string }) => ocrScanPage(deps, input.pageId),
    finishPhysicalScanBundle: (input: { bundleId: string }) => finishScanBundle(deps, input.bundleId),
    reportScanBundleOutcome: (input: { bundleId: string }) => reportScanBundleOutcome(deps, input.bundleId),
    reconcilePhysicalInbound: (input: { graceSeconds: number }) => reconcilePhysicalInbound(deps, input.graceSeconds),
  };
}
