// The helper that re-raises an activity's business failure (an ApplicationFailure with a type) as the
// workflow's or update's own non-retryable failure, so the API sees its type and maps it
// to the spec's error code. Other failures pass through unchanged.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

export async function call<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
      const c = err.cause;
      throw ApplicationFailure.create({
        message: c.message,
        type: c.type ?? undefined,
        details: c.details as unknown[] | undefined,
        nonRetryable: true,
      });
    }
    throw err;
  }
}
