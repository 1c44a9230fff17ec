// Transitions of handling operations, run by the handling workflow's activities: approve
// (charges a live operation), reject (refunds), accept (asks a live Open & Scan for its
// scan), complete, the sandbox facility that accepts and completes test operations at
// once, and the outcome event. Each locks the operation, applies the move only from the
// expected version, and treats "already applied" as done, so a retried activity is harmless.
import { ApplicationFailure } from '@temporalio/common';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { ApiError } from '../../domain/shared/errors';
import { insufficientCreditsDetails } from '../../domain/shared/workflow-failures';
import {
  checkFacilityDecision,
  HandlingEvent,
  isOpenHandlingStatus,
  itemStatusOnApproval,
  itemStatusOnCompletion,
  nextHandlingStatus,
} from '../../domain/workflow-safe/handling';
import { HANDLING_FAILURES, HandlingSnapshot } from '../../workflows/physical-inbound/contracts';
import { debit, refund } from '../billing/credits';
import { publishEvent } from '../webhooks/events';
import { findOperation } from './handling';
import type { HandlingOperationRow, ScanBundleRow, ScanRequestRow } from './rows';
import { linkFixtureScanRequest, moveHandlingOperation } from './handling-rows';
import { insertHandlingScanRequest, linkFixtureScanToHandling, rejectRequestedScan } from './scan-rows';
import { bumpItem, Db, findItem, ItemRow, recordActivity } from './item-records';
import { addFixtureBundle, loadFixture, uploadFixture } from './sandbox-fixtures';
import { bundleOcrStatus, loadItemBundles } from './scan-bundles';
import { refreshSearchFields } from './search-index';
import { sqlRows } from '../shared/sql';

function fail(type: string, message: string, details: Record<string, unknown> = {}): ApplicationFailure {
  return ApplicationFailure.create({ message, type, details: [details], nonRetryable: true });
}

function snapshot(op: Pick<HandlingOperationRow, 'id' | 'status' | 'version'>): HandlingSnapshot {
  return { id: op.id, status: op.status, version: op.version };
}

type TransitionEffect = (
  tx: EntityManager,
  op: HandlingOperationRow,
  item: ItemRow,
) => Promise<Record<string, unknown>>;

async function transition(
  deps: Deps,
  input: {
    operationId: string;
    expectedVersion: number;
    event: HandlingEvent;
    actor: 'member' | 'facility' | 'system';
  },
  effect: TransitionEffect,
  itemStatus: (op: HandlingOperationRow, item: ItemRow) => string | null,
): Promise<HandlingSnapshot> {
  return deps.db.transaction(async (tx) => {
    const op = await findOperation(tx, input.operationId, { forUpdate: true });
    if (!op) throw fail(HANDLING_FAILURES.invalidState, 'The operation no longer exists.');
    const target = nextHandlingStatus(op.status, input.event, input.actor);
    const wanted =
      input.event === 'approve'
        ? 'awaiting_facility'
        : input.event === 'accept'
          ? 'accepted'
          : input.event === 'complete'
            ? 'completed'
            : 'rejected';
    if (op.status === wanted && op.version === input.expectedVersion + 1) return snapshot(op);
    if (!target)
      throw fail(HANDLING_FAILURES.invalidState, `The operation is ${op.status}; ${input.event} is not possible now.`, {
        status: op.status,
        version: op.version,
      });
    if (op.version !== input.expectedVersion) {
      throw fail(
        HANDLING_FAILURES.staleVersion,
        `The operation is at version ${op.version}; expected_version ${input.expectedVersion} is stale.`,
        { current_version: op.version, expected_version: input.expectedVersion },
      );
    }
    const item = (await findItem(tx, op.item_id, { forUpdate: true }))!;
    const changes = await effect(tx, op, item);
    const updated = await moveHandlingOperation(tx, op.id, target, changes);
    await bumpItem(tx, item.id, itemStatus(updated, item));
    await recordActivity(tx, item, `handling_${target === 'awaiting_facility' ? 'approved' : target}`, {
      operation_id: op.id,
      action_type: op.action_type,
      actor: input.actor,
      version: updated.version,
      ...(changes.rejection_reason ? { reason: changes.rejection_reason } : {}),
      ...(changes.tracking_number ? { tracking_number: changes.tracking_number } : {}),
    });
    return snapshot(updated);
  });
}

