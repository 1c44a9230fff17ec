// Side effects of the piece workflow: each activity is one transition of
// services/outbound-mail/piece-transitions.ts (idempotent, publishing its mail.* event
// after the commit), plus the reconciler's start of unstarted workflows.
import type { Deps } from '../../services/shared/deps';
import {
  announceMail,
  approveMail,
  cancelMail,
  markCarrierDeliveryFailed,
  markDelivered,
  markDispatched,
  markFailed,
  markPrinted,
  simulateFulfillment,
  startPrinting,
} from '../../services/outbound-mail/piece-transitions';
import { reconcileUnstartedMail } from '../../services/operations/workflow-reconciler';
import type { ReconcileOutboundMailInput } from '../../workflows/outbound-mail/contracts';

export function createMailActivities(deps: Deps) {
  return {
    announceMail: (input: Parameters<typeof announceMail>[1]) => announceMail(deps, input),
    approveMail: (input: Parameters<typeof approveMail>[1]) => approveMail(deps, input),
    cancelMail: (input: Parameters<typeof cancelMail>[1]) => cancelMail(deps, input),
    startPrinting: (input: Parameters<typeof startPrinting>[1]) => startPrinting(deps, input),
    markPrinted: (input: Parameters<typeof markPrinted>[1]) => markPrinted(deps, input),
    markDispatched: (input: Parameters<typeof markDispatched>[1]) => markDispatched(deps, input),
    markDelivered: (input: Parameters<typeof markDelivered>[1]) => markDelivered(deps, input),
    markFailed: (input: Parameters<typeof markFailed>[1]) => markFailed(deps, input),
    markCarrierDeliveryFailed: (input: Parameters<typeof markCarrierDeliveryFailed>[1]) =>
      markCarrierDeliveryFailed(deps, input),
    simulateFulfillment: (input: Parameters<typeof simulateFulfillment>[1]) => simulateFulfillment(deps, input),
    /** Starts the workflow of every piece committed more than graceSeconds ago without one. */
    async reconcileUnstartedMail(input: ReconcileOutboundMailInput): Promise<number> {
      return (await reconcileUnstartedMail(deps, input)).length;
    },
  };
}
