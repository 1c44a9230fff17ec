// The worker's metrics. The Temporal SDK's own (task slots, poll and schedule latencies,
// activity and workflow outcomes, ...) are exported by its Core runtime on
// WORKER_METRICS_ADDRESS; this module adds a counter of failed activity attempts by
// activity type and failure type, emitted through the same runtime meter and exporter.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, MetricCounter } from '@temporalio/common';
import { ActivityInterceptorsFactory, Runtime } from '@temporalio/worker';

export const ACTIVITY_FAILURES_METRIC = 'postal_activity_failures';

/** What kind of failure an activity attempt ended in: the ApplicationFailure type, else the error's name. */
function failureType(err: unknown): string {
  if (err instanceof ApplicationFailure) return err.type ?? 'ApplicationFailure';
  return err instanceof Error ? err.name : 'unknown';
}

let failures: MetricCounter | undefined;

/**
 * Counts every activity attempt that throws (a retried activity counts once per failed
 * attempt). Tags are named as the SDK's own activity metrics name them (activity_type,
 * task_queue, workflow_type), so the two can be joined in a query.
 */
export const activityFailureMetrics: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        failures ??= Runtime.instance().metricMeter.createCounter(
          ACTIVITY_FAILURES_METRIC,
          'failures',
          'Activity attempts that failed, by activity type and failure type.',
        );
        failures.add(1, {
          activity_type: ctx.info.activityType,
          task_queue: ctx.info.taskQueue,
          workflow_type: ctx.info.workflowType ?? '',
          failure_type: failureType(err),
          non_retryable: String(err instanceof ApplicationFailure && err.nonRetryable),
        });
        throw err;
      }
    },
  },
});
