// The Business mail run workflow's contract with the API and with its child pieces: its
// id, input, the commit and cancel updates the agent's calls wait for, and the signal
// that tells a child piece's workflow that its run has settled.
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { MailRunPendingReason, MailRunStatusName } from '../../domain/workflow-safe/mail-runs';

export const MAIL_RUN_WORKFLOW = 'mailRunWorkflow';

/** Derived from the run's internal uuid (client-chosen run ids are only unique per member). */
export function mailRunWorkflowId(mailRunUuid: string): string {
  return `mail-run-${mailRunUuid}`;
}

export interface MailRunWorkflowInput {
  /** mail_runs.id */
  mailRunUuid: string;
  /** The client's mail_run_id. */
  mailRunId: string;
  memberId: string;
  agentId: string;
  /** The status in Postgres when the workflow starts (open, or funding_pending after a late start). */
  status: MailRunStatusName;
  /** ISO time the run opened; the window counts from here. */
  openedAt: string;
  /** The window: 300 seconds (tests pass a few). */
  windowSeconds: number;
}

/** ApplicationFailure types of the run workflow and its activities. */
export const MAIL_RUN_FAILURE = {
  notCommittable: 'MAIL_RUN_NOT_COMMITTABLE',
  notCancellable: 'MAIL_RUN_NOT_CANCELLABLE',
  notFound: 'MAIL_RUN_NOT_FOUND',
  childUnfunded: 'MAIL_RUN_CHILD_UNFUNDED',
} as const;

/** What a commit (or the automatic commit at close) did. */
export interface FundMailRunResult {
  status: MailRunStatusName;
  /** The run was funded by an earlier commit: nothing was debited now. */
  alreadyFunded: boolean;
  /** Debited now (the children waiting for funding). */
  chargedCents: number;
  pendingReason: MailRunPendingReason | null;
}

export interface CancelMailRunResult {
  status: 'cancelled';
  alreadyCancelled: boolean;
}

export const commitMailRunUpdate = defineUpdate<FundMailRunResult, []>('commit');
export const cancelMailRunUpdate = defineUpdate<CancelMailRunResult, []>('cancel');

/**
 * Sent to each funding_pending child's workflow once the run is funded, cancelled or
 * closed; the child then reads the outcome from Postgres and moves on.
 */
export const mailRunSettledSignal = defineSignal<[]>('mailRunSettled');
