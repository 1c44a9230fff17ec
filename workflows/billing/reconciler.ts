// Started by the payments reconciler's Schedule: applies what a failed start left behind
// (a recorded Stripe event whose workflow never started, a reload recorded by a debit whose
// workflow start was lost).
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { PaymentsReconcileInput, PaymentsReconcileResult } from './contracts';
import { PAYMENTS_RECONCILE } from '../shared/activity-options';

const { reconcilePaymentsActivity } = proxyActivities<Activities>(PAYMENTS_RECONCILE);

export async function paymentsReconcileWorkflow(input: PaymentsReconcileInput): Promise<PaymentsReconcileResult> {
  return reconcilePaymentsActivity(input);
}
