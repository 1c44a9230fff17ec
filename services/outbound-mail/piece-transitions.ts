// The piece workflow's transitions, one per activity of activities/outbound-mail/mail.ts.
// Each is idempotent: it changes the row only from the status it expects (under a row
// lock), treats "already there" as done, moves money under unique ledger keys
// (debit:mail:<id>, refund:mail:<id>), and publishes the mail.* event after its
// transaction commits (event key mail:<id>:<event_type>, so a retry publishes once).
import { ApplicationFailure } from '@temporalio/common';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { ApiError } from '../../domain/shared/errors';
import { insufficientCreditsDetails } from '../../domain/shared/workflow-failures';
import { balanceCents, debit, lockMemberRowReading, refund } from '../billing/credits';
import { loadMailRow, publishMailEvent } from './record';
import { markCancelled, markPrintingStarted, MailRow, NOW, setFulfilmentColumns, submitApproved } from './rows';
import { spentLast24h } from './safeguards';
import { sandboxPhotoPng } from './sandbox';
import { TRACKED_CLASSES } from '../../domain/outbound-mail/pricing';
import {
  CancellationReason,
  carrierForClass,
  DispatchMethod,
  MailMove,
  MailStatusName,
  mailEventType,
  moveAllowed,
  sandboxTrackingNumber,
  spendRefusal,
} from '../../domain/workflow-safe/mail-rules';
import { ApproveResult, CancelResult, MAIL_FAILURE, PhotoRef } from '../../workflows/outbound-mail/contracts';
import { sqlRows, sqlRun } from '../shared/sql';

function fail(type: string, message: string, details?: Record<string, unknown>): ApplicationFailure {
  return ApplicationFailure.create({ message, type, details: details ? [details] : undefined, nonRetryable: true });
}

async function lockRow(tx: EntityManager, id: string): Promise<MailRow> {
  const row = await loadMailRow(tx, id, { forUpdate: true });
  if (!row) throw fail(MAIL_FAILURE.notFound, `Outbound mail ${id} not found`);
  return row;
}

/**
 * A facility's step applies only to a piece still assigned to it (or to none yet), checked
 * under the row lock: an operator may have moved the piece after the facility looked it up.
 */
function assertFacilityOwns(row: MailRow, facilityId: string | null): void {
  if (facilityId && row.facility_id && row.facility_id !== facilityId) {
    throw fail(MAIL_FAILURE.notFound, `Outbound mail ${row.id} is assigned to another facility`);
  }
}

/** What was actually debited for the piece (0 in the sandbox or before approval). */
async function debitedCents(db: Pick<EntityManager, 'query'>, id: string): Promise<number> {
  const [row] = await sqlRows<{ cents: number }>(
    db,
    `SELECT -amount_cents AS cents FROM credits_ledger WHERE entry_key = $1`,
    [`debit:mail:${id}`],
  );
  return row ? Number(row.cents) : 0;
}

async function insertPhotos(tx: EntityManager, id: string, photos: PhotoRef[]): Promise<void> {
  for (const p of photos) {
    await sqlRun(
      tx,
      `INSERT INTO outbound_mail_photos (outbound_mail_id, category, storage_key, content_type) VALUES ($1, $2, $3, $4)
       ON CONFLICT (storage_key) DO NOTHING`,
      [id, p.category, p.storageKey, p.contentType],
    );
  }
}

interface Transition {
  outboundMailId: string;
  move: MailMove;
  to: MailStatusName;
  facilityId: string | null;
  /** Columns to set (names come from this module, never from callers). */
  set: Record<string, unknown>;
  photos?: PhotoRef[];
  /** A facility failure before mailing returns the debit (refund:mail:<id>). */
  refundDebit?: boolean;
}

