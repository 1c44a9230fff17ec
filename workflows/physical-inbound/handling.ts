// Workflows of physical inbound. `handling-<id>`: a handling operation from proposal to
// its outcome (owner approval with an expiry, facility acceptance and completion, or
// rejection), each step an Update whose validator checks the state and expected
// version; test operations are carried out by the sandbox facility at once.
// `inbound-item-<id>` announces a received item; `inbound-scan-<id>` announces a scan
// bundle, OCRs its pages, announces the saved context and then tells the Open & Scan
// operation that asked for it (so its outcome follows the context). A scheduled reconciler starts
// any of them whose start was lost after its record was committed.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createHandlingActivities } from '../../activities/physical-inbound/handling';
import {
  acceptHandlingUpdate,
  approveHandlingUpdate,
  completeHandlingUpdate,
  HANDLING_FAILURES,
  handlingScanOutcomeSignal,
  HandlingSnapshot,
  handlingStateQuery,
  HandlingWorkflowInput,
  InboundReceivedWorkflowInput,
  PhysicalInboundReconcileInput,
  rejectHandlingUpdate,
  ScanBundleWorkflowInput,
  ScanOutcome,
} from './contracts';
import { ObjectStatus } from '../shared/search-attributes';
import { cancelOrRefuse, runShieldedFromCancellation } from '../shared/operator-cancellation';
import { exclusiveTurns } from '../shared/turns';
import { publishStatus, showDetails } from '../shared/status-visibility';
import { call } from '../shared/activity-failures';
import {
  HandlingStatus,
  isOpenHandlingStatus,
  nextHandlingStatus,
  HandlingEvent,
  HandlingActor,
} from '../../domain/workflow-safe/handling';
import { DATABASE_STEP, HANDLING_OCR } from '../shared/activity-options';

type Activities = ReturnType<typeof createHandlingActivities>;

const acts = proxyActivities<Activities>(DATABASE_STEP);

const ocr = proxyActivities<Activities>(HANDLING_OCR);

