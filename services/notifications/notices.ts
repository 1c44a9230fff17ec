// Recording what an owner is told. A notice becomes one `notifications` row per recipient
// that wants its kind, inside the caller's transaction (unique per event, recipient and
// kind: recording it again is a no-op), so the notice commits with the change it reports
// or not at all. After that transaction commits, the member's notifier workflow is woken
// (a TypeORM transaction subscriber, installed on every process's data source by
// createDeps); a wake-up lost to a crash is repaired by the reconciler, which wakes the
// notifiers of rows nobody has seen.
//
// Business events reach here from one place, publishEvent (services/webhooks/events.ts);
// facts that are not events (a debit crossing the low-balance threshold, a refusal for
// credits, a purchase, an endpoint paused, a handling proposal) from where they happen.
import type { DataSource, EntityManager, EntitySubscriberInterface } from 'typeorm';
import type { TransactionCommitEvent } from 'typeorm/subscriber/event/TransactionCommitEvent';
import type { TransactionRollbackEvent } from 'typeorm/subscriber/event/TransactionRollbackEvent';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError } from '../../domain/shared/errors';
import {
  creditsRefusedEventKey,
  crossedBelow,
  DEFAULT_LOW_BALANCE_THRESHOLD_CENTS,
  Notice,
  noticeForEvent,
  PublishedEventFacts,
} from '../../domain/notifications/kinds';
import {
  OWNER_NOTIFIER_WORKFLOW,
  ownerNotifierWorkflowId,
  OwnerNotifierInput,
  wakeNotifierSignal,
} from '../../workflows/notifications/contracts';
import { MemberId } from '../../workflows/shared/search-attributes';
import { sqlRows, sqlRun } from '../shared/sql';
import { insertNoticeRows } from './notification-rows';
import { clearNotifierWake, requestNotifierWake } from './notifier-rows';
import { ensureOwnerRecipient } from './recipient-rows';

type Tx = Pick<EntityManager, 'query' | 'queryRunner'>;

/** A publisher signals only when no wake-up is pending, or the pending one is older than this. */
const WAKE_REFRESH_SECONDS = 30;
/** Where a transaction keeps the members whose notifiers to wake once it commits. */
const WAKE_KEY = 'ownerNotifierWakeUps';

/**
 * Records the notice for its recipients in `tx` (which must be a transaction) and arranges
 * the notifier's wake-up for after the commit. Returns how many rows were new.
 * `recipient`: 'owner' (account emails to the member's own address, whatever its
 * preferences), a recipient id (only that one, confirmed or not), or every confirmed
 * recipient with the kind on (the default).
 */
export async function recordNotice(tx: Tx, notice: Notice, recipient?: 'owner'): Promise<number> {
  const runner = tx.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('recordNotice needs a transaction (use notifyOwner)');
  // The owner's recipient row is made on first use: every member has one from then on. Its own
  // statement: a concurrent first notice's insert is waited for here, and the next statement's
  // snapshot sees the row.
  await ensureOwnerRecipient(tx, notice.memberId);
  const rows = await insertNoticeRows(
    tx,
    notice.memberId,
    notice.kind,
    notice.eventKey,
    JSON.stringify(notice.payload),
    recipient ?? notice.recipientId ?? null,
  );
  if (rows.length) {
    const pending = (runner.data[WAKE_KEY] ??= new Set<string>()) as Set<string>;
    pending.add(notice.memberId);
  }
  return rows.length;
}

/** recordNotice in a transaction of its own (the notifier is woken when it commits). */
export async function notifyOwner(deps: Pick<Deps, 'db'>, notice: Notice, recipient?: 'owner'): Promise<number> {
  return deps.db.transaction((tx) => recordNotice(tx, notice, recipient));
}