/** Moves the row to `to` from a status the move allows, then publishes mail.<to>. */
async function transition(deps: Deps, t: Transition): Promise<void> {
  const row = await deps.db.transaction(async (tx) => {
    const current = await lockRow(tx, t.outboundMailId);
    assertFacilityOwns(current, t.facilityId);
    if (current.status === t.to) return current;
    if (!moveAllowed(t.move, current.status)) {
      throw fail(MAIL_FAILURE.stateConflict, `The piece is ${current.status}; ${t.move} is not possible now.`, {
        status: current.status,
      });
    }
    const updated = await setFulfilmentColumns(tx, t.outboundMailId, {
      ...t.set,
      status: t.to,
      facility_id: current.facility_id ?? t.facilityId,
    });
    await insertPhotos(tx, t.outboundMailId, t.photos ?? []);
    if (t.refundDebit) {
      await refund(tx, {
        memberId: current.member_id,
        amountCents: await debitedCents(tx, current.id),
        entryKey: `refund:mail:${current.id}`,
        referenceType: 'outbound_mail',
        referenceId: current.id,
        description: `Refund: outbound mail ${current.id} failed before mailing`,
      });
    }
    return updated;
  });
  await publishMailEvent(deps, row, mailEventType(t.to));
}

/** Publishes the event of the status the piece was created in (mail.submitted or mail.pending_approval). */
export async function announceMail(
  deps: Deps,
  input: { outboundMailId: string; status: 'pending_approval' | 'submitted' },
): Promise<void> {
  const row = await loadMailRow(deps.db, input.outboundMailId);
  if (!row) throw fail(MAIL_FAILURE.notFound, `Outbound mail ${input.outboundMailId} not found`);
  await publishMailEvent(deps, row, mailEventType(input.status));
}

/** The owner's approval: checks the spend limits, debits now, and submits the piece. */
export async function approveMail(deps: Deps, input: { outboundMailId: string }): Promise<ApproveResult> {
  const outcome = await deps.db.transaction(async (tx) => {
    const row = await lockRow(tx, input.outboundMailId);
    if (row.status === 'submitted' && row.approved_at) {
      return {
        row,
        published: true,
        result: {
          creditsChargedCents: await debitedCents(tx, row.id),
          balanceCents: row.test_mode ? null : await balanceCents(tx, row.member_id),
        },
      };
    }
    if (row.status !== 'pending_approval')
      throw fail(MAIL_FAILURE.stateConflict, `The piece is ${row.status}; only pending pieces can be approved.`, {
        status: row.status,
      });
    let balance: number | null = null;
    if (!row.test_mode) {
      const { lock, member } = await lockMemberRowReading<{
        per_transaction_limit_cents: number | null;
        daily_spend_limit_cents: number | null;
      }>(tx, row.member_id, ['per_transaction_limit_cents', 'daily_spend_limit_cents']);
      if (!member) throw fail(MAIL_FAILURE.notFound, `The piece's member ${row.member_id} no longer exists.`);
      const refusal = spendRefusal({
        costCents: row.price_cents,
        maxCostCents: null,
        perTransactionLimitCents: member.per_transaction_limit_cents,
        dailySpendLimitCents: member.daily_spend_limit_cents,
        spentLast24hCents: await spentLast24h(tx, row.member_id),
        live: true,
      });
      if (refusal) throw fail(MAIL_FAILURE.spendLimit, refusal.message, refusal as unknown as Record<string, unknown>);
      try {
        const debited = await debit(
          deps,
          tx,
          {
            memberId: row.member_id,
            amountCents: row.price_cents,
            entryKey: `debit:mail:${row.id}`,
            referenceType: 'outbound_mail',
            referenceId: row.id,
            description: `Outbound mail ${row.id} (${row.mail_class}, approved)`,
          },
          { memberLock: lock },
        );
        balance = debited.balanceCents;
      } catch (err) {
        if (err instanceof ApiError && err.code === 'INSUFFICIENT_CREDITS') {
          throw fail(MAIL_FAILURE.insufficientCredits, err.message, { ...insufficientCreditsDetails(err) });
        }
        throw err;
      }
    }
    const updated = await submitApproved(tx, row.id, row.test_mode ? 0 : row.price_cents);
    return {
      row: updated,
      published: false,
      result: { creditsChargedCents: row.test_mode ? 0 : row.price_cents, balanceCents: balance },
    };
  });
  await publishMailEvent(deps, outcome.row, 'mail.submitted');
  return outcome.result;
}

