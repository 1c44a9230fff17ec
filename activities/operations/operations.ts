// Activities that serve operators rather than one business area: recording a workflow
// incident, and the reconciler of workflows that closed while their record stayed open.
import type { Deps } from '../../services/shared/deps';
import { IncidentInput, recordIncident } from '../../services/operations/workflow-incidents';
import { reconcileClosedWorkflows } from '../../services/operations/workflow-reconciler';

export function createOperationsActivities(deps: Deps) {
  return {
    async recordWorkflowIncident(input: IncidentInput): Promise<void> {
      await recordIncident(deps, input);
    },
    reconcileClosedWorkflows: async (input: { lookbackHours: number }) =>
      (await reconcileClosedWorkflows(deps, input)).length,
  };
}