export async function approveOperation(
  deps: Deps,
  input: { operationId: string; expectedVersion: number; destructiveConfirmed: boolean },
) {
  return transition(
    deps,
    { ...input, event: 'approve', actor: 'member' },
    async (tx, op, item) => {
      if (op.action_type === 'discard' && !input.destructiveConfirmed) {
        throw fail(HANDLING_FAILURES.invalid, 'discard needs destructive_confirmed true', {
          fields: [{ path: 'destructive_confirmed', message: 'must be true to approve a discard' }],
        });
      }
      if (op.environment === 'live' && op.quote_cents > 0) {
        try {
          await debit(deps, tx, {
            memberId: op.member_id,
            amountCents: op.quote_cents,
            entryKey: `debit:handling:${op.id}`,
            referenceType: 'handling',
            referenceId: op.id,
            description: `Inbound ${op.action_type}`,
          });
        } catch (err) {
          const e = err as ApiError;
          if (e instanceof ApiError && e.status === 402) {
            throw fail(HANDLING_FAILURES.insufficientCredits, e.message, { ...insufficientCreditsDetails(e) });
          }
          throw err;
        }
      }
      const next = itemStatusOnApproval(op.action_type);
      return {
        approved_at: new Date(),
        destructive_confirmed: input.destructiveConfirmed,
        charged_cents: op.environment === 'live' ? op.quote_cents : 0,
        item_status_before: next ? item.status : null,
      };
    },
    (op) => itemStatusOnApproval(op.action_type),
  );
}

export async function rejectOperation(
  deps: Deps,
  input: { operationId: string; expectedVersion: number; actor: 'member' | 'facility' | 'system'; reason: string },
) {
  return transition(
    deps,
    { ...input, event: 'reject' },
    async (tx, op) => {
      const refunded = await refund(tx, {
        memberId: op.member_id,
        amountCents: op.charged_cents - op.refunded_cents,
        entryKey: `refund:handling:${op.id}`,
        referenceType: 'handling',
        referenceId: op.id,
        description: `Inbound ${op.action_type} not carried out`,
      });
      if (op.scan_request_id) {
        await rejectRequestedScan(tx, op.scan_request_id, input.reason);
      }
      return {
        rejected_at: new Date(),
        rejected_by: input.actor,
        rejection_reason: input.reason,
        refunded_cents: op.refunded_cents + refunded,
      };
    },
    (op, item) =>
      op.item_status_before && item.status === itemStatusOnApproval(op.action_type) ? op.item_status_before : null,
  );
}

export async function acceptOperation(
  deps: Deps,
  input: { operationId: string; expectedVersion: number; attestation: string | null },
) {
  return transition(
    deps,
    { ...input, event: 'accept', actor: 'facility' },
    async (tx, op, item) => {
      const changes: Record<string, unknown> = { accepted_at: new Date() };
      if (input.attestation) changes.attestation = input.attestation;
      if (op.action_type === 'open_and_scan' && op.environment === 'live') {
        const request = await insertHandlingScanRequest(tx, item, op);
        changes.scan_request_id = request.id;
        await recordActivity(tx, item, 'scan_requested', {
          scan_request_id: request.id,
          scan_type: 'content',
          operation_id: op.id,
        });
      }
      return changes;
    },
    () => null,
  );
}

export async function completeOperation(
  deps: Deps,
  input: {
    operationId: string;
    expectedVersion: number;
    trackingNumber: string | null;
    attestation: string | null;
    viaScan?: boolean;
  },
) {
  return transition(
    deps,
    { ...input, event: 'complete', actor: 'facility' },
    async (tx, op) => {
      const fields = checkFacilityDecision(op, {
        decision: 'complete',
        tracking_number: input.trackingNumber,
        attestation: input.attestation,
      }).filter((f) => !(input.viaScan && f.path === 'decision'));
      if (fields.length) throw fail(HANDLING_FAILURES.invalid, fields[0].message, { fields });
      if (op.action_type === 'open_and_scan' && op.environment === 'live') {
        const [request] = await sqlRows<Pick<ScanRequestRow, 'status'>>(
          tx,
          `SELECT status FROM scan_requests WHERE id = $1`,
          [op.scan_request_id],
        );
        if (request?.status !== 'fulfilled')
          throw fail(HANDLING_FAILURES.invalidState, 'The scan request of this operation is not fulfilled yet.');
      }
      const changes: Record<string, unknown> = { completed_at: new Date() };
      if (input.trackingNumber) changes.tracking_number = input.trackingNumber;
      if (input.attestation) changes.attestation = input.attestation;
      return changes;
    },
    (op) => itemStatusOnCompletion(op.action_type),
  );
}

