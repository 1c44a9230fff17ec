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
import { cancelOrRefuse, OperatorCancellation, runShieldedFromCancellation } from '../shared/operator-cancellation';
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
  const handling = new Handling(input);
  handling.setHandlers();
  return runShieldedFromCancellation(() => handling.run(), handling.onCancellationRequest);
}

const HANDLING_WAITING: Partial<Record<HandlingStatus, string>> = {
  awaiting_member_approval:
    'Waiting for the owner to approve or reject the proposal; rejected as expired when the approval time runs out.',
  awaiting_facility:
    'Approved: waiting for the facility to accept it; until then a cancellation request rejects it with a refund.',
  accepted: 'The facility accepted it and is carrying it out; it can no longer be cancelled. Waiting for completion.',
};

/** One handling operation's workflow state, its handlers, and the steps of its main flow. */
class Handling {
  readonly id: string;
  status: HandlingStatus;
  version: number;
  readonly turns = exclusiveTurns();
  scanOutcome: ScanOutcome | null = null;
  refusedCancellation: string | null = null;
  readonly onCancellationRequest: () => Promise<void>;

  constructor(readonly input: HandlingWorkflowInput) {
    this.id = input.operationId;
    this.status = input.status;
    this.version = input.version;
    this.onCancellationRequest = cancelOrRefuse(this.turns, this.operatorCancellation());
  }

  /** Handlers change `status` while the main flow awaits; read it through this so TypeScript does not narrow it. */
  current(): HandlingStatus {
    return this.status;
  }

  snapshot(): HandlingSnapshot {
    return { id: this.id, status: this.status, version: this.version };
  }

  details(): void {
    const { input } = this;
    showDetails(
      [
        `**Handling operation ${this.id}** (${input.actionType}, ${input.testMode ? 'sandbox' : 'live'}): **${this.status}** (version ${this.version})`,
        HANDLING_WAITING[this.status] ?? 'Finished.',
      ],
      this.refusedCancellation,
    );
  }

  apply(s: HandlingSnapshot): void {
    this.version = s.version;
    if (s.status !== this.status) {
      this.status = s.status;
      const status = s.status;
      publishStatus(ObjectStatus, status, {
        step: status === 'awaiting_facility' ? 'awaiting_acceptance' : status === 'accepted' ? 'in_progress' : null,
      });
    }
    this.details();
  }

  guard(event: HandlingEvent, actor: HandlingActor, expectedVersion: number): void {
    const { status, version } = this;
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
  }

  setHandlers(): void {
    const { id, turns } = this;
    setHandler(handlingStateQuery, () => this.snapshot());
    setHandler(
      approveHandlingUpdate,
      (args) =>
        turns.run(async () => {
          this.guard('approve', 'member', args.expectedVersion);
          this.apply(await call(acts.approveHandlingOperation({ operationId: id, ...args })));
          return this.snapshot();
        }),
      { validator: (args) => this.guard('approve', 'member', args.expectedVersion) },
    );
    setHandler(
      rejectHandlingUpdate,
      (args) =>
        turns.run(async () => {
          this.guard('reject', args.actor, args.expectedVersion);
          this.apply(await call(acts.rejectHandlingOperation({ operationId: id, ...args })));
          return this.snapshot();
        }),
      { validator: (args) => this.guard('reject', args.actor, args.expectedVersion) },
    );
    setHandler(
      acceptHandlingUpdate,
      (args) =>
        turns.run(async () => {
          this.guard('accept', 'facility', args.expectedVersion);
          this.apply(await call(acts.acceptHandlingOperation({ operationId: id, ...args })));
          return this.snapshot();
        }),
      { validator: (args) => this.guard('accept', 'facility', args.expectedVersion) },
    );
    setHandler(
      completeHandlingUpdate,
      (args) =>
        turns.run(async () => {
          this.guard('complete', 'facility', args.expectedVersion);
          this.apply(await call(acts.completeHandlingOperation({ operationId: id, ...args })));
          return this.snapshot();
        }),
      { validator: (args) => this.guard('complete', 'facility', args.expectedVersion) },
    );
    // The facility fulfilled (or refused) the scan request of an accepted Open & Scan.
    setHandler(handlingScanOutcomeSignal, (outcome) => {
      this.scanOutcome = outcome;
    });
  }

