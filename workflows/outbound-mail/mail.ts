// One workflow per outbound piece (`outbound-mail-<id>`): it announces the piece (unless
// its submission did: input.announced), waits for approval when needed (cancelling it
// when the approval timeout passes) or, for a
// Business mail run child, for its run to settle (the run's workflow owns that wait), then
// applies each facility or sandbox step as an Update until the piece is delivered,
// failed or cancelled. Every change is one idempotent activity that updates the row
// only from the expected status and publishes the mail.* event; handlers run one at a
// time so that, for example, a cancel and a start-of-printing cannot both succeed.
// A cancellation request from Temporal cancels the piece like the sender's DELETE while
// that is possible, and is refused (and recorded) once printing has started.
// A scheduled piece (send_after, an extension) is held from the facility once paid until
// its durable timer fires; the sandbox advance skips the wait.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import type { createMailActivities } from '../../activities/outbound-mail/mail';
import type { createPrintProofActivities } from '../../activities/outbound-mail/print-proof';
import type { createMailRunActivities } from '../../activities/mail-runs/mail-run';
import type { createScheduledMailActivities } from '../../activities/outbound-mail/scheduled-send';
import {
  approveMailUpdate,
  cancelMailUpdate,
  carrierDeliveryFailedUpdate,
  deliveredUpdate,
  dispatchedUpdate,
  DispatchInput,
  FacilityActor,
  failedUpdate,
  MAIL_FAILURE,
  mailStatusAtStart,
  mailStatusQuery,
  OutboundMailWorkflowInput,
  PhotoRef,
  printedUpdate,
  ReconcileOutboundMailInput,
  rejectMailUpdate,
  startPrintingUpdate,
  testAdvanceUpdate,
} from './contracts';
import { mailRunSettledSignal } from '../mail-runs/contracts';
import { MailStatus } from '../shared/search-attributes';
import { call } from '../shared/activity-failures';
import { cancelOrRefuse, OperatorCancellation, runShieldedFromCancellation } from '../shared/operator-cancellation';
import { exclusiveTurns } from '../shared/turns';
import { FacilityView, publishFacilityStep, publishStatus, showDetails } from '../shared/status-visibility';
import { isTerminalMailStatus, MailMove, moveAllowed, nextTestStep } from '../../domain/workflow-safe/mail-rules';
import { FACILITY_MAIL_MOVES, heldMessage, holdRemainingMs } from '../../domain/workflow-safe/send-after';
import { DATABASE_STEP, LOCAL_DATABASE_STEP, PRINT_PROOF } from '../shared/activity-options';

type MailActivities = ReturnType<typeof createMailActivities>;

const acts = proxyActivities<MailActivities>(DATABASE_STEP);
// When the workflow announces (a reconciled start, or a submission whose publish failed),
// it does so inside the first workflow task (a short database write and a wake-up of the
// webhook dispatchers): no activity task round trip through the server.
const localActs = proxyLocalActivities<MailActivities>(LOCAL_DATABASE_STEP);
const runActs = proxyActivities<ReturnType<typeof createMailRunActivities>>(DATABASE_STEP);
const scheduledActs = proxyActivities<ReturnType<typeof createScheduledMailActivities>>(DATABASE_STEP);
const proofActs = proxyActivities<ReturnType<typeof createPrintProofActivities>>(PRINT_PROOF);

/** Histories from before print proofs replay without the proof activity. */
const PRINT_PROOF_PATCH = 'render-print-proof';

export async function outboundMailWorkflow(input: OutboundMailWorkflowInput): Promise<string> {
  const mail = new OutboundMail(input);
  mail.setHandlers();
  return runShieldedFromCancellation(() => mail.run(), mail.onCancellationRequest);
}

/** A refusal of a step the piece's status (or its hold) does not allow. */
function stateConflict(message: string, details?: unknown[]): ApplicationFailure {
  return ApplicationFailure.create({ message, type: MAIL_FAILURE.stateConflict, details, nonRetryable: true });
}

/** One piece's workflow state, its handlers, and the steps of its main flow. */
class OutboundMail {
  readonly id: string;
  readonly statusAtStart: ReturnType<typeof mailStatusAtStart>;
  status: string;
  printingStarted: boolean;
  facilityId: string | null;
  readonly turns = exclusiveTurns();
  /** A restarted child of a mail run may have missed its run's signal: look once. */
  runSettled: boolean;
  refusedCancellation: string | null = null;
  readonly approvalDeadline: Date;
  /** Scheduled send: true until the workflow lets the facility see the piece. */
  held: boolean;
  readonly onCancellationRequest: () => Promise<void>;

