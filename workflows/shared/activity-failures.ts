// The retry policy of the workflows' database and store activities, and the helper that
// re-raises an activity's business failure (an ApplicationFailure with a type) as the
// workflow's or update's own non-retryable failure, so the API sees its type and maps it
// to the spec's error code. Other failures pass through unchanged.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';

/** Retry without a limit, from 1 s doubling up to 30 s: outages of Postgres or the store end. */
export const UNLIMITED_RETRY: RetryPolicy = {
  initialInterval: '1 second',
  maximumInterval: '30 seconds',
  backoffCoefficient: 2,
};

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
