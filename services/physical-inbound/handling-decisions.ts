// Decisions on handling operations: the owner's (member keys list, approve or reject an
// agent's proposal), the facility's (accept, complete or reject, sent as an Update once
// per Idempotency-Key), and the sandbox's reset of the member sample, which closes its
// open operations first. Each decision is an Update to the operation's workflow.
import { pagination } from '../../domain/shared/pagination';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, errors } from '../../domain/shared/errors';
import { handlingStateInvalid } from '../../domain/shared/workflow-failures';
import { updateIdFor } from '../shared/workflow-gateway';
import { hasVisibleCharacter } from '../../domain/workflow-safe/visible-text';
import {
  checkFacilityDecision,
  FacilityDecisionInput,
  HandlingStatus,
  nextHandlingStatus,
} from '../../domain/workflow-safe/handling';
import {
  acceptHandlingUpdate,
  approveHandlingUpdate,
  completeHandlingUpdate,
  handlingWorkflowId,
  rejectHandlingUpdate,
} from '../../workflows/physical-inbound/contracts';
import { assertVersion, findOperation, operationView, sendUpdate } from './handling';
import type { HandlingOperationRow } from './rows';
import { loadManagedItem, managedItemViews } from './inbound-items';
import { deleteMemberSample, environmentOf, findItem } from './item-records';
import { ensureMemberSample } from './sandbox-fixtures';
import { sqlRows } from '../shared/sql';

// ---------------------------------------------------------------------------------------
// Owner (member keys)

async function loadMemberOperation(deps: Deps, auth: AuthContext, id: string): Promise<HandlingOperationRow> {
  const op = await findOperation(deps.db, id);
  if (!op || op.member_id !== auth.memberId || op.environment !== environmentOf(auth))
    throw errors.notFound('Handling operation');
  return op;
}

