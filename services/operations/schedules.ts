// Temporal Schedules that the worker creates (or brings up to date) when it starts:
// reconcilers that start workflows whose start was lost, and the webhook history clean-up.
import { ScheduleAlreadyRunning } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { Deps } from '../shared/deps';

export interface IntervalSchedule {
  scheduleId: string;
  workflowType: string;
  workflowId: string;
  args: unknown[];
  every: Duration;
  catchupWindow: Duration;
  workflowExecutionTimeout?: Duration;
}

/** Creates the schedule, or updates spec and action when it exists; overlapping runs are skipped. */
export async function ensureIntervalSchedule(deps: Deps, s: IntervalSchedule): Promise<string> {
  const spec = { intervals: [{ every: s.every }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: s.workflowType,
    workflowId: s.workflowId,
    taskQueue: deps.config.taskQueue,
    args: s.args,
    ...(s.workflowExecutionTimeout ? { workflowExecutionTimeout: s.workflowExecutionTimeout } : {}),
  };
  try {
    await deps.temporal.schedule.create({
      scheduleId: s.scheduleId,
      spec,
      action,
      policies: { overlap: 'SKIP', catchupWindow: s.catchupWindow },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await deps.temporal.schedule
      .getHandle(s.scheduleId)
      .update((prev) => ({ ...prev, spec, action, policies: { ...prev.policies, overlap: 'SKIP' } }));
  }
  return s.scheduleId;
}