export async function handlingWorkflow(input: HandlingWorkflowInput): Promise<HandlingSnapshot> {
  const id = input.operationId;
  let status: HandlingStatus = input.status;
  let version = input.version;
  const turns = exclusiveTurns();
  let scanOutcome: ScanOutcome | null = null;

  let refusedCancellation: string | null = null;
  const WAITING: Partial<Record<HandlingStatus, string>> = {
    awaiting_member_approval:
      'Waiting for the owner to approve or reject the proposal; rejected as expired when the approval time runs out.',
    awaiting_facility:
      'Approved: waiting for the facility to accept it; until then a cancellation request rejects it with a refund.',
    accepted: 'The facility accepted it and is carrying it out; it can no longer be cancelled. Waiting for completion.',
  };
  const details = () =>
    showDetails(
      [
        `**Handling operation ${id}** (${input.actionType}, ${input.testMode ? 'sandbox' : 'live'}): **${status}** (version ${version})`,
        WAITING[status] ?? 'Finished.',
      ],
      refusedCancellation,
    );

  const apply = (s: HandlingSnapshot) => {
    version = s.version;
    if (s.status !== status) {
      status = s.status;
      publishStatus(ObjectStatus, status, {
        step: status === 'awaiting_facility' ? 'awaiting_acceptance' : status === 'accepted' ? 'in_progress' : null,
      });
    }
    details();
  };

  const guard = (event: HandlingEvent, actor: HandlingActor, expectedVersion: number) => {
    if (!nextHandlingStatus(status, event, actor)) {
      throw ApplicationFailure.create({
        message: `The operation is ${status}; ${event} is not possible now.`,
        type: HANDLING_FAILURES.invalidState,
        details: [{ status, version }],
        nonRetryable: true,
      });
    }
    if (expectedVersion !== version) {
      throw ApplicationFailure.create({
        message: `The operation is at version ${version}; expected_version ${expectedVersion} is stale.`,
        type: HANDLING_FAILURES.staleVersion,
        details: [{ current_version: version, expected_version: expectedVersion }],
        nonRetryable: true,
      });
    }
  };

  setHandler(handlingStateQuery, () => ({ id, status, version }));

  setHandler(
    approveHandlingUpdate,
    (args) =>
      turns.run(async () => {
        guard('approve', 'member', args.expectedVersion);
        apply(await call(acts.approveHandlingOperation({ operationId: id, ...args })));
        return { id, status, version };
      }),
    { validator: (args) => guard('approve', 'member', args.expectedVersion) },
  );

  setHandler(
    rejectHandlingUpdate,
    (args) =>
      turns.run(async () => {
        guard('reject', args.actor, args.expectedVersion);
        apply(await call(acts.rejectHandlingOperation({ operationId: id, ...args })));
        return { id, status, version };
      }),
    { validator: (args) => guard('reject', args.actor, args.expectedVersion) },
  );

  setHandler(
    acceptHandlingUpdate,
    (args) =>
      turns.run(async () => {
        guard('accept', 'facility', args.expectedVersion);
        apply(await call(acts.acceptHandlingOperation({ operationId: id, ...args })));
        return { id, status, version };
      }),
    { validator: (args) => guard('accept', 'facility', args.expectedVersion) },
  );

  setHandler(
    completeHandlingUpdate,
    (args) =>
      turns.run(async () => {
        guard('complete', 'facility', args.expectedVersion);
        apply(await call(acts.completeHandlingOperation({ operationId: id, ...args })));
        return { id, status, version };
      }),
    { validator: (args) => guard('complete', 'facility', args.expectedVersion) },
  );

  // The facility fulfilled (or refused) the scan request of an accepted Open & Scan.
  setHandler(handlingScanOutcomeSignal, (outcome) => {
    scanOutcome = outcome;
  });

  /** A cancellation request from Temporal: reject (refunding any charge) before the facility accepts, else refuse and record why. */
  const onCancellationRequest = cancelOrRefuse(turns, {
    objectType: 'handling',
    objectId: id,
    status: () => status,
    settled: () => !isOpenHandlingStatus(status),
    cancellable: () => status !== 'accepted',
    cancel: async () => {
      apply(
        await call(
          acts.rejectHandlingOperation({
            operationId: id,
            expectedVersion: version,
            actor: 'system',
            reason: 'cancelled_by_operator',
          }),
        ),
      );
    },
    whyNot: () => `the operation is ${status}; the facility is carrying it out.`,
    showRefusal: (reason) => {
      refusedCancellation = reason;
      details();
    },
  });

  return runShieldedFromCancellation(async () => {
    details();
    if (status === 'awaiting_member_approval') {
      const decided = await condition(() => status !== 'awaiting_member_approval', input.approvalTimeoutMs, {
        summary: 'Approval deadline: reject the proposal as expired',
      });
      if (!decided) {
        await turns.run(async () => {
          if (status !== 'awaiting_member_approval') return;
          apply(
            await acts.rejectHandlingOperation({
              operationId: id,
              expectedVersion: version,
              actor: 'system',
              reason: 'approval_expired',
            }),
          );
        });
      }
    }

    if (input.testMode) {
      await condition(() => status !== 'awaiting_member_approval' && !turns.busy);
      if (status === 'awaiting_facility') {
        await turns.run(async () => {
          const done = await acts.sandboxFulfilHandlingOperation({ operationId: id });
          apply(done.snapshot);
          if (done.bundleId) {
            await acts.publishPhysicalScanAvailable({ bundleId: done.bundleId });
            await acts.finishPhysicalScanBundle({ bundleId: done.bundleId });
          }
        });
      }
    }

    while (isOpenHandlingStatus(status)) {
      await condition(
        () => !isOpenHandlingStatus(status) || (scanOutcome !== null && status === 'accepted' && !turns.busy),
      );
      const outcome = scanOutcome as ScanOutcome | null;
      if (!isOpenHandlingStatus(status) || !outcome) break;
      scanOutcome = null;
      await turns.run(async () => {
        if (status !== 'accepted') return;
        apply(
          outcome.outcome === 'fulfilled'
            ? await acts.completeHandlingOperation({
                operationId: id,
                expectedVersion: version,
                trackingNumber: null,
                attestation: null,
                viaScan: true,
              })
            : await acts.rejectHandlingOperation({
                operationId: id,
                expectedVersion: version,
                actor: 'facility',
                reason: outcome.reason ?? 'scan_rejected',
              }),
        );
      });
    }

    await condition(() => !turns.busy && allHandlersFinished());
    await acts.publishHandlingOutcome({ operationId: id });
    return { id, status, version };
  }, onCancellationRequest);
}

export async function inboundReceivedWorkflow(input: InboundReceivedWorkflowInput): Promise<void> {
  await acts.publishPhysicalInboundReceived({ itemId: input.itemId });
}

const OCR_RETRY_DELAY = '10 seconds';

export async function scanBundleWorkflow(input: ScanBundleWorkflowInput): Promise<string | null> {
  const pageIds = await acts.publishPhysicalScanAvailable({ bundleId: input.bundleId });
  upsertSearchAttributes([{ key: ObjectStatus, value: 'processing' }]);
  for (const pageId of pageIds) {
    for (;;) {
      const result = await ocr.ocrPhysicalScanPage({ pageId });
      if (!result.retry) break;
      await sleep(OCR_RETRY_DELAY);
    }
  }
  const status = await acts.finishPhysicalScanBundle({ bundleId: input.bundleId });
  upsertSearchAttributes([{ key: ObjectStatus, value: status ?? 'missing' }]);
  // The Open & Scan operation behind the scan completes after inbound.context_ready
  // (earlier bundles were reported by the fulfilment itself, before their OCR).
  if (patched('scan-outcome-after-context')) await acts.reportScanBundleOutcome({ bundleId: input.bundleId });
  return status;
}

/** Started by the reconciler schedule: gives every record whose workflow start was lost its workflow. */
export async function physicalInboundReconcileWorkflow(
  input: PhysicalInboundReconcileInput,
): Promise<{ operations: number; items: number; bundles: number; scanOutcomes: number }> {
  return acts.reconcilePhysicalInbound(input);
}