/**
 * Cancels a piece (caller's DELETE, owner's rejection or approval timeout) and refunds
 * what was debited, once. `requestId` identifies this cancellation, so a retry of it
 * answers as the first attempt did while a later cancel answers already_cancelled.
 */
export async function cancelMail(
  deps: Deps,
  input: {
    outboundMailId: string;
    reason: CancellationReason;
    requestId: string;
  },
): Promise<CancelResult> {
  const outcome = await deps.db.transaction(async (tx) => {
    const row = await lockRow(tx, input.outboundMailId);
    const balance = async () => (row.test_mode ? null : balanceCents(tx, row.member_id));
    if (row.status === 'cancelled') {
      const mine = row.cancel_request_id === input.requestId;
      const [refunded] = mine
        ? await sqlRows<{ amount_cents: number }>(tx, `SELECT amount_cents FROM credits_ledger WHERE entry_key = $1`, [
            `refund:mail:${row.id}`,
          ])
        : [];
      return {
        row,
        result: {
          refundedCents: refunded ? Number(refunded.amount_cents) : 0,
          alreadyCancelled: !mine,
          balanceCents: await balance(),
        },
      };
    }
    // A run child waiting for funding may be cancelled by its sender; if its run's funding already debited it, that debit is refunded below.
    // An operator cancels what the sender could (CLI, or Request Cancellation in the Temporal UI).
    const bySender = input.reason === 'cancelled_by_caller' || input.reason === 'cancelled_by_operator';
    const allowed = bySender
      ? row.status === 'pending_approval' ||
        row.status === 'funding_pending' ||
        (row.status === 'submitted' && !row.printing_started_at)
      : row.status === 'pending_approval';
    if (!allowed) {
      const why = row.status === 'submitted' ? 'printing has started' : `it is ${row.status}`;
      throw fail(
        bySender ? MAIL_FAILURE.notCancellable : MAIL_FAILURE.stateConflict,
        `The piece can no longer be cancelled: ${why}.`,
        { status: row.status },
      );
    }
    const updated = await markCancelled(tx, row.id, input.reason, input.requestId);
    const refundedCents = await refund(tx, {
      memberId: row.member_id,
      amountCents: await debitedCents(tx, row.id),
      entryKey: `refund:mail:${row.id}`,
      referenceType: 'outbound_mail',
      referenceId: row.id,
      description: `Refund: outbound mail ${row.id} cancelled`,
    });
    return { row: updated, result: { refundedCents, alreadyCancelled: false, balanceCents: await balance() } };
  });
  if (outcome.row.status === 'cancelled') await publishMailEvent(deps, outcome.row, 'mail.cancelled');
  return outcome.result;
}

/** The facility claims the piece for printing; from now on it cannot be cancelled. */
export async function startPrinting(deps: Deps, input: { outboundMailId: string; facilityId: string }): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const row = await lockRow(tx, input.outboundMailId);
    assertFacilityOwns(row, input.facilityId);
    if (row.status === 'submitted' && row.printing_started_at) return;
    if (row.status !== 'submitted')
      throw fail(MAIL_FAILURE.stateConflict, `The piece is ${row.status}; printing cannot start.`, {
        status: row.status,
      });
    await markPrintingStarted(tx, row.id, input.facilityId);
  });
}