/**
 * The sandbox facility: test operations are accepted and completed at once, with a
 * simulated tracking number, a simulated attestation, or (Open & Scan) a new scan of the
 * item's fixture letter pages. Returns the snapshot and the new bundle, if any.
 */
export async function sandboxFulfilOperation(
  deps: Deps,
  input: { operationId: string },
): Promise<{ snapshot: HandlingSnapshot; bundleId: string | null }> {
  const op = await findOperation(deps.db, input.operationId);
  if (!op || op.environment !== 'test')
    throw fail(HANDLING_FAILURES.invalidState, 'Only sandbox operations are fulfilled by the sandbox.');
  const existingBundle = async (db: Db): Promise<string | null> => {
    const [row] = await sqlRows<Pick<ScanBundleRow, 'id'>>(
      db,
      `SELECT b.id FROM scan_requests r JOIN scan_bundles b ON b.request_id = r.id WHERE r.handling_id = $1`,
      [op.id],
    );
    return row?.id ?? null;
  };
  // A retried activity picks up where the last attempt stopped.
  if (op.status === 'completed') return { snapshot: snapshot(op), bundleId: await existingBundle(deps.db) };
  let version = op.version;
  if (op.status === 'awaiting_facility') {
    version = (await acceptOperation(deps, { operationId: op.id, expectedVersion: version, attestation: null }))
      .version;
  }
  let bundleId: string | null = null;
  if (op.action_type === 'open_and_scan') {
    const item = (await findItem(deps.db, op.item_id))!;
    const fixture = loadFixture(item.scenario ?? 'member_sample');
    await uploadFixture(deps, fixture);
    bundleId = await deps.db.transaction(async (tx) => {
      const existing = await existingBundle(tx);
      if (existing) return existing;
      const id = await addFixtureBundle(tx, item, fixture, ['letter'], true);
      await linkFixtureScanToHandling(tx, id, op.id);
      await linkFixtureScanRequest(tx, op.id, id);
      await refreshSearchFields(tx, item.id);
      return id;
    });
  }
  const simulated = {
    trackingNumber:
      op.action_type === 'forward_original' && op.mail_class === 'priority'
        ? `SANDBOX${op.id.replace(/-/g, '').slice(0, 12).toUpperCase()}`
        : null,
    attestation: op.action_type === 'discard' ? 'Sandbox: secure destruction simulated; nothing was destroyed.' : null,
  };
  const done = await completeOperation(deps, {
    operationId: op.id,
    expectedVersion: version,
    ...simulated,
    viaScan: op.action_type === 'open_and_scan',
  });
  return { snapshot: done, bundleId };
}

/** inbound.action_completed or inbound.action_failed once the operation has its outcome. */
export async function publishHandlingOutcome(deps: Deps, operationId: string): Promise<void> {
  const op = await findOperation(deps.db, operationId);
  if (!op || isOpenHandlingStatus(op.status)) return;
  const item = await findItem(deps.db, op.item_id);
  if (!item) return; // the sandbox sample was reset
  const bundles = await loadItemBundles(deps.db, item.id);
  const eventType = op.status === 'completed' ? 'inbound.action_completed' : 'inbound.action_failed';
  await publishEvent(deps, {
    eventKey: `handling:${op.id}:${eventType}`,
    memberId: op.member_id,
    agentId: op.agent_id,
    eventType,
    testMode: op.environment === 'test',
    objectType: 'handling',
    objectId: op.id,
    payload: {
      item_id: item.id,
      agent_id: op.agent_id,
      source_domain: item.source_domain,
      ocr_status: bundles.length ? bundleOcrStatus(bundles[bundles.length - 1]) : null,
    },
  });
}