/** Signals (starting it if needed) the member's notifier, whatever the wake-up flag says. */
export async function signalNotifier(deps: Deps, memberId: string): Promise<void> {
  const input: OwnerNotifierInput = {
    memberId,
    digestWindowSeconds: deps.config.notifications.digestWindowSeconds,
  };
  await deps.temporal.workflow.signalWithStart(OWNER_NOTIFIER_WORKFLOW, {
    taskQueue: deps.config.taskQueue,
    workflowId: ownerNotifierWorkflowId(deps.config.taskQueue, memberId),
    args: [input],
    signal: wakeNotifierSignal,
    signalArgs: [],
    typedSearchAttributes: [{ key: MemberId, value: memberId }],
  });
}

/** Wakes the member's notifier unless a wake-up is already on its way. */
export async function wakeNotifier(deps: Deps, memberId: string): Promise<void> {
  const claimed = await requestNotifierWake(deps.db, memberId, WAKE_REFRESH_SECONDS);
  if (!claimed.length) return;
  try {
    await signalNotifier(deps, memberId);
  } catch (err) {
    // Let the next notice (or the reconciler) signal again.
    await clearNotifierWake(deps.db, memberId).catch(() => undefined);
    throw err;
  }
}

/**
 * Wakes the notifiers a transaction recorded notices for, once it has committed (not
 * awaited by the committing caller: a Temporal outage delays the email, never the request).
 */
class NotifierWakeUps implements EntitySubscriberInterface {
  constructor(private readonly deps: Deps) {}

  afterTransactionCommit(event: TransactionCommitEvent): void {
    // A savepoint's release is not the commit.
    if (event.queryRunner.isTransactionActive) return;
    const members = event.queryRunner.data[WAKE_KEY] as Set<string> | undefined;
    if (!members) return;
    delete event.queryRunner.data[WAKE_KEY];
    for (const memberId of members) {
      wakeNotifier(this.deps, memberId).catch((err) =>
        this.deps.log.warn({ err, member_id: memberId }, 'waking the owner notifier failed; the reconciler will'),
      );
    }
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) delete event.queryRunner.data[WAKE_KEY];
  }
}

/** Installs the after-commit wake-ups on the process's data source (createDeps does, once). */
export function installNotifierWakeUps(deps: Deps): void {
  const db: DataSource = deps.db;
  if (db.subscribers.some((s) => s instanceof NotifierWakeUps)) return;
  db.subscribers.push(new NotifierWakeUps(deps));
}

// ---------------------------------------------------------------------------------------
// Where notices come from.

async function agentName(db: Pick<EntityManager, 'query'>, agentId: string | null): Promise<string | null> {
  if (!agentId) return null;
  const [a] = await sqlRows<{ name: string }>(
    db,
    `SELECT COALESCE(display_name, name) AS name FROM agents WHERE id = $1`,
    [agentId],
  );
  return a?.name ?? null;
}

/**
 * The owner notice of a published business event, if it is one owners are told of
 * (publishEvent calls this for every event; most need no query at all).
 */
export async function noticeOfEvent(deps: Deps, e: PublishedEventFacts & { agentId: string | null }): Promise<void> {
  if (!noticeForEvent(e, null)) return;
  const notice = noticeForEvent(e, await agentName(deps.db, e.agentId));
  if (notice) await notifyOwner(deps, notice);
}

/**
 * A live submission refused with 402: the owner is told, at most once an hour (none was
 * recorded in the last hour; concurrent refusals share the key of the member and the clock
 * hour). Never throws: the caller's 402 is the answer.
 */