export async function markPrinted(
  deps: Deps,
  input: { outboundMailId: string; facilityId: string | null; photos: PhotoRef[] },
): Promise<void> {
  await transition(deps, {
    outboundMailId: input.outboundMailId,
    move: 'printed',
    to: 'ready',
    facilityId: input.facilityId,
    photos: input.photos,
    set: { ready_at: NOW, printing_started_at: NOW },
  });
}

export async function markDispatched(
  deps: Deps,
  input: {
    outboundMailId: string;
    facilityId: string | null;
    carrier: string;
    trackingNumber: string | null;
    dispatchMethod: DispatchMethod;
    photos: PhotoRef[];
  },
): Promise<void> {
  await transition(deps, {
    outboundMailId: input.outboundMailId,
    move: 'dispatched',
    to: 'mailed',
    facilityId: input.facilityId,
    photos: input.photos,
    set: {
      mailed_at: NOW,
      carrier: input.carrier,
      tracking_number: input.trackingNumber,
      dispatch_method: input.dispatchMethod,
    },
  });
}

export async function markDelivered(
  deps: Deps,
  input: {
    outboundMailId: string;
    facilityId: string | null;
    photos: PhotoRef[];
  },
): Promise<void> {
  await transition(deps, {
    outboundMailId: input.outboundMailId,
    move: 'delivered',
    to: 'delivered',
    facilityId: input.facilityId,
    photos: input.photos,
    set: { delivered_at: NOW },
  });
}

/** The facility could not print or dispatch the piece: failed, and the debit is refunded. */
export async function markFailed(
  deps: Deps,
  input: { outboundMailId: string; facilityId: string | null; message: string },
): Promise<void> {
  await transition(deps, {
    outboundMailId: input.outboundMailId,
    move: 'failed',
    to: 'failed',
    facilityId: input.facilityId,
    refundDebit: true,
    set: { failed_at: NOW, error_message: input.message },
  });
}

/** A mailed, tracked piece whose carrier delivery failed: failed, postage spent, no refund. */
export async function markCarrierDeliveryFailed(
  deps: Deps,
  input: {
    outboundMailId: string;
    facilityId: string | null;
    message: string | null;
  },
): Promise<void> {
  await transition(deps, {
    outboundMailId: input.outboundMailId,
    move: 'carrierDeliveryFailed',
    to: 'failed',
    facilityId: input.facilityId,
    set: {
      failed_at: NOW,
      error_message: input.message ?? 'The carrier reported that delivery failed.',
      carrier_delivery_failed: true,
      failure_stage: 'carrier_delivery',
      failure_source: 'carrierx_tracking',
    },
  });
}

/**
 * Sandbox fulfillment: uploads simulated (real PNG) photos for a step under fixed keys
 * and picks the carrier details, so a retried step produces the same result.
 */
export async function simulateFulfillment(
  deps: Deps,
  input: { outboundMailId: string; step: 'printed' | 'dispatched' | 'delivered' },
) {
  const row = await loadMailRow(deps.db, input.outboundMailId);
  if (!row) throw fail(MAIL_FAILURE.notFound, `Outbound mail ${input.outboundMailId} not found`);
  const categories =
    input.step === 'printed'
      ? (['pages', 'envelope'] as const)
      : input.step === 'dispatched'
        ? (['receipt'] as const)
        : (['delivery'] as const);
  const photos: PhotoRef[] = [];
  for (const category of categories) {
    const storageKey = `mail/${row.id}/photos/sandbox-${category}.png`;
    await deps.storage.put(storageKey, sandboxPhotoPng(category, row.id), 'image/png');
    photos.push({ category, storageKey, contentType: 'image/png' });
  }
  const tracked = (TRACKED_CLASSES as readonly string[]).includes(row.mail_class);
  return {
    photos,
    carrier: carrierForClass(row.mail_class),
    trackingNumber: tracked ? sandboxTrackingNumber(row.id, row.mail_class) : null,
    dispatchMethod: (row.mail_class.startsWith('carrier') ? 'carrier_pickup' : 'post_office_counter') as DispatchMethod,
  };
}
