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
import { cancelOrRefuse, runShieldedFromCancellation } from '../shared/operator-cancellation';
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
  const id = input.outboundMailId;
  const statusAtStart = mailStatusAtStart(input);
  let status: string = statusAtStart;
  let printingStarted = input.restart?.printingStarted ?? false;
  let facilityId = input.restart?.facilityId ?? null;
  const turns = exclusiveTurns();
  // A restarted child of a mail run may have missed its run's signal: look once.
  let runSettled = Boolean(input.restart);
  let refusedCancellation: string | null = null;
  const approvalDeadline = new Date(Date.now() + input.approvalTimeoutSeconds * 1000);
  // Scheduled send: true until the workflow lets the facility see the piece.
  let held = input.sendAfter !== undefined;

  /** What the facility is doing with the piece (the FacilityStep search attribute). */
  const facility = (): FacilityView => ({
    step:
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
            : null,
    facilityId,
  });

  const WAITING: Record<string, () => string> = {
    pending_approval: () =>
      `Waiting for the owner's approval until ${approvalDeadline.toISOString()}; then it is cancelled (nothing was charged).`,
    funding_pending: () => 'Waiting for its Business mail run to be funded, cancelled or closed.',
    submitted: () =>
      held
        ? `Paid and scheduled: hidden from the facility until ${input.sendAfter}; until then it can be cancelled (refunded).`
        : printingStarted
          ? `Paid. The facility${facilityId ? ` ${facilityId}` : ''} is printing it; it can no longer be cancelled. Next: printed.`
          : 'Paid. Waiting for a facility to start printing; until then it can be cancelled (refunded).',
    ready: () => 'Printed. Waiting for the facility to dispatch it.',
    mailed: () => 'Mailed. Waiting for delivery (or a carrier failure).',
  };
  const details = () =>
    showDetails(
      [
        `**Outbound mail ${id}** (${input.testMode ? 'sandbox' : 'live'}): **${status}**`,
        WAITING[status]?.() ?? 'Finished.',
      ],
      refusedCancellation,
    );

  const setStatus = (next: string) => {
    if (next === status) return;
    status = next;
    publishStatus(MailStatus, next, facility());
    details();
  };

  const requireMove = (move: MailMove) => {
    if (!moveAllowed(move, status)) {
      throw ApplicationFailure.create({
        message: `The piece is ${status}; ${move} is not possible now.`,
        type: MAIL_FAILURE.stateConflict,
        details: [{ status, move }],
        nonRetryable: true,
      });
    }
    // A facility that guessed a scheduled piece's id still cannot act on it early.
    if (held && FACILITY_MAIL_MOVES.includes(move)) {
      throw ApplicationFailure.create({
        message: heldMessage('piece', input.sendAfter!),
        type: MAIL_FAILURE.stateConflict,
        details: [{ status, move }],
        nonRetryable: true,
      });
    }
  };

  /** Scheduled send: lets the facility see the piece (its timer fired, or the sandbox skipped the wait). */
  const release = async () => {
    await call(scheduledActs.releaseScheduledMail({ outboundMailId: id }));
    held = false;
    publishFacilityStep(facility());
    details();
  };

  // The steps shared by facility updates and the sandbox's testAdvance.
  const steps = {
    printed: async (actor: string | null, photos: PhotoRef[]) => {
      requireMove('printed');
      await call(acts.markPrinted({ outboundMailId: id, facilityId: actor, photos }));
      facilityId ??= actor;
      printingStarted = true;
      setStatus('ready');
    },
    dispatched: async (facilityId: string | null, d: DispatchInput) => {
      requireMove('dispatched');
      await call(acts.markDispatched({ outboundMailId: id, facilityId, ...d }));
      setStatus('mailed');
    },
    delivered: async (facilityId: string | null, photos: PhotoRef[]) => {
      requireMove('delivered');
      await call(acts.markDelivered({ outboundMailId: id, facilityId, photos }));
      setStatus('delivered');
    },
  };

  setHandler(mailStatusQuery, () => status);
  setHandler(mailRunSettledSignal, () => {
    runSettled = true;
  });

  setHandler(
    approveMailUpdate,
    () =>
      turns.run(async () => {
        requireMove('approve');
        const result = await call(acts.approveMail({ outboundMailId: id }));
        setStatus('submitted');
        return result;
      }),
    { validator: () => requireMove('approve') },
  );

  setHandler(
    rejectMailUpdate,
    () =>
      turns.run(async () => {
        requireMove('reject');
        await call(acts.cancelMail({ outboundMailId: id, reason: 'rejected_by_owner', requestId: uuid4() }));
        setStatus('cancelled');
      }),
    { validator: () => requireMove('reject') },
  );

  setHandler(
    cancelMailUpdate,
    () =>
      turns.run(async () => {
        const result = await call(
          acts.cancelMail({ outboundMailId: id, reason: 'cancelled_by_caller', requestId: uuid4() }),
        );
        setStatus('cancelled');
        return result;
      }),
    {
      validator: () => {
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
      },
    },
  );

  setHandler(
    startPrintingUpdate,
    ({ facilityId: actor }) =>
      turns.run(async () => {
        requireMove('startPrinting');
        await call(acts.startPrinting({ outboundMailId: id, facilityId: actor }));
        printingStarted = true;
        facilityId ??= actor;
        publishFacilityStep(facility());
        details();
      }),
    { validator: (_actor: FacilityActor) => requireMove('startPrinting') },
  );

  setHandler(printedUpdate, ({ facilityId, photos }) => turns.run(() => steps.printed(facilityId, photos)), {
    validator: (_input: FacilityActor) => requireMove('printed'),
  });
  setHandler(dispatchedUpdate, ({ facilityId, ...d }) => turns.run(() => steps.dispatched(facilityId, d)), {
    validator: (_input: FacilityActor) => requireMove('dispatched'),
  });
  setHandler(deliveredUpdate, ({ facilityId, photos }) => turns.run(() => steps.delivered(facilityId, photos)), {
    validator: (_input: FacilityActor) => requireMove('delivered'),
  });
  setHandler(
    failedUpdate,
    ({ facilityId, message }) =>
      turns.run(async () => {
        requireMove('failed');
        await call(acts.markFailed({ outboundMailId: id, facilityId, message }));
        setStatus('failed');
      }),
    { validator: (_input: FacilityActor) => requireMove('failed') },
  );
  setHandler(
    carrierDeliveryFailedUpdate,
    ({ facilityId, message }) =>
      turns.run(async () => {
        requireMove('carrierDeliveryFailed');
        await call(acts.markCarrierDeliveryFailed({ outboundMailId: id, facilityId, message }));
        setStatus('failed');
      }),
    { validator: (_input: FacilityActor) => requireMove('carrierDeliveryFailed') },
  );

  setHandler(
    testAdvanceUpdate,
    () =>
      turns.run(async () => {
        const step = nextTestStep(status);
        if (!input.testMode || !step) {
          throw ApplicationFailure.create({
            message: `A ${status} piece cannot be advanced.`,
            type: MAIL_FAILURE.stateConflict,
            details: [{ status }],
            nonRetryable: true,
          });
        }
        if (held) await release();
        const sim = await call(acts.simulateFulfillment({ outboundMailId: id, step }));
        if (step === 'printed') await steps.printed(null, sim.photos);
        else if (step === 'dispatched')
          await steps.dispatched(null, {
            carrier: sim.carrier!,
            trackingNumber: sim.trackingNumber,
            dispatchMethod: sim.dispatchMethod!,
            photos: sim.photos,
          });
        else await steps.delivered(null, sim.photos);
        return { status };
      }),
    {
      validator: () => {
        if (!input.testMode)
          throw ApplicationFailure.create({
            message: 'Only sandbox pieces can be advanced.',
            type: MAIL_FAILURE.stateConflict,
            nonRetryable: true,
          });
        if (!nextTestStep(status)) {
          const hint = status === 'pending_approval' ? ' Approve it first.' : '';
          throw ApplicationFailure.create({
            message: `A ${status} piece cannot be advanced.${hint}`,
            type: MAIL_FAILURE.stateConflict,
            details: [{ status }],
            nonRetryable: true,
          });
        }
      },
    },
  );

  /** A cancellation request from Temporal: cancel and refund like DELETE while possible, else refuse and record why. */
  const onCancellationRequest = cancelOrRefuse(turns, {
    objectType: 'outbound_mail',
    objectId: id,
    status: () => status,
    settled: () => status === 'cancelled',
    cancellable: () => moveAllowed('cancel', status) && !printingStarted,
    cancel: async () => {
      await call(acts.cancelMail({ outboundMailId: id, reason: 'cancelled_by_operator', requestId: uuid4() }));
      setStatus('cancelled');
    },
    whyNot: () =>
      printingStarted && status === 'submitted'
        ? 'printing has started; the piece can no longer be cancelled.'
        : `the piece is ${status}; it can no longer be cancelled.`,
    showRefusal: (reason) => {
      refusedCancellation = reason;
      details();
    },
  });

  return runShieldedFromCancellation(async () => {
    details();
    // A run child is announced (mail.submitted or mail.cancelled) when its run settles.
    const created = statusAtStart;
    if (
      !input.restart &&
      !input.announced &&
      created !== 'funding_pending' &&
      created !== 'ready' &&
      created !== 'mailed'
    ) {
      // Histories begun before the announcement became a local activity replay the activity.
      const announce = patched('announce-mail-locally') ? localActs.announceMail : acts.announceMail;
      await turns.run(() => call(announce({ outboundMailId: id, status: created })));
    }
    // Rendered beside the piece's steps (it changes no status), awaited before the workflow ends.
    const proof = (input.printProof ? input.printProof === 'render' : patched(PRINT_PROOF_PATCH))
      ? proofActs.renderMailProof({ outboundMailId: id }).catch((err: unknown) => {
          log.warn('the print proof was not rendered', { error: String(err) });
        })
      : undefined;

    while (status === 'funding_pending') {
      await condition(() => runSettled || status !== 'funding_pending');
      runSettled = false;
      await turns.run(async () => {
        if (status === 'funding_pending')
          setStatus((await call(runActs.settleMailRunChild({ outboundMailId: id }))).status);
      });
    }

    if (status === 'pending_approval') {
      const decided = await condition(() => status !== 'pending_approval', input.approvalTimeoutSeconds * 1000, {
        summary: 'Approval deadline: cancel the piece if the owner has not approved it',
      });
      if (!decided) {
        await turns.run(async () => {
          if (status !== 'pending_approval') return;
          await call(acts.cancelMail({ outboundMailId: id, reason: 'approval_timed_out', requestId: uuid4() }));
          setStatus('cancelled');
        });
      }
    }

    // Scheduled send: once paid, the piece waits on a durable timer before the facility
    // sees it. DELETE (or a cancellation request) may cancel it meanwhile; the sandbox
    // advance releases it at once.
    if (held && status === 'submitted') {
      const remainingMs = holdRemainingMs(input.sendAfter!, Date.now());
      if (remainingMs > 0) {
        await condition(() => !held || status !== 'submitted', remainingMs, {
          summary: 'Scheduled send: hold the paid piece from the facility until send_after',
        });
      }
      await turns.run(async () => {
        if (held && status === 'submitted') await release();
      });
    }

    await condition(() => isTerminalMailStatus(status) && !turns.busy && allHandlersFinished());
    await proof;
    return status;
  }, onCancellationRequest);
}

/** Started by the reconciler schedule: gives every lost-start piece its workflow. */
export async function reconcileOutboundMailWorkflow(input: ReconcileOutboundMailInput): Promise<number> {
  return acts.reconcileUnstartedMail(input);
}
