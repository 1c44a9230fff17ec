// The activity options of every workflow, by kind of activity: one named set per kind, so
// a workflow's proxyActivities says what its activities are rather than repeating numbers.
// The values are those each workflow has always scheduled its activities with (they are
// recorded in every ScheduleActivityTask); change one only on purpose.
import type { ActivityOptions, LocalActivityOptions, RetryPolicy } from '@temporalio/common';

/** Retry without a limit, from 1 s doubling up to 30 s: outages of Postgres or the store end. */
export const UNLIMITED_RETRY: RetryPolicy = {
  initialInterval: '1 second',
  maximumInterval: '30 seconds',
  backoffCoefficient: 2,
};

/** Retry without a limit, from 1 s doubling up to 1 minute (batches, their rendering, Stripe events). */
export const UNLIMITED_RETRY_UP_TO_A_MINUTE: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
};

/** A short database step (a row change under a lock, an event published) that must happen: retried without a limit. */
export const DATABASE_STEP: ActivityOptions = { startToCloseTimeout: '1 minute', retry: UNLIMITED_RETRY };

/** The same step run as a local activity, inside the workflow task. */
export const LOCAL_DATABASE_STEP: LocalActivityOptions = { startToCloseTimeout: '1 minute', retry: UNLIMITED_RETRY };

/** A batch's database or store step: Postgres or the object store being down must not lose a paid batch. */
export const BATCH_STEP: ActivityOptions = { startToCloseTimeout: '1 minute', retry: UNLIMITED_RETRY_UP_TO_A_MINUTE };

/** Generating one chunk of a batch's pieces (heartbeats per piece). */
export const BATCH_GENERATION: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: UNLIMITED_RETRY_UP_TO_A_MINUTE,
};

/** Rendering a merged batch's documents (heartbeats per document). */
export const BATCH_RENDERING: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: UNLIMITED_RETRY_UP_TO_A_MINUTE,
};

/** Telling a settled mail run's children: many signals, heartbeating as it goes. */
export const MAIL_RUN_NOTIFICATION: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: UNLIMITED_RETRY,
};

/**
 * The print proof: a large document renders for seconds, and an outage that outlasts the
 * retries leaves the piece without a proof rather than its workflow open.
 */
export const PRINT_PROOF: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes', backoffCoefficient: 2, maximumAttempts: 12 },
};

/** OCR of a handling operation's scan. */
export const HANDLING_OCR: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', backoffCoefficient: 2, maximumAttempts: 5 },
};

/** An inbound email's extraction steps. */
export const INBOUND_EXTRACTION: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2, maximumAttempts: 10 },
};

/** OCR runs Tesseract page by page and heartbeats after each page. */
export const INBOUND_OCR: ActivityOptions = {
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '3 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', backoffCoefficient: 2, maximumAttempts: 3 },
};

/**
 * Sending a notification email: a relay outage delays the email, never loses it (retried
 * without a limit); the heartbeat notices a worker that died mid-send within seconds.
 */
export const NOTIFICATION_DELIVERY: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: UNLIMITED_RETRY,
};

/** A reconciler's pass: a few attempts; the next scheduled run tries again. */
export const RECONCILER_PASS: ActivityOptions = { startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 } };

/** The closed-workflow reconciler's pass. */
export const CLOSED_WORKFLOWS_PASS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 3 },
};

/** The payments reconciler's pass. */
export const PAYMENTS_RECONCILE: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', maximumAttempts: 3 },
};

/** A housekeeping deletion (old webhook history, old dry-run proofs), heartbeating as it goes. */
export const HOUSEKEEPING: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
};

/** Charging an auto-reload: retried for up to an hour, then given up. */
export const AUTO_RELOAD_CHARGE: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
};

/** Recording that an auto-reload was given up. */
export const AUTO_RELOAD_GIVE_UP: ActivityOptions = { startToCloseTimeout: '30 seconds', retry: UNLIMITED_RETRY };

/** Applying a Stripe event. */
export const STRIPE_EVENT: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: UNLIMITED_RETRY_UP_TO_A_MINUTE,
};

/** A webhook dispatcher's pass: it stops starting new attempts after its budget (60 s); the last ones take <= 10 s. */
export const WEBHOOK_DISPATCH_PASS: ActivityOptions = {
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '30 seconds',
  retry: UNLIMITED_RETRY,
};

/** Waking the overdue webhook dispatchers. */
export const WEBHOOK_WAKE: ActivityOptions = { startToCloseTimeout: '1 minute', retry: { maximumAttempts: 3 } };

/** One webhook delivery attempt: the receiver has 10 s; DNS, signing and bookkeeping fit easily in the rest. */
export const WEBHOOK_ATTEMPT: ActivityOptions = {
  startToCloseTimeout: '40 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
};
