// The outbound piece workflow's contract with the API: its id, input, and the updates
// that owners (approve, reject), callers (cancel), facilities (printing steps) and the
// sandbox (testAdvance) send it. Failures carry one of MAIL_FAILURE types so the API can
// answer with the spec's error codes.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { DispatchMethod, PhotoCategory } from '../../domain/mail-rules';

export const OUTBOUND_MAIL_WORKFLOW = 'outboundMailWorkflow';
export const RECONCILE_OUTBOUND_MAIL_WORKFLOW = 'reconcileOutboundMailWorkflow';

export function outboundMailWorkflowId(outboundMailId: string): string {
  return `outbound-mail-${outboundMailId}`;
}

export interface OutboundMailWorkflowInput {
  outboundMailId: string;
  /** The status the API committed: pending_approval, funding_pending (a Business mail run child) or submitted. */
  status: 'pending_approval' | 'funding_pending' | 'submitted';
  testMode: boolean;
  memberId: string;
  agentId: string | null;
  /** How long a pending piece waits for its owner before it is cancelled. */
  approvalTimeoutSeconds: number;
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
export const carrierDeliveryFailedUpdate = defineUpdate<void, [FacilityActor & { message: string | null }]>('carrierDeliveryFailed');
/** Sandbox: one step of submitted -> ready -> mailed -> delivered through the same handlers. */
export const testAdvanceUpdate = defineUpdate<{ status: string }, []>('testAdvance');

export const mailStatusQuery = defineQuery<string>('status');
