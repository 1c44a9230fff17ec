// How workflows read an activity's failure. An activity that refuses a business step
// throws an ApplicationFailure with a type (e.g. INSUFFICIENT_CREDITS, or "the object is
// past cancelling"); every other failure is an outage the activity's retry policy covers.
// `call` re-raises the first kind as the workflow's or update's own non-retryable failure,
// so the API sees its type and maps it to the spec's error code; `refusalOf` reads it.
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';

/** Awaits an activity, re-raising its business failure as this workflow's (or update's) own; others pass through. */
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

/** The refusal reason of an activity that refused its step (e.g. found the object past cancelling), or null for other errors. */
export function refusalOf(err: unknown): string | null {
  if (isCancellation(err)) return null;
  let cause: unknown = err;
  for (let depth = 0; cause && depth < 4; depth++) {
    if (cause instanceof ApplicationFailure && cause.type) return cause.message;
    cause = (cause as { cause?: unknown }).cause;
  }
  return null;
}