  constructor(readonly input: OutboundMailWorkflowInput) {
    this.id = input.outboundMailId;
    this.statusAtStart = mailStatusAtStart(input);
    this.status = this.statusAtStart;
    this.printingStarted = input.restart?.printingStarted ?? false;
    this.facilityId = input.restart?.facilityId ?? null;
    this.runSettled = Boolean(input.restart);
    this.approvalDeadline = new Date(Date.now() + input.approvalTimeoutSeconds * 1000);
    this.held = input.sendAfter !== undefined;
    this.onCancellationRequest = cancelOrRefuse(this.turns, this.operatorCancellation());
  }

  /** Handlers change `status` while the main flow awaits; read it through this so TypeScript does not narrow it. */
  current(): string {
    return this.status;
  }

  /** What the facility is doing with the piece (the FacilityStep search attribute). */
  facility(): FacilityView {
    const { status, held, printingStarted } = this;
    const step =
      status === 'submitted'
        ? held
          ? 'scheduled'
          : printingStarted
            ? 'printing'
            : 'awaiting_print'
        : status === 'ready'
          ? 'awaiting_dispatch'
          : status === 'mailed'
            ? 'in_transit'
            : null;
    return { step, facilityId: this.facilityId };
  }

  /** What the piece waits for now, for the workflow's details. */
  waiting(): string | undefined {
    const { status, input, facilityId } = this;
    switch (status) {
      case 'pending_approval':
        return `Waiting for the owner's approval until ${this.approvalDeadline.toISOString()}; then it is cancelled (nothing was charged).`;
      case 'funding_pending':
        return 'Waiting for its Business mail run to be funded, cancelled or closed.';
      case 'submitted':
        return this.held
          ? `Paid and scheduled: hidden from the facility until ${input.sendAfter}; until then it can be cancelled (refunded).`
          : this.printingStarted
            ? `Paid. The facility${facilityId ? ` ${facilityId}` : ''} is printing it; it can no longer be cancelled. Next: printed.`
            : 'Paid. Waiting for a facility to start printing; until then it can be cancelled (refunded).';
      case 'ready':
        return 'Printed. Waiting for the facility to dispatch it.';
      case 'mailed':
        return 'Mailed. Waiting for delivery (or a carrier failure).';
      default:
        return undefined;
    }
  }

  details(): void {
    showDetails(
      [
        `**Outbound mail ${this.id}** (${this.input.testMode ? 'sandbox' : 'live'}): **${this.status}**`,
        this.waiting() ?? 'Finished.',
      ],
      this.refusedCancellation,
    );
  }

  setStatus(next: string): void {
    if (next === this.status) return;
    this.status = next;
    publishStatus(MailStatus, next, this.facility());
    this.details();
  }

  requireMove(move: MailMove): void {
    const { status } = this;
    if (!moveAllowed(move, status))
      throw stateConflict(`The piece is ${status}; ${move} is not possible now.`, [{ status, move }]);
    // A facility that guessed a scheduled piece's id still cannot act on it early.
    if (this.held && FACILITY_MAIL_MOVES.includes(move))
      throw stateConflict(heldMessage('piece', this.input.sendAfter!), [{ status, move }]);
  }

  /** Scheduled send: lets the facility see the piece (its timer fired, or the sandbox skipped the wait). */
  async release(): Promise<void> {
    await call(scheduledActs.releaseScheduledMail({ outboundMailId: this.id }));
    this.held = false;
    publishFacilityStep(this.facility());
    this.details();
  }

  // The steps shared by facility updates and the sandbox's testAdvance.

  async printed(actor: string | null, photos: PhotoRef[]): Promise<void> {
    this.requireMove('printed');
    await call(acts.markPrinted({ outboundMailId: this.id, facilityId: actor, photos }));
    this.facilityId ??= actor;
    this.printingStarted = true;
    this.setStatus('ready');
  }

  async dispatched(facilityId: string | null, d: DispatchInput): Promise<void> {
    this.requireMove('dispatched');
    await call(acts.markDispatched({ outboundMailId: this.id, facilityId, ...d }));
    this.setStatus('mailed');
  }

  async delivered(facilityId: string | null, photos: PhotoRef[]): Promise<void> {
    this.requireMove('delivered');
    await call(acts.markDelivered({ outboundMailId: this.id, facilityId, photos }));
    this.setStatus('delivered');
  }

  setHandlers(): void {
    setHandler(mailStatusQuery, () => this.status);
    setHandler(mailRunSettledSignal, () => {
      this.runSettled = true;
    });
    this.setOwnerHandlers();
    this.setFacilityHandlers();
    setHandler(testAdvanceUpdate, () => this.turns.run(() => this.testAdvance()), {
      validator: () => this.validateTestAdvance(),
    });
  }