  /** A cancellation request from Temporal: reject (refunding any charge) before the facility accepts, else refuse and record why. */
  operatorCancellation(): OperatorCancellation {
    return {
      objectType: 'handling',
      objectId: this.id,
      status: () => this.status,
      settled: () => !isOpenHandlingStatus(this.status),
      cancellable: () => this.status !== 'accepted',
      cancel: async () => {
        this.apply(
          await call(
            acts.rejectHandlingOperation({
              operationId: this.id,
              expectedVersion: this.version,
              actor: 'system',
              reason: 'cancelled_by_operator',
            }),
          ),
        );
      },
      whyNot: () => `the operation is ${this.status}; the facility is carrying it out.`,
      showRefusal: (reason) => {
        this.refusedCancellation = reason;
        this.details();
      },
    };
  }

  /** The main flow: the owner's approval, the sandbox's fulfilment, the scan's outcome, then the outcome event. */
  async run(): Promise<HandlingSnapshot> {
    this.details();
    await this.awaitApproval();
    if (this.input.testMode) await this.fulfilInSandbox();
    await this.followScanOutcomes();
    await condition(() => !this.turns.busy && allHandlersFinished());
    await acts.publishHandlingOutcome({ operationId: this.id });
    return this.snapshot();
  }

  /** Waits for the owner's decision; rejects the proposal as expired when the approval time runs out. */
  async awaitApproval(): Promise<void> {
    if (this.current() !== 'awaiting_member_approval') return;
    const decided = await condition(() => this.status !== 'awaiting_member_approval', this.input.approvalTimeoutMs, {
      summary: 'Approval deadline: reject the proposal as expired',
    });
    if (decided) return;
    await this.turns.run(async () => {
      if (this.status !== 'awaiting_member_approval') return;
      this.apply(
        await acts.rejectHandlingOperation({
          operationId: this.id,
          expectedVersion: this.version,
          actor: 'system',
          reason: 'approval_expired',
        }),
      );
    });
  }

  /** A test operation: the sandbox facility carries it out at once. */
  async fulfilInSandbox(): Promise<void> {
    await condition(() => this.status !== 'awaiting_member_approval' && !this.turns.busy);
    if (this.current() !== 'awaiting_facility') return;
    await this.turns.run(async () => {
      const done = await acts.sandboxFulfilHandlingOperation({ operationId: this.id });
      this.apply(done.snapshot);
      if (done.bundleId) {
        await acts.publishPhysicalScanAvailable({ bundleId: done.bundleId });
        await acts.finishPhysicalScanBundle({ bundleId: done.bundleId });
      }
    });
  }

  /** An accepted Open & Scan: completes or rejects the operation as the facility's scan outcome says. */
  async followScanOutcomes(): Promise<void> {
    while (isOpenHandlingStatus(this.current())) {
      await condition(
        () =>
          !isOpenHandlingStatus(this.status) ||
          (this.scanOutcome !== null && this.status === 'accepted' && !this.turns.busy),
      );
      const outcome = this.scanOutcome;
      if (!isOpenHandlingStatus(this.status) || !outcome) break;
      this.scanOutcome = null;
      await this.turns.run(async () => {
        if (this.status !== 'accepted') return;
        this.apply(await this.scanOutcomeStep(outcome));
      });
    }
  }

  scanOutcomeStep(outcome: ScanOutcome): Promise<HandlingSnapshot> {
    return outcome.outcome === 'fulfilled'
      ? acts.completeHandlingOperation({
          operationId: this.id,
          expectedVersion: this.version,
          trackingNumber: null,
          attestation: null,
          viaScan: true,
        })
      : acts.rejectHandlingOperation({
          operationId: this.id,
          expectedVersion: this.version,
          actor: 'facility',
          reason: outcome.reason ?? 'scan_rejected',
        });
  }
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
