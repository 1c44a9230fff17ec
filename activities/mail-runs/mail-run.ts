// Side effects of the Business mail run workflow and of its children's workflows: each
// activity is one transition of services/mail-runs/run-transitions.ts.
import { Context } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import {
  cancelMailRun,
  fundMailRun,
  notifyMailRunChildren,
  settleMailRunChild,
} from '../../services/mail-runs/run-transitions';

export function createMailRunActivities(deps: Deps) {
  return {
    fundMailRun: (input: Parameters<typeof fundMailRun>[1]) => fundMailRun(deps, input),
    cancelMailRun: (input: Parameters<typeof cancelMailRun>[1]) => cancelMailRun(deps, input),
    notifyMailRunChildren: (input: Parameters<typeof notifyMailRunChildren>[1]) =>
      notifyMailRunChildren(deps, input, (childId) => Context.current().heartbeat(childId)),
    settleMailRunChild: (input: Parameters<typeof settleMailRunChild>[1]) => settleMailRunChild(deps, input),
  };
}
