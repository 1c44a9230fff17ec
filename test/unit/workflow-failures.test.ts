// The one table from a workflow's refusal to the API's error, and the gateway's Update ids.
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, RetryState } from '@temporalio/common';
import {
  MAPPED_FAILURE_TYPES,
  workflowRefusalToApiError,
  workflowUnavailable,
} from '../../domain/shared/workflow-failures';
import { applicationFailureOf, updateIdFor, workflowFailureToApiError } from '../../services/shared/workflow-gateway';
import { MAIL_FAILURE } from '../../workflows/outbound-mail/contracts';
import { BatchFailureType } from '../../workflows/batches/contracts';
import { MAIL_RUN_FAILURE } from '../../workflows/mail-runs/contracts';
import { HANDLING_FAILURES } from '../../workflows/physical-inbound/contracts';

const BILLING = 'https://postal.example/billing#credits';
const refuse = (type: string, details: Record<string, unknown> = {}, message = 'refused') =>
  workflowRefusalToApiError({ type, message, details }, BILLING);

describe('workflow refusal table', () => {
  it('knows every failure type the workflows and their activities raise', () => {
    const raised = [
      ...Object.values(MAIL_FAILURE),
      ...Object.values(BatchFailureType),
      ...Object.values(HANDLING_FAILURES),
      ...Object.values(MAIL_RUN_FAILURE).filter((t) => t !== MAIL_RUN_FAILURE.childUnfunded),
    ];
    for (const type of raised) expect(MAPPED_FAILURE_TYPES).toContain(type);
  });

  it("answers INSUFFICIENT_CREDITS with the spec's 402 fields from credits_required_cents, whichever area refused", () => {
    for (const type of [
      MAIL_FAILURE.insufficientCredits,
      BatchFailureType.insufficientCredits,
      HANDLING_FAILURES.insufficientCredits,
    ]) {
      const err = refuse(type, { credits_required_cents: 1120, credit_balance_cents: 100 });
      expect(err.status).toBe(402);
      expect(err.toBody()).toMatchObject({
        code: 'INSUFFICIENT_CREDITS',
        retryable: false,
        billing_url: BILLING,
        credits_required_cents: 1120,
        credit_balance_cents: 100,
        credit_shortfall_cents: 1020,
      });
    }
  });

  it.each([
    [MAIL_FAILURE.stateConflict, 409, 'MAIL_STATE_CONFLICT'],
    [MAIL_FAILURE.notCancellable, 409, 'MAIL_NOT_CANCELLABLE'],
    [MAIL_FAILURE.notFound, 404, 'NOT_FOUND'],
    [BatchFailureType.notCancellable, 409, 'BATCH_MAIL_NOT_CANCELLABLE'],
    [BatchFailureType.notConfirmable, 409, 'BATCH_MAIL_NOT_CONFIRMABLE'],
    [BatchFailureType.advanceInvalid, 409, 'BATCH_ADVANCE_INVALID'],
    [BatchFailureType.stateConflict, 409, 'BATCH_STATE_CONFLICT'],
    [MAIL_RUN_FAILURE.notCommittable, 409, 'MAIL_RUN_NOT_COMMITTABLE'],
    [MAIL_RUN_FAILURE.notCancellable, 409, 'MAIL_RUN_NOT_CANCELLABLE'],
    [MAIL_RUN_FAILURE.notFound, 404, 'NOT_FOUND'],
    [HANDLING_FAILURES.staleVersion, 409, 'HANDLING_VERSION_STALE'],
    [HANDLING_FAILURES.invalidState, 409, 'HANDLING_STATE_INVALID'],
  ])("maps %s to %i %s with the refusal's message and details", (type, status, code) => {
    const err = refuse(type, { status: 'mailed' }, 'The piece is mailed; cancel is not possible now.');
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    const body = err.toBody();
    expect(body).toMatchObject({ code, retryable: false });
    expect(typeof body.suggested_action).toBe('string');
    if (status === 409)
      expect(body).toMatchObject({
        error: 'The piece is mailed; cancel is not possible now.',
        details: { status: 'mailed' },
      });
  });

  it("turns a spend-limit refusal into the domain refusal's 422 code", () => {
    const err = refuse(MAIL_FAILURE.spendLimit, {
      code: 'DAILY_SPEND_LIMIT_EXCEEDED',
      message: 'Over the daily cap',
      details: { limit_cents: 5000 },
    });
    expect(err.status).toBe(422);
    expect(err.toBody()).toMatchObject({
      code: 'DAILY_SPEND_LIMIT_EXCEEDED',
      error: 'Over the daily cap',
      details: { limit_cents: 5000 },
    });
  });

  it('turns a handling validation refusal into 400 fields[]', () => {
    const err = refuse(HANDLING_FAILURES.invalid, {
      fields: [{ path: 'destructive_confirmed', message: 'must be true' }],
    });
    expect(err.status).toBe(400);
    expect(err.toBody().fields).toEqual([{ path: 'destructive_confirmed', message: 'must be true' }]);
  });

  it('answers an unknown type with a retryable 500 WORKFLOW_ERROR', () => {
    expect(refuse('SOMETHING_NEW').toBody()).toMatchObject({ code: 'WORKFLOW_ERROR', retryable: true });
    expect(workflowRefusalToApiError({ type: undefined, message: 'x', details: {} }, BILLING).status).toBe(500);
  });

  it('answers an unanswered call with 503 WORKFLOW_UNAVAILABLE, retryable, with the deadline and what to do', () => {
    const err = workflowUnavailable(10000);
    expect(err.status).toBe(503);
    expect(err.toBody()).toMatchObject({
      code: 'WORKFLOW_UNAVAILABLE',
      retryable: true,
      details: { deadline_ms: 10000 },
    });
    expect(err.toBody().suggested_action).toMatch(/same Idempotency-Key/);
  });
});