export async function noteCreditsRefused(
  deps: Deps,
  auth: AuthContext,
  err: unknown,
  what: 'letter' | 'batch',
): Promise<void> {
  if (!(err instanceof ApiError) || err.code !== 'INSUFFICIENT_CREDITS' || auth.testMode || !auth.memberId) return;
  const body = err.toBody();
  try {
    // Once an hour, counted from the last one told (the key's clock hour only settles a race).
    const [recent] = await sqlRows<{ '?column?': number }>(
      deps.db,
      `SELECT 1 FROM notifications WHERE member_id = $1 AND kind = 'credits_refused' AND created_at > now() - interval '1 hour' LIMIT 1`,
      [auth.memberId],
    );
    if (recent) return;
    await notifyOwner(deps, {
      memberId: auth.memberId,
      kind: 'credits_refused',
      eventKey: creditsRefusedEventKey(auth.memberId, new Date()),
      payload: {
        what,
        required_cents: Number(body.credits_required_cents ?? 0),
        balance_cents: Number(body.credit_balance_cents ?? 0),
        agent_name: await agentName(deps.db, auth.agentId),
      },
    });
  } catch (e) {
    deps.log.warn({ err: e, member_id: auth.memberId }, 'recording the credits-refused notice failed');
  }
}

/**
 * A debit took the balance from at or above the member's threshold to below it: recorded
 * in the debit's transaction, keyed by the debit's ledger entry (once per crossing).
 */
export async function noteLowBalance(
  tx: Tx,
  m: { memberId: string; entryKey: string; before: number; after: number },
): Promise<void> {
  const [settings] = await sqlRows<{ low_balance_threshold_cents: number }>(
    tx,
    `SELECT low_balance_threshold_cents FROM notification_settings WHERE member_id = $1`,
    [m.memberId],
  );
  const threshold = settings ? Number(settings.low_balance_threshold_cents) : DEFAULT_LOW_BALANCE_THRESHOLD_CENTS;
  if (!crossedBelow(m.before, m.after, threshold)) return;
  await recordNotice(tx, {
    memberId: m.memberId,
    kind: 'low_balance',
    eventKey: `low-balance:${m.entryKey}`,
    payload: { balance_cents: m.after, threshold_cents: threshold },
  });
}

/** Credits bought, refunded or disputed (services/billing/payments.ts), in the ledger entry's transaction and under its key. */
export async function noteCreditsMovement(
  tx: Tx,
  purchase: { id: string; member_id: string },
  movement: 'bought' | 'refunded' | 'dispute_opened' | 'dispute_won',
  amountCents: number,
  entryKey: string,
): Promise<void> {
  await recordNotice(tx, {
    memberId: purchase.member_id,
    kind: 'credits',
    eventKey: entryKey,
    payload: { movement, amount_cents: amountCents, purchase_id: purchase.id },
  });
}

/** An agent's handling proposal waits for the owner (services/physical-inbound/handling.ts), in its transaction. */
export async function noteHandlingProposal(
  tx: Tx,
  op: {
    id: string;
    member_id: string;
    agent_id: string | null;
    item_id: string;
    action_type: string;
    quote_cents: number;
  },
): Promise<void> {
  await recordNotice(tx, {
    memberId: op.member_id,
    kind: 'handling_proposal',
    eventKey: `handling:${op.id}:proposed`,
    payload: {
      operation_id: op.id,
      item_id: op.item_id,
      action_type: op.action_type,
      quote_cents: op.quote_cents,
      agent_name: await agentName(tx, op.agent_id),
    },
  });
}

/**
 * Consecutive failures paused a custom webhook endpoint (services/webhooks/deliveries.ts),
 * in the transaction of the attempt that paused it; `attemptKey` names that attempt.
 */
export async function noteEndpointPaused(
  tx: Tx,
  e: { endpointId: string; memberId: string; attemptKey: string; failures: number; lastError: string | null },
): Promise<void> {
  const [endpoint] = await sqlRows<{ url: string; environment: string }>(
    tx,
    `SELECT url, environment FROM webhook_endpoints WHERE id = $1`,
    [e.endpointId],
  );
  await recordNotice(tx, {
    memberId: e.memberId,
    kind: 'endpoint_paused',
    eventKey: `webhook-endpoint:${e.endpointId}:paused:${e.attemptKey}`,
    payload: {
      endpoint_id: e.endpointId,
      url: endpoint?.url ?? null,
      environment: endpoint?.environment ?? null,
      failures: e.failures,
      last_error: e.lastError ? e.lastError.slice(0, 300) : null,
    },
  });
}