export async function listMemberHandling(
  deps: Deps,
  auth: AuthContext,
  query: { status?: HandlingStatus; item_id?: string; limit: number; offset: number },
) {
  const params: unknown[] = [auth.memberId, environmentOf(auth)];
  const where = ['member_id = $1', 'environment = $2'];
  if (query.status) {
    params.push(query.status);
    where.push(`status = $${params.length}`);
  }
  if (query.item_id) {
    params.push(query.item_id);
    where.push(`item_id = $${params.length}`);
  }
  params.push(query.limit, query.offset);
  const rows = await sqlRows<HandlingOperationRow & { total: string }>(
    deps.db,
    `SELECT *, count(*) OVER () AS total FROM handling_operations WHERE ${where.join(' AND ')}
      ORDER BY created_at DESC, id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  const total = rows.length ? Number(rows[0].total) : 0;
  return {
    operations: rows.map(operationView),
    pagination: pagination(total, query.limit, query.offset),
  };
}

export async function getHandlingOperation(deps: Deps, auth: AuthContext, id: string) {
  return { operation: operationView(await loadMemberOperation(deps, auth, id)) };
}

export async function approveHandling(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: { expected_version: number; destructive_confirmed?: boolean },
) {
  const op = await loadMemberOperation(deps, auth, id);
  if (op.action_type === 'discard' && body.destructive_confirmed !== true) {
    throw errors.validation([
      {
        path: 'destructive_confirmed',
        message: 'discard destroys the item: the owner must send destructive_confirmed true',
      },
    ]);
  }
  if (op.status !== 'awaiting_member_approval')
    throw handlingStateInvalid(`The operation is ${op.status}; only awaiting_member_approval can be approved.`);
  assertVersion(op.version, body.expected_version, 'The operation');
  const updated = await sendUpdate(deps, op, approveHandlingUpdate, {
    expectedVersion: body.expected_version,
    destructiveConfirmed: body.destructive_confirmed === true,
  });
  return { operation: operationView(updated) };
}

export async function rejectHandling(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: { expected_version: number; reason?: string },
) {
  const op = await loadMemberOperation(deps, auth, id);
  if (op.status !== 'awaiting_member_approval')
    throw handlingStateInvalid(`The operation is ${op.status}; the owner can reject only while approval is pending.`);
  assertVersion(op.version, body.expected_version, 'The operation');
  const updated = await sendUpdate(deps, op, rejectHandlingUpdate, {
    expectedVersion: body.expected_version,
    actor: 'member',
    reason: hasVisibleCharacter(body.reason ?? '') ? body.reason!.trim() : 'rejected_by_owner',
  });
  return { operation: operationView(updated) };
}

// ---------------------------------------------------------------------------------------
// Facility: GET /v1/facility/internal-inbound/handling, POST .../{id}/decision

export async function listFacilityHandling(
  deps: Deps,
  auth: AuthContext,
  query: { status?: HandlingStatus; limit: number; offset: number },
) {
  const statuses = query.status ? [query.status] : ['awaiting_facility', 'accepted'];
  const rows = await sqlRows<
    HandlingOperationRow & {
      reference_code: string;
      kind: string;
      mailbox_id: string | null;
      item_status: string;
      total: string;
    }
  >(
    deps.db,
    `SELECT o.*, i.reference_code, i.kind, i.mailbox_id, i.status AS item_status, count(*) OVER () AS total
       FROM handling_operations o JOIN physical_inbound_items i ON i.id = o.item_id
      WHERE o.facility_id = $1 AND o.environment = 'live' AND o.status = ANY($2::text[])
      ORDER BY o.updated_at, o.id LIMIT $3 OFFSET $4`,
    [auth.facilityId, statuses, query.limit, query.offset],
  );
  const total = rows.length ? Number(rows[0].total) : 0;
  return {
    operations: rows.map((r) => ({
      ...operationView(r),
      item: {
        id: r.item_id,
        reference_code: r.reference_code,
        kind: r.kind,
        mailbox_id: r.mailbox_id,
        status: r.item_status,
      },
    })),
    pagination: pagination(total, query.limit, query.offset),
  };
}

/**
 * The facility's decision, as an Update (once per Idempotency-Key). A decision the row
 * refuses is still sent when a key is given: a retry whose answer was lost is the same
 * Update and gets the first answer; a new one is refused as before.
 */
export async function decideFacilityHandling(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: FacilityDecisionInput & { expected_version: number },
  opts: { idempotencyKey?: string } = {},
) {
  const op = await findOperation(deps.db, id);
  if (!op || op.facility_id !== auth.facilityId || op.environment !== 'live')
    throw errors.notFound('Handling operation');
  const fields = checkFacilityDecision(op, body);
  if (fields.length) throw errors.validation(fields);
  let refusal: ApiError | null = null;
  try {
    if (!nextHandlingStatus(op.status, body.decision, 'facility')) {
      throw handlingStateInvalid(`The operation is ${op.status}; ${body.decision} is not possible now.`);
    }
    assertVersion(op.version, body.expected_version, 'The operation');
  } catch (err) {
    if (!(err instanceof ApiError) || !opts.idempotencyKey) throw err;
    refusal = err;
  }
  const attestation = body.attestation?.trim() || null;
  const updateId = updateIdFor(auth, `facility.handling.${body.decision}`, opts.idempotencyKey);
  try {
    const updated =
      body.decision === 'accept'
        ? await sendUpdate(
            deps,
            op,
            acceptHandlingUpdate,
            { expectedVersion: body.expected_version, attestation },
            updateId,
          )
        : body.decision === 'complete'
          ? await sendUpdate(
              deps,
              op,
              completeHandlingUpdate,
              {
                expectedVersion: body.expected_version,
                trackingNumber: body.tracking_number?.trim() || null,
                attestation,
              },
              updateId,
            )
          : await sendUpdate(
              deps,
              op,
              rejectHandlingUpdate,
              { expectedVersion: body.expected_version, actor: 'facility', reason: body.reason!.trim() },
              updateId,
            );
    return { operation: operationView(updated) };
  } catch (err) {
    throw refusal && err instanceof ApiError && err.status === 409 ? refusal : err;
  }
}

// ---------------------------------------------------------------------------------------
// Sandbox: POST /v1/inbound-items/{id}/reset-sample

/** Restarts the member sample: open operations are closed (system), then the sample is rebuilt. */
export async function resetMemberSample(deps: Deps, auth: AuthContext, itemId: string) {
  const item = await loadManagedItem(deps, auth, itemId);
  if (item.source_domain !== 'member_sample') {
    throw errors.badRequest('NOT_MEMBER_SAMPLE', 'Only the member sample can be reset.', {
      fields: [{ path: 'params.id', message: 'is not the member sample' }],
      suggestedAction: 'Reset the member sample (its id is listed by GET /v1/inbound-items with a test key).',
    });
  }
  const open = await sqlRows<HandlingOperationRow>(
    deps.db,
    `SELECT * FROM handling_operations WHERE item_id = $1 AND status IN ('awaiting_member_approval','awaiting_facility','accepted')`,
    [item.id],
  );
  for (const op of open) {
    try {
      await sendUpdate(deps, op, rejectHandlingUpdate, {
        expectedVersion: op.version,
        actor: 'system',
        reason: 'sample_reset',
      });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
    }
  }
  // Let every workflow of the sample finish before its rows go away.
  const ops = await sqlRows<{ id: string }>(deps.db, `SELECT id FROM handling_operations WHERE item_id = $1`, [
    item.id,
  ]);
  await Promise.all(
    ops.map((o) =>
      deps.temporal.workflow
        .getHandle(handlingWorkflowId(o.id))
        .result()
        .catch(() => undefined),
    ),
  );
  await deleteMemberSample(deps.db, item.id);
  await ensureMemberSample(deps, item.member_id);
  const [view] = await managedItemViews(deps.db, [(await findItem(deps.db, item.id))!]);
  return { item: view, reset: true };
}