  /** The owner's (or caller's) approve, reject and cancel. */
  setOwnerHandlers(): void {
    const { id, turns } = this;
    setHandler(
      approveMailUpdate,
      () =>
        turns.run(async () => {
          this.requireMove('approve');
          const result = await call(acts.approveMail({ outboundMailId: id }));
          this.setStatus('submitted');
          return result;
        }),
      { validator: () => this.requireMove('approve') },
    );
    setHandler(
      rejectMailUpdate,
      () =>
        turns.run(async () => {
          this.requireMove('reject');
          await call(acts.cancelMail({ outboundMailId: id, reason: 'rejected_by_owner', requestId: uuid4() }));
          this.setStatus('cancelled');
        }),
      { validator: () => this.requireMove('reject') },
    );
    setHandler(
      cancelMailUpdate,
      () =>
        turns.run(async () => {
          const result = await call(
            acts.cancelMail({ outboundMailId: id, reason: 'cancelled_by_caller', requestId: uuid4() }),
          );
          this.setStatus('cancelled');
          return result;
        }),
      { validator: () => this.validateCancel() },
    );
  }

  validateCancel(): void {
    const { status, printingStarted } = this;
    if (status === 'cancelled') return;
    if (!moveAllowed('cancel', status) || printingStarted) {
      throw ApplicationFailure.create({
        message:
          printingStarted && status === 'submitted'
            ? 'Printing has started; the piece can no longer be cancelled.'
            : `The piece is ${status} and can no longer be cancelled.`,
        type: MAIL_FAILURE.notCancellable,
        details: [{ status }],
        nonRetryable: true,
      });
    }
  }

  /** The facility's steps, from start of printing to delivery or failure. */
  setFacilityHandlers(): void {
    const { id, turns } = this;
    setHandler(
      startPrintingUpdate,
      ({ facilityId: actor }) =>
        turns.run(async () => {
          this.requireMove('startPrinting');
          await call(acts.startPrinting({ outboundMailId: id, facilityId: actor }));
          this.printingStarted = true;
          this.facilityId ??= actor;
          publishFacilityStep(this.facility());
          this.details();
        }),
      { validator: (_actor: FacilityActor) => this.requireMove('startPrinting') },
    );
    setHandler(printedUpdate, ({ facilityId, photos }) => turns.run(() => this.printed(facilityId, photos)), {
      validator: (_input: FacilityActor) => this.requireMove('printed'),
    });
    setHandler(dispatchedUpdate, ({ facilityId, ...d }) => turns.run(() => this.dispatched(facilityId, d)), {
      validator: (_input: FacilityActor) => this.requireMove('dispatched'),
    });
    setHandler(deliveredUpdate, ({ facilityId, photos }) => turns.run(() => this.delivered(facilityId, photos)), {
      validator: (_input: FacilityActor) => this.requireMove('delivered'),
    });
    setHandler(
      failedUpdate,
      ({ facilityId, message }) =>
        turns.run(async () => {
          this.requireMove('failed');
          await call(acts.markFailed({ outboundMailId: id, facilityId, message }));
          this.setStatus('failed');
        }),
      { validator: (_input: FacilityActor) => this.requireMove('failed') },
    );
    setHandler(
      carrierDeliveryFailedUpdate,
      ({ facilityId, message }) =>
        turns.run(async () => {
          this.requireMove('carrierDeliveryFailed');
          await call(acts.markCarrierDeliveryFailed({ outboundMailId: id, facilityId, message }));
          this.setStatus('failed');
        }),
      { validator: (_input: FacilityActor) => this.requireMove('carrierDeliveryFailed') },
    );
  }

  /** The sandbox's advance: the next facility step, simulated. */
  async testAdvance(): Promise<{ status: string }> {
    const step = nextTestStep(this.status);
    if (!this.input.testMode || !step)
      throw stateConflict(`A ${this.status} piece cannot be advanced.`, [{ status: this.status }]);
    if (this.held) await this.release();
    const sim = await call(acts.simulateFulfillment({ outboundMailId: this.id, step }));
    if (step === 'printed') await this.printed(null, sim.photos);
    else if (step === 'dispatched')
      await this.dispatched(null, {
        carrier: sim.carrier!,
        trackingNumber: sim.trackingNumber,
        dispatchMethod: sim.dispatchMethod!,
        photos: sim.photos,
      });
    else await this.delivered(null, sim.photos);
    return { status: this.status };
  }

  validateTestAdvance(): void {
    const { status } = this;
    if (!this.input.testMode) throw stateConflict('Only sandbox pieces can be advanced.');
    if (!nextTestStep(status)) {
      const hint = status === 'pending_approval' ? ' Approve it first.' : '';
      throw stateConflict(`A ${status} piece cannot be advanced.${hint}`, [{ status }]);
    }
  }

