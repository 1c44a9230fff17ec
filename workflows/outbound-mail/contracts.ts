// The outbound piece workflow's contract with the API: its id, input, and the updates
// that owners (approve, reject), callers (cancel), facilities (printing steps) and the
// sandbox (testAdvance) send it. Failures carry one of MAIL_FAILURE types so the API can
// answer with the spec's error codes.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { DispatchMethod, PhotoCategory } from '../../domain/workflow-safe/mail-rules';

export const OUTBOUND_MAIL_WORKFLOW = 'outboundMailWorkflow';
export const RECONCILE_OUTBOUND_MAIL_WORKFLOW = 'reconcileOutboundMailWorkflow';

export function outboundMailWorkflowId(outboundMailId: string): string {
  return `outbound-mail-${outboundMailId}`;
}

/** The statuses a piece's workflow starts from: new pieces, and the reconciler's restart from the row. */
export type MailStartStatus = 'pending_approval' | 'funding_pending' | 'submitted' | 'ready' | 'mailed';

/**
 * A workflow's input never changes: `statusAtStart` is where the piece stood when this
 * run began, not where it is now (the MailStatus search attribute and the workflow's
 * current details say that).
 */
export interface OutboundMailWorkflowInput {
  outboundMailId: string;
  /** pending_approval, funding_pending (a Business mail run child) or submitted for a new piece. */
  statusAtStart?: MailStartStatus;
  /** The same, as workflows started before statusAtStart name it. */
  status?: 'pending_approval' | 'funding_pending' | 'submitted';
  testMode: boolean;
  memberId: string;
  agentId: string | null;
  /** How long a pending piece waits for its owner before it is cancelled (from this run's start). */
  approvalTimeoutSeconds: number;
  /**
   * Set when the reconciler restarts the piece from its row after its previous run closed
   * while the piece was open: the piece was announced already, and the facility may have
   * claimed it for printing.
   */
  restart?: { previousRunStatus: string; printingStarted: boolean; facilityId: string | null };
  /**
   * Scheduled send (extension): set while the piece has a send_after its workflow has not
   * released yet. Once submitted (paid), the piece stays hidden from the facility until
   * this time; absent for every other piece, so their histories are unchanged.
   */
  sendAfter?: string;
  /**
   * Set when the submission published the piece's first event (mail.submitted or
   * mail.pending_approval) itself, after its commit: the workflow then does not announce
   * it again. Absent on every other start (the reconciler's, a mail run's child, an
   * announcement that failed), so those workflows announce, once by the event key.
   */
  announced?: true;
  /**
   * Set on every start since print proofs exist, so the workflow need not consult the
   * `render-print-proof` patch (whose marker and search-attribute upsert cost the server two
   * history events per piece): `render` when the workflow renders the proof, `stored` when
   * the piece has it already (its submission rendered it). Absent in histories begun before
   * it, which replay the patch.
   */
  printProof?: 'render' | 'stored';
}

export function mailStatusAtStart(input: OutboundMailWorkflowInput): MailStartStatus {
  const status = input.statusAtStart ?? input.status;
  if (!status) throw new Error('outbound mail workflow input without a status');
  return status;
}

export interface ReconcileOutboundMailInput {
  /** Only rows committed at least this long ago are started (younger ones may still be starting). */
  graceSeconds: number;
  approvalTimeoutSeconds: number;
}

/** ApplicationFailure types the workflow and its activities use. */
export const MAIL_FAILURE = {
  stateConflict: 'MAIL_STATE_CONFLICT',
  notCancellable: 'MAIL_NOT_CANCELLABLE',
  insufficientCredits: 'INSUFFICIENT_CREDITS',
  spendLimit: 'MAIL_SPEND_LIMIT',
  notFound: 'MAIL_NOT_FOUND',
} as const;

export interface PhotoRef {
  category: PhotoCategory;
  storageKey: string;
  contentType: string;
}

export interface ApproveResult {
  creditsChargedCents: number;
  balanceCents: number | null;
}

export interface CancelResult {
  refundedCents: number;
  alreadyCancelled: boolean;
  balanceCents: number | null;
}

export interface DispatchInput {
  carrier: string;
  trackingNumber: string | null;
  dispatchMethod: DispatchMethod;
  photos: PhotoRef[];
}

export interface FacilityActor {
  facilityId: string;
}

export const approveMailUpdate = defineUpdate<ApproveResult, []>('approve');
export const rejectMailUpdate = defineUpdate<void, []>('reject');
export const cancelMailUpdate = defineUpdate<CancelResult, []>('cancel');
export const startPrintingUpdate = defineUpdate<void, [FacilityActor]>('startPrinting');
export const printedUpdate = defineUpdate<void, [FacilityActor & { photos: PhotoRef[] }]>('printed');
export const dispatchedUpdate = defineUpdate<void, [FacilityActor & DispatchInput]>('dispatched');
export const deliveredUpdate = defineUpdate<void, [FacilityActor & { photos: PhotoRef[] }]>('delivered');
export const failedUpdate = defineUpdate<void, [FacilityActor & { message: string }]>('failed');
export const carrierDeliveryFailedUpdate = defineUpdate<void, [FacilityActor & { message: string | null }]>(
  'carrierDeliveryFailed',
);
/** Sandbox: one step of submitted -> ready -> mailed -> delivered through the same handlers. */
export const testAdvanceUpdate = defineUpdate<{ status: string }, []>('testAdvance');

export const mailStatusQuery = defineQuery<string>('status');

/** The daily clean-up of dry-run print proofs (services/outbound-mail/print-proofs.ts). */
export const DRY_RUN_PROOF_CLEANUP_WORKFLOW = 'dryRunProofCleanupWorkflow';

/** One schedule per task queue, like the other maintenance schedules. */
export function dryRunProofCleanupScheduleId(taskQueue: string): string {
  return `dry-run-proof-cleanup-${taskQueue}`;
}

export interface DryRunProofCleanupInput {
  /** Dry-run proofs stored longer ago than this are deleted. */
  retentionHours: number;
}