describe('workflow gateway', () => {
  it('finds the refusal inside an Update failure, also when an activity raised it', () => {
    const refusal = ApplicationFailure.create({
      type: BatchFailureType.insufficientCredits,
      message: 'short',
      details: [{ credits_required_cents: 5, credit_balance_cents: 1 }],
    });
    const viaActivity = new ActivityFailure(
      'activity failed',
      'confirmBatch',
      'a1',
      RetryState.NON_RETRYABLE_FAILURE,
      undefined,
      refusal,
    );
    const wrapped = new WorkflowUpdateFailedError('Workflow Update failed', viaActivity);
    expect(applicationFailureOf(wrapped)).toBe(refusal);
    expect(applicationFailureOf(new Error('socket hang up'))).toBeNull();
    const err = workflowFailureToApiError({ config: { siteUrl: 'https://postal.example' } } as never, refusal);
    expect(err.toBody()).toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
      credits_required_cents: 5,
      credit_balance_cents: 1,
      billing_url: BILLING,
    });
  });

  it('derives one Update id per caller, operation and key, and none without a key', () => {
    const a = { ownerKey: 'fkey:1' };
    const b = { ownerKey: 'fkey:2' };
    expect(updateIdFor(a, 'facility.mail.printed', 'k')).toBe(updateIdFor(a, 'facility.mail.printed', 'k'));
    expect(updateIdFor(a, 'facility.mail.printed', 'k')).not.toBe(updateIdFor(b, 'facility.mail.printed', 'k'));
    expect(updateIdFor(a, 'facility.mail.printed', 'k')).not.toBe(updateIdFor(a, 'facility.mail.dispatched', 'k'));
    expect(updateIdFor(a, 'facility.mail.printed', 'k')).not.toBe(updateIdFor(a, 'facility.mail.printed', 'k2'));
    expect(updateIdFor(a, 'facility.mail.printed', undefined)).toBeUndefined();
  });
});