  /** A cancellation request from Temporal: cancel and refund like DELETE while possible, else refuse and record why. */
  operatorCancellation(): OperatorCancellation {
    return {
      objectType: 'outbound_mail',
      objectId: this.id,
      status: () => this.status,
      settled: () => this.status === 'cancelled',
      cancellable: () => moveAllowed('cancel', this.status) && !this.printingStarted,
      cancel: async () => {
        await call(acts.cancelMail({ outboundMailId: this.id, reason: 'cancelled_by_operator', requestId: uuid4() }));
        this.setStatus('cancelled');
      },
      whyNot: () =>
        this.printingStarted && this.status === 'submitted'
          ? 'printing has started; the piece can no longer be cancelled.'
          : `the piece is ${this.status}; it can no longer be cancelled.`,
      showRefusal: (reason) => {
        this.refusedCancellation = reason;
        this.details();
      },
    };
  }

  /** The main flow: announce, wait for the run, the owner or the hold, then for a final status. */
  async run(): Promise<string> {
    this.details();
    await this.announce();
    const proof = this.renderProof();
    await this.awaitRunSettlement();
    await this.awaitApproval();
    await this.holdUntilSendAfter();
    await condition(() => isTerminalMailStatus(this.status) && !this.turns.busy && allHandlersFinished());
    await proof;
    return this.status;
  }

  /** Announces the piece, unless its submission did; a run child is announced (mail.submitted or mail.cancelled) when its run settles. */
  async announce(): Promise<void> {
    const { input } = this;
    const created = this.statusAtStart;
    if (
      input.restart ||
      input.announced ||
      created === 'funding_pending' ||
      created === 'ready' ||
      created === 'mailed'
    )
      return;
    // Histories begun before the announcement became a local activity replay the activity.
    const announce = patched('announce-mail-locally') ? localActs.announceMail : acts.announceMail;
    await this.turns.run(() => call(announce({ outboundMailId: this.id, status: created })));
  }

  /** Rendered beside the piece's steps (it changes no status), awaited before the workflow ends. */
  renderProof(): Promise<unknown> | undefined {
    const { printProof } = this.input;
    if (!(printProof ? printProof === 'render' : patched(PRINT_PROOF_PATCH))) return undefined;
    return proofActs.renderMailProof({ outboundMailId: this.id }).catch((err: unknown) => {
      log.warn('the print proof was not rendered', { error: String(err) });
    });
  }

  /** A Business mail run child: waits for its run to settle, then takes the run's outcome. */
  async awaitRunSettlement(): Promise<void> {
    while (this.current() === 'funding_pending') {
      await condition(() => this.runSettled || this.status !== 'funding_pending');
      this.runSettled = false;
      await this.turns.run(async () => {
        if (this.status === 'funding_pending')
          this.setStatus((await call(runActs.settleMailRunChild({ outboundMailId: this.id }))).status);
      });
    }
  }

  /** A piece pending approval: waits for the owner, and cancels it when the approval timeout passes. */
  async awaitApproval(): Promise<void> {
    if (this.current() !== 'pending_approval') return;
    const decided = await condition(
      () => this.status !== 'pending_approval',
      this.input.approvalTimeoutSeconds * 1000,
      { summary: 'Approval deadline: cancel the piece if the owner has not approved it' },
    );
    if (decided) return;
    await this.turns.run(async () => {
      if (this.status !== 'pending_approval') return;
      await call(acts.cancelMail({ outboundMailId: this.id, reason: 'approval_timed_out', requestId: uuid4() }));
      this.setStatus('cancelled');
    });
  }

  /**
   * Scheduled send: once paid, the piece waits on a durable timer before the facility
   * sees it. DELETE (or a cancellation request) may cancel it meanwhile; the sandbox
   * advance releases it at once.
   */
  async holdUntilSendAfter(): Promise<void> {
    if (!this.held || this.current() !== 'submitted') return;
    const remainingMs = holdRemainingMs(this.input.sendAfter!, Date.now());
    if (remainingMs > 0) {
      await condition(() => !this.held || this.status !== 'submitted', remainingMs, {
        summary: 'Scheduled send: hold the paid piece from the facility until send_after',
      });
    }
    await this.turns.run(async () => {
      if (this.held && this.status === 'submitted') await this.release();
    });
  }
}

/** Started by the reconciler schedule: gives every lost-start piece its workflow. */
export async function reconcileOutboundMailWorkflow(input: ReconcileOutboundMailInput): Promise<number> {
  return acts.reconcileUnstartedMail(input);
}
