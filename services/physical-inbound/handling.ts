// Handling operations on physical inbound items (forward the original, open & scan,
// discard), each driven by one workflow `handling-<id>`: agents propose, the owner
// approves or rejects, the facility accepts and completes (or rejects). The API side
// creates operations and sends Updates; the transition functions at the bottom are what
// the workflow's activities run, each one guarded by the operation's version.
import { pagination } from '../../domain/shared/pagination';
import { ApplicationFailure, UpdateDefinition } from '@temporalio/common';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { ensureIntervalSchedule } from '../operations/schedules';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey, isMemberKey } from '../accounts/auth';
import { ApiError, errors } from '../../domain/shared/errors';
import { handlingStateInvalid, insufficientCreditsDetails } from '../../domain/shared/workflow-failures';
import { updateIdFor, updateWorkflow, WorkflowStart } from '../shared/workflow-gateway';
import { formatCents } from '../../domain/shared/money';
import { hasVisibleCharacter } from '../../domain/workflow-safe/visible-text';
import {
  checkFacilityDecision, checkProposal, FacilityDecisionInput, ForwardMailClass, HandlingActionType, handlingCapabilities,
  HandlingEvent, HandlingStatus, isOpenHandlingStatus, itemStatusOnApproval, itemStatusOnCompletion, nextHandlingStatus,
  ProposalInput, quoteHandling, unavailableReason,
} from '../../domain/workflow-safe/handling';
import { debit, insufficientCredits, refund } from '../billing/credits';
import { loadManagedItem, managedItemViews, openAndScanQuote, quoteView } from './inbound-items';
import { inboundStartOptions, startAfterCommit, startInboundReceivedWorkflow, startOnce, startScanBundleWorkflow } from './inbound-workflows';
import { bumpItem, Db, environmentOf, findItem, ITEM_COLUMNS, ItemRow, recordActivity, toItemRow, updateReturning } from './item-records';
import { addFixtureBundle, ensureMemberSample, loadFixture, uploadFixture } from './sandbox-fixtures';
import { bundleOcrStatus, loadItemBundles } from './scan-bundles';
import { refreshSearchFields } from './search-index';
import { assignmentView, loadAssignment } from './agent-inbox';
import { publishEvent } from '../webhooks/events';
import { signalScanOutcome } from './scan-requests';
import {
  acceptHandlingUpdate, approveHandlingUpdate, completeHandlingUpdate, HANDLING_FAILURES, HandlingSnapshot, handlingWorkflowId,
  HandlingWorkflowInput, PhysicalInboundReconcileInput, rejectHandlingUpdate,
} from '../../workflows/physical-inbound/contracts';

export interface OperationRow {
  id: string;
  item_id: string;
  member_id: string;
  agent_id: string | null;
  facility_id: string | null;
  environment: 'live' | 'test';
  origin: 'agent' | 'member';
  action_type: HandlingActionType;
  status: HandlingStatus;
  version: number;
  mail_class: ForwardMailClass | null;
  untracked_acknowledged: boolean;
  destination: Record<string, unknown> | null;
  quote_cents: number;
  charged_cents: number;
  refunded_cents: number;
  destructive_confirmed: boolean;
  item_status_before: string | null;
  scan_request_id: string | null;
  tracking_number: string | null;
  attestation: string | null;
  rejection_reason: string | null;
  rejected_by: string | null;
  created_at: Date;
  updated_at: Date;
  approved_at: Date | null;
  accepted_at: Date | null;
  completed_at: Date | null;
  rejected_at: Date | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const HANDLING_CAPABILITIES_HINT = 'GET /v1/agent-inbox/{id}/handling lists the actions available for this item now.';

export function operationView(op: OperationRow) {
  return {
    object: 'handling_operation' as const,
    id: op.id,
    item_id: op.item_id,
    agent_id: op.agent_id,
    environment: op.environment,
    origin: op.origin,
    action_type: op.action_type,
    status: op.status,
    version: op.version,
    mail_class: op.mail_class,
    untracked_acknowledged: op.untracked_acknowledged,
    destination: op.destination,
    quote: { amount_cents: op.quote_cents, currency: 'usd' as const, display: formatCents(op.quote_cents) },
    charged_cents: op.charged_cents,
    refunded_cents: op.refunded_cents,
    destructive_confirmed: op.destructive_confirmed,
    scan_request_id: op.scan_request_id,
    tracking_number: op.tracking_number,
    attestation: op.attestation,
    rejection_reason: op.rejection_reason,
    rejected_by: op.rejected_by,
    created_at: op.created_at.toISOString(),
    updated_at: op.updated_at.toISOString(),
    approved_at: iso(op.approved_at),
    accepted_at: iso(op.accepted_at),
    completed_at: iso(op.completed_at),
    rejected_at: iso(op.rejected_at),
  };
}

export async function findOperation(db: Db, id: string, opts: { forUpdate?: boolean } = {}): Promise<OperationRow | null> {
  const [row] = await db.query(`SELECT * FROM handling_operations WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return row ?? null;
}

// ---------------------------------------------------------------------------------------
// Workflow plumbing

/**
 * The operation's workflow input from its row; a new operation waits
 * config.physicalInbound.handlingApprovalTimeoutSeconds for the owner (the reconciler
 * restarts from the row with the time left to approve).
 */
export function handlingWorkflowInput(op: OperationRow, approvalTimeoutMs: number): HandlingWorkflowInput {
  return {
    operationId: op.id, itemId: op.item_id, memberId: op.member_id, agentId: op.agent_id, testMode: op.environment === 'test',
    actionType: op.action_type, status: op.status, version: op.version, approvalTimeoutMs,
  };
}

const MARK_HANDLING_STARTED = `UPDATE handling_operations SET workflow_started_at = COALESCE(workflow_started_at, now()) WHERE id = $1`;

const approvalTimeoutMs = (deps: Deps) => deps.config.physicalInbound.handlingApprovalTimeoutSeconds * 1000;

const handlingAttributes = (op: OperationRow) =>
  ({ objectId: op.id, status: op.status, memberId: op.member_id, agentId: op.agent_id, testMode: op.environment === 'test' });

export async function startHandlingWorkflow(deps: Deps, op: OperationRow): Promise<void> {
  // A closed workflow of this id means the operation already reached its outcome.
  await startOnce(deps, 'handlingWorkflow', handlingWorkflowId(op.id), [handlingWorkflowInput(op, approvalTimeoutMs(deps))], handlingAttributes(op), MARK_HANDLING_STARTED);
}

/** How `handling-<id>` starts from the row, when its start was lost; only an open operation has a running workflow. */
function handlingWorkflowStart(deps: Deps, op: OperationRow): WorkflowStart | null {
  if (!isOpenHandlingStatus(op.status)) return null;
  return {
    workflowType: 'handlingWorkflow',
    options: inboundStartOptions(deps, handlingWorkflowId(op.id), [handlingWorkflowInput(op, approvalTimeoutMs(deps))], handlingAttributes(op)),
    markStarted: () => deps.db.query(MARK_HANDLING_STARTED, [op.id]),
  };
}

/** Sends an Update to the operation's workflow through the gateway; answers the operation as it is now. */
async function sendUpdate<A>(deps: Deps, op: OperationRow, update: UpdateDefinition<HandlingSnapshot, [A]>, args: A, updateId?: string): Promise<OperationRow> {
  const answer = await updateWorkflow(deps, {
    workflowId: handlingWorkflowId(op.id), update, args: [args], updateId, startFromRow: () => handlingWorkflowStart(deps, op),
  });
  if (answer.closed) throw handlingStateInvalid('The operation has already reached its outcome.');
  return (await findOperation(deps.db, op.id))!;
}

function assertVersion(current: number, expected: number, what: string): void {
  if (current !== expected) {
    throw errors.conflict('VERSION_STALE', `${what} is at version ${current}; expected_version ${expected} is stale.`, {
      details: { current_version: current, expected_version: expected },
      suggestedAction: 'Re-read it and retry with its current version.',
    });
  }
}

async function insertOperation(tx: Db, item: ItemRow, o: {
  origin: 'agent' | 'member'; status: HandlingStatus; actionType: HandlingActionType; agentId: string | null; mailClass: ForwardMailClass | null;
  untrackedAcknowledged: boolean; destination: unknown; quoteCents: number;
}): Promise<OperationRow> {
  const [open] = await tx.query(
    `SELECT id, status FROM handling_operations WHERE item_id = $1 AND status IN ('awaiting_member_approval','awaiting_facility','accepted')`, [item.id]);
  if (open) {
    throw errors.conflict('HANDLING_OPERATION_OPEN', `Operation ${open.id} on this item is still ${open.status}; wait for its outcome.`, {
      details: { operation_id: open.id, status: open.status },
      suggestedAction: 'Wait for that operation\'s outcome (GET /v1/agent-inbox/{id}/handling), then propose again.',
    });
  }
  const [op] = await tx.query(
    `INSERT INTO handling_operations (item_id, member_id, agent_id, facility_id, environment, origin, action_type, status, mail_class,
       untracked_acknowledged, destination, quote_cents)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
    [item.id, item.member_id, o.agentId, item.facility_id, item.environment, o.origin, o.actionType, o.status, o.mailClass,
      o.untrackedAcknowledged, o.destination ? JSON.stringify(o.destination) : null, o.quoteCents],
  );
  await bumpItem(tx, item.id);
  await recordActivity(tx, item, o.origin === 'agent' ? 'handling_proposed' : 'handling_requested', {
    operation_id: op.id, action_type: o.actionType, status: o.status, origin: o.origin,
  });
  return op;
}

// ---------------------------------------------------------------------------------------
// Agent inbox: GET/POST /v1/agent-inbox/{id}/handling

export async function getAgentInboxHandling(deps: Deps, auth: AuthContext, itemId: string) {
  const { item, assignment } = await loadAssignment(deps, auth, itemId);
  const ops: OperationRow[] = await deps.db.query(`SELECT * FROM handling_operations WHERE item_id = $1 ORDER BY created_at DESC, id`, [item.id]);
  const open = ops.some((o) => isOpenHandlingStatus(o.status));
  return {
    schema_version: 1,
    item_id: item.id,
    assignment: assignmentView(assignment),
    version: item.version,
    item_status: item.status,
    agent_may_confirm: false,
    requires_member_approval: true,
    capabilities: handlingCapabilities({ kind: item.kind, status: item.status, weightOz: item.weight_oz }, open).map((c) => ({
      ...c, quote: c.quote && c.action_type !== 'vault' ? quoteView(item.environment, c.action_type as HandlingActionType, c.quote) : null,
    })),
    operations: ops.map(operationView),
  };
}

/** The agent's proposal (once per Idempotency-Key: api/routes/physical-inbound/idempotent-requests.ts). */
export async function proposeHandling(deps: Deps, auth: AuthContext, itemId: string, body: ProposalInput) {
  const { item } = await loadAssignment(deps, auth, itemId);
  const check = checkProposal(body, item);
  if (!check.ok) {
    if (check.kind === 'invalid') throw errors.validation(check.fields);
    if (check.kind === 'inactive') {
      throw errors.badRequest('HANDLING_ACTION_INACTIVE', check.message, {
        fields: [{ path: 'action_type', message: check.message }], suggestedAction: HANDLING_CAPABILITIES_HINT,
      });
    }
    throw errors.conflict('HANDLING_NOT_AVAILABLE', check.message, { suggestedAction: HANDLING_CAPABILITIES_HINT });
  }
  const p = check.proposal;
  const quote = quoteHandling({ kind: item.kind, actionType: p.action_type, mailClass: p.mail_class, weightOz: item.weight_oz });
  const op = await deps.db.transaction(async (tx) => {
    const locked = (await findItem(tx, item.id, { forUpdate: true }))!;
    assertVersion(locked.version, body.expected_version, 'The item');
    return insertOperation(tx, locked, {
      origin: 'agent', status: 'awaiting_member_approval', actionType: p.action_type, agentId: auth.agentId,
      mailClass: p.mail_class, untrackedAcknowledged: p.untracked_acknowledged, destination: p.destination,
      quoteCents: locked.environment === 'test' ? 0 : quote.amount_cents,
    });
  });
  await startAfterCommit(deps, `operation ${op.id}`, () => startHandlingWorkflow(deps, op));
  const fresh = (await findItem(deps.db, item.id))!;
  return { operation: operationView(op), item_version: fresh.version };
}

// ---------------------------------------------------------------------------------------
// Managed mailbox: POST /v1/inbound-items/{id}/actions (Open & Scan only)

export interface InboundActionBody {
  action_type: 'open_and_scan';
  expected_version: number;
  expected_quote?: { amount_cents: number; currency: 'usd' };
}

/** Open & Scan of a managed item (once per Idempotency-Key: api/routes/physical-inbound/idempotent-requests.ts). */
export async function requestInboundAction(deps: Deps, auth: AuthContext, itemId: string, body: InboundActionBody) {
  const item = await loadManagedItem(deps, auth, itemId);
  const quote = openAndScanQuote(item);
  const member = isMemberKey(auth);
  if (member && !body.expected_quote) {
    throw errors.validation([{ path: 'expected_quote', message: 'member keys must include the displayed expected_quote ({amount_cents, currency})' }]);
  }
  if (body.expected_quote && body.expected_quote.amount_cents !== quote.amount_cents) {
    throw errors.conflict('QUOTE_CHANGED', `The Open & Scan price is now ${quote.display}; confirm the new quote.`, {
      details: { quote },
      suggestedAction: 'Show the new quote (details.quote) to the owner and send it as expected_quote.',
    });
  }
  const reason = unavailableReason(item);
  if (reason) throw errors.conflict('HANDLING_NOT_AVAILABLE', `open_and_scan is not available: ${reason}.`, { suggestedAction: HANDLING_CAPABILITIES_HINT });
  const op = await deps.db.transaction(async (tx) => {
    const locked = (await findItem(tx, item.id, { forUpdate: true }))!;
    assertVersion(locked.version, body.expected_version, 'The item');
    // Member-origin confirmations start at awaiting_facility and are charged now.
    const created = await insertOperation(tx, locked, {
      origin: member ? 'member' : 'agent', status: member ? 'awaiting_facility' : 'awaiting_member_approval', actionType: 'open_and_scan',
      agentId: isAgentKey(auth) ? auth.agentId : locked.agent_id, mailClass: null, untrackedAcknowledged: false, destination: null,
      quoteCents: quote.amount_cents,
    });
    if (member && created.quote_cents > 0) {
      await debit(deps, tx as EntityManager, {
        memberId: locked.member_id, amountCents: created.quote_cents, entryKey: `debit:handling:${created.id}`,
        referenceType: 'handling', referenceId: created.id, description: 'Open & Scan',
      });
      const [charged] = await updateReturning(tx,
        `UPDATE handling_operations SET charged_cents = quote_cents, approved_at = now() WHERE id = $1 RETURNING *`, [created.id]);
      return charged as OperationRow;
    }
    return created;
  });
  await startAfterCommit(deps, `operation ${op.id}`, () => startHandlingWorkflow(deps, op));
  const [view] = await managedItemViews(deps.db, [(await findItem(deps.db, item.id))!]);
  return { operation: operationView(op), item: view };
}

export async function quoteInboundForward(deps: Deps, auth: AuthContext, itemId: string, mailClass: ForwardMailClass) {
  const item = await loadManagedItem(deps, auth, itemId);
  if (mailClass === 'first_class' && item.kind !== 'letter') {
    throw errors.validation([{ path: 'query.mail_class', message: 'first_class forwarding is for letters only' }]);
  }
  const q = quoteHandling({ kind: item.kind, actionType: 'forward_original', mailClass, weightOz: item.weight_oz });
  return {
    item_id: item.id,
    mail_class: mailClass,
    tracked: mailClass === 'priority',
    available: unavailableReason(item) === null,
    quote: quoteView(item.environment, 'forward_original', q),
  };
}

// ---------------------------------------------------------------------------------------
// Owner (member keys)

async function loadMemberOperation(deps: Deps, auth: AuthContext, id: string): Promise<OperationRow> {
  const op = await findOperation(deps.db, id);
  if (!op || op.member_id !== auth.memberId || op.environment !== environmentOf(auth)) throw errors.notFound('Handling operation');
  return op;
}

export async function listMemberHandling(deps: Deps, auth: AuthContext, query: { status?: HandlingStatus; item_id?: string; limit: number; offset: number }) {
  const params: unknown[] = [auth.memberId, environmentOf(auth)];
  const where = ['member_id = $1', 'environment = $2'];
  if (query.status) { params.push(query.status); where.push(`status = $${params.length}`); }
  if (query.item_id) { params.push(query.item_id); where.push(`item_id = $${params.length}`); }
  params.push(query.limit, query.offset);
  const rows = await deps.db.query(
    `SELECT *, count(*) OVER () AS total FROM handling_operations WHERE ${where.join(' AND ')}
      ORDER BY created_at DESC, id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
  const total = rows.length ? Number(rows[0].total) : 0;
  return {
    operations: rows.map(operationView),
    pagination: pagination(total, query.limit, query.offset),
  };
}

export async function getHandlingOperation(deps: Deps, auth: AuthContext, id: string) {
  return { operation: operationView(await loadMemberOperation(deps, auth, id)) };
}

export async function approveHandling(deps: Deps, auth: AuthContext, id: string, body: { expected_version: number; destructive_confirmed?: boolean }) {
  const op = await loadMemberOperation(deps, auth, id);
  if (op.action_type === 'discard' && body.destructive_confirmed !== true) {
    throw errors.validation([{ path: 'destructive_confirmed', message: 'discard destroys the item: the owner must send destructive_confirmed true' }]);
  }
  if (op.status !== 'awaiting_member_approval') throw handlingStateInvalid(`The operation is ${op.status}; only awaiting_member_approval can be approved.`);
  assertVersion(op.version, body.expected_version, 'The operation');
  const updated = await sendUpdate(deps, op, approveHandlingUpdate, { expectedVersion: body.expected_version, destructiveConfirmed: body.destructive_confirmed === true });
  return { operation: operationView(updated) };
}

export async function rejectHandling(deps: Deps, auth: AuthContext, id: string, body: { expected_version: number; reason?: string }) {
  const op = await loadMemberOperation(deps, auth, id);
  if (op.status !== 'awaiting_member_approval') throw handlingStateInvalid(`The operation is ${op.status}; the owner can reject only while approval is pending.`);
  assertVersion(op.version, body.expected_version, 'The operation');
  const updated = await sendUpdate(deps, op, rejectHandlingUpdate, { expectedVersion: body.expected_version, actor: 'member', reason: hasVisibleCharacter(body.reason ?? '') ? body.reason!.trim() : 'rejected_by_owner' });
  return { operation: operationView(updated) };
}

// ---------------------------------------------------------------------------------------
// Facility: GET /v1/facility/internal-inbound/handling, POST .../{id}/decision

export async function listFacilityHandling(deps: Deps, auth: AuthContext, query: { status?: HandlingStatus; limit: number; offset: number }) {
  const statuses = query.status ? [query.status] : ['awaiting_facility', 'accepted'];
  const rows = await deps.db.query(
    `SELECT o.*, i.reference_code, i.kind, i.mailbox_id, i.status AS item_status, count(*) OVER () AS total
       FROM handling_operations o JOIN physical_inbound_items i ON i.id = o.item_id
      WHERE o.facility_id = $1 AND o.environment = 'live' AND o.status = ANY($2::text[])
      ORDER BY o.updated_at, o.id LIMIT $3 OFFSET $4`,
    [auth.facilityId, statuses, query.limit, query.offset]);
  const total = rows.length ? Number(rows[0].total) : 0;
  return {
    operations: rows.map((r: OperationRow & { reference_code: string; kind: string; mailbox_id: string | null; item_status: string }) => ({
      ...operationView(r),
      item: { id: r.item_id, reference_code: r.reference_code, kind: r.kind, mailbox_id: r.mailbox_id, status: r.item_status },
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
  deps: Deps, auth: AuthContext, id: string, body: FacilityDecisionInput & { expected_version: number }, opts: { idempotencyKey?: string } = {},
) {
  const op = await findOperation(deps.db, id);
  if (!op || op.facility_id !== auth.facilityId || op.environment !== 'live') throw errors.notFound('Handling operation');
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
    const updated = body.decision === 'accept'
      ? await sendUpdate(deps, op, acceptHandlingUpdate, { expectedVersion: body.expected_version, attestation }, updateId)
      : body.decision === 'complete'
        ? await sendUpdate(deps, op, completeHandlingUpdate, { expectedVersion: body.expected_version, trackingNumber: body.tracking_number?.trim() || null, attestation }, updateId)
        : await sendUpdate(deps, op, rejectHandlingUpdate, { expectedVersion: body.expected_version, actor: 'facility', reason: body.reason!.trim() }, updateId);
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
      fields: [{ path: 'params.id', message: 'is not the member sample' }], suggestedAction: 'Reset the member sample (its id is listed by GET /v1/inbound-items with a test key).',
    });
  }
  const open: OperationRow[] = await deps.db.query(
    `SELECT * FROM handling_operations WHERE item_id = $1 AND status IN ('awaiting_member_approval','awaiting_facility','accepted')`, [item.id]);
  for (const op of open) {
    try {
      await sendUpdate(deps, op, rejectHandlingUpdate, { expectedVersion: op.version, actor: 'system', reason: 'sample_reset' });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
    }
  }
  // Let every workflow of the sample finish before its rows go away.
  const ops: Array<{ id: string }> = await deps.db.query(`SELECT id FROM handling_operations WHERE item_id = $1`, [item.id]);
  await Promise.all(ops.map((o) => deps.temporal.workflow.getHandle(handlingWorkflowId(o.id)).result().catch(() => undefined)));
  await deps.db.query(`DELETE FROM physical_inbound_items WHERE id = $1 AND source_domain = 'member_sample'`, [item.id]);
  await ensureMemberSample(deps, item.member_id);
  const [view] = await managedItemViews(deps.db, [(await findItem(deps.db, item.id))!]);
  return { item: view, reset: true };
}

// ---------------------------------------------------------------------------------------
// Transitions (run by the handling workflow's activities). Each locks the operation,
// applies the move only from the expected version, and treats "already applied" as done
// so that a retried activity is harmless.

function fail(type: string, message: string, details: Record<string, unknown> = {}): ApplicationFailure {
  return ApplicationFailure.create({ message, type, details: [details], nonRetryable: true });
}

function snapshot(op: Pick<OperationRow, 'id' | 'status' | 'version'>): HandlingSnapshot {
  return { id: op.id, status: op.status, version: op.version };
}

type TransitionEffect = (tx: EntityManager, op: OperationRow, item: ItemRow) => Promise<Record<string, unknown>>;

async function transition(deps: Deps, input: { operationId: string; expectedVersion: number; event: HandlingEvent; actor: 'member' | 'facility' | 'system' },
  effect: TransitionEffect, itemStatus: (op: OperationRow, item: ItemRow) => string | null): Promise<HandlingSnapshot> {
  return deps.db.transaction(async (tx) => {
    const op = await findOperation(tx, input.operationId, { forUpdate: true });
    if (!op) throw fail(HANDLING_FAILURES.invalidState, 'The operation no longer exists.');
    const target = nextHandlingStatus(op.status, input.event, input.actor);
    const wanted = input.event === 'approve' ? 'awaiting_facility' : input.event === 'accept' ? 'accepted' : input.event === 'complete' ? 'completed' : 'rejected';
    if (op.status === wanted && op.version === input.expectedVersion + 1) return snapshot(op);
    if (!target) throw fail(HANDLING_FAILURES.invalidState, `The operation is ${op.status}; ${input.event} is not possible now.`, { status: op.status, version: op.version });
    if (op.version !== input.expectedVersion) {
      throw fail(HANDLING_FAILURES.staleVersion, `The operation is at version ${op.version}; expected_version ${input.expectedVersion} is stale.`,
        { current_version: op.version, expected_version: input.expectedVersion });
    }
    const item = (await findItem(tx, op.item_id, { forUpdate: true }))!;
    const changes = await effect(tx, op, item);
    const sets = Object.keys(changes).map((k, n) => `${k} = $${n + 3}`);
    const [updated] = await updateReturning(tx,
      `UPDATE handling_operations SET status = $2, version = version + 1, updated_at = now()${sets.length ? ', ' + sets.join(', ') : ''}
        WHERE id = $1 RETURNING *`,
      [op.id, target, ...Object.values(changes)],
    );
    await bumpItem(tx, item.id, itemStatus(updated, item));
    await recordActivity(tx, item, `handling_${target === 'awaiting_facility' ? 'approved' : target}`, {
      operation_id: op.id, action_type: op.action_type, actor: input.actor, version: updated.version,
      ...(changes.rejection_reason ? { reason: changes.rejection_reason } : {}),
      ...(changes.tracking_number ? { tracking_number: changes.tracking_number } : {}),
    });
    return snapshot(updated);
  });
}

export async function approveOperation(deps: Deps, input: { operationId: string; expectedVersion: number; destructiveConfirmed: boolean }) {
  return transition(deps, { ...input, event: 'approve', actor: 'member' }, async (tx, op, item) => {
    if (op.action_type === 'discard' && !input.destructiveConfirmed) {
      throw fail(HANDLING_FAILURES.invalid, 'discard needs destructive_confirmed true', { fields: [{ path: 'destructive_confirmed', message: 'must be true to approve a discard' }] });
    }
    if (op.environment === 'live' && op.quote_cents > 0) {
      try {
        await debit(deps, tx, { memberId: op.member_id, amountCents: op.quote_cents, entryKey: `debit:handling:${op.id}`, referenceType: 'handling', referenceId: op.id, description: `Inbound ${op.action_type}` });
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
      approved_at: new Date(), destructive_confirmed: input.destructiveConfirmed, charged_cents: op.environment === 'live' ? op.quote_cents : 0,
      item_status_before: next ? item.status : null,
    };
  }, (op) => itemStatusOnApproval(op.action_type));
}

export async function rejectOperation(deps: Deps, input: { operationId: string; expectedVersion: number; actor: 'member' | 'facility' | 'system'; reason: string }) {
  return transition(deps, { ...input, event: 'reject' }, async (tx, op) => {
    const refunded = await refund(tx, { memberId: op.member_id, amountCents: op.charged_cents - op.refunded_cents, entryKey: `refund:handling:${op.id}`, referenceType: 'handling', referenceId: op.id, description: `Inbound ${op.action_type} not carried out` });
    if (op.scan_request_id) {
      await tx.query(`UPDATE scan_requests SET status = 'rejected', rejection_reason = COALESCE(rejection_reason, $2) WHERE id = $1 AND status = 'requested'`, [op.scan_request_id, input.reason]);
    }
    return { rejected_at: new Date(), rejected_by: input.actor, rejection_reason: input.reason, refunded_cents: op.refunded_cents + refunded };
  }, (op, item) => (op.item_status_before && item.status === itemStatusOnApproval(op.action_type) ? op.item_status_before : null));
}

export async function acceptOperation(deps: Deps, input: { operationId: string; expectedVersion: number; attestation: string | null }) {
  return transition(deps, { ...input, event: 'accept', actor: 'facility' }, async (tx, op, item) => {
    const changes: Record<string, unknown> = { accepted_at: new Date() };
    if (input.attestation) changes.attestation = input.attestation;
    if (op.action_type === 'open_and_scan' && op.environment === 'live') {
      const [request] = await tx.query(
        `INSERT INTO scan_requests (item_id, member_id, agent_id, facility_id, scan_type, origin, handling_id)
         VALUES ($1, $2, $3, $4, 'content', 'handling', $5) RETURNING id`,
        [item.id, item.member_id, op.agent_id, op.facility_id, op.id]);
      changes.scan_request_id = request.id;
      await recordActivity(tx, item, 'scan_requested', { scan_request_id: request.id, scan_type: 'content', operation_id: op.id });
    }
    return changes;
  }, () => null);
}

export async function completeOperation(deps: Deps, input: { operationId: string; expectedVersion: number; trackingNumber: string | null; attestation: string | null; viaScan?: boolean }) {
  return transition(deps, { ...input, event: 'complete', actor: 'facility' }, async (tx, op) => {
    const fields = checkFacilityDecision(op, { decision: 'complete', tracking_number: input.trackingNumber, attestation: input.attestation })
      .filter((f) => !(input.viaScan && f.path === 'decision'));
    if (fields.length) throw fail(HANDLING_FAILURES.invalid, fields[0].message, { fields });
    if (op.action_type === 'open_and_scan' && op.environment === 'live') {
      const [request] = await tx.query(`SELECT status FROM scan_requests WHERE id = $1`, [op.scan_request_id]);
      if (request?.status !== 'fulfilled') throw fail(HANDLING_FAILURES.invalidState, 'The scan request of this operation is not fulfilled yet.');
    }
    const changes: Record<string, unknown> = { completed_at: new Date() };
    if (input.trackingNumber) changes.tracking_number = input.trackingNumber;
    if (input.attestation) changes.attestation = input.attestation;
    return changes;
  }, (op) => itemStatusOnCompletion(op.action_type));
}

/**
 * The sandbox facility: test operations are accepted and completed at once, with a
 * simulated tracking number, a simulated attestation, or (Open & Scan) a new scan of the
 * item's fixture letter pages. Returns the snapshot and the new bundle, if any.
 */
export async function sandboxFulfilOperation(deps: Deps, input: { operationId: string }): Promise<{ snapshot: HandlingSnapshot; bundleId: string | null }> {
  const op = await findOperation(deps.db, input.operationId);
  if (!op || op.environment !== 'test') throw fail(HANDLING_FAILURES.invalidState, 'Only sandbox operations are fulfilled by the sandbox.');
  const existingBundle = async (db: Db): Promise<string | null> => {
    const [row] = await db.query(`SELECT b.id FROM scan_requests r JOIN scan_bundles b ON b.request_id = r.id WHERE r.handling_id = $1`, [op.id]);
    return row?.id ?? null;
  };
  // A retried activity picks up where the last attempt stopped.
  if (op.status === 'completed') return { snapshot: snapshot(op), bundleId: await existingBundle(deps.db) };
  let version = op.version;
  if (op.status === 'awaiting_facility') {
    version = (await acceptOperation(deps, { operationId: op.id, expectedVersion: version, attestation: null })).version;
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
      await tx.query(`UPDATE scan_requests SET handling_id = $2, scan_type = 'content' WHERE id = (SELECT request_id FROM scan_bundles WHERE id = $1)`, [id, op.id]);
      await tx.query(`UPDATE handling_operations SET scan_request_id = (SELECT request_id FROM scan_bundles WHERE id = $2) WHERE id = $1`, [op.id, id]);
      await refreshSearchFields(tx, item.id);
      return id;
    });
  }
  const simulated = {
    trackingNumber: op.action_type === 'forward_original' && op.mail_class === 'priority' ? `SANDBOX${op.id.replace(/-/g, '').slice(0, 12).toUpperCase()}` : null,
    attestation: op.action_type === 'discard' ? 'Sandbox: secure destruction simulated; nothing was destroyed.' : null,
  };
  const done = await completeOperation(deps, { operationId: op.id, expectedVersion: version, ...simulated, viaScan: op.action_type === 'open_and_scan' });
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

// ---------------------------------------------------------------------------------------
// Reconciler: every committed record gets its workflow, even if the process died between
// the commit and the start (member Open & Scan is charged in that commit).

export async function reconcilePhysicalInbound(deps: Deps, graceSeconds: number): Promise<{ operations: number; items: number; bundles: number; scanOutcomes: number }> {
  const age = `now() - ($1 || ' seconds')::interval`;
  const ops: OperationRow[] = await deps.db.query(
    `SELECT * FROM handling_operations WHERE workflow_started_at IS NULL AND created_at <= ${age} ORDER BY created_at LIMIT 200`, [String(graceSeconds)]);
  for (const op of ops) await startHandlingWorkflow(deps, op);
  const items = await deps.db.query(
    `SELECT ${ITEM_COLUMNS} FROM physical_inbound_items i WHERE i.received_workflow_started_at IS NULL AND i.created_at <= ${age}
      ORDER BY i.created_at LIMIT 200`, [String(graceSeconds)]);
  for (const row of items) await startInboundReceivedWorkflow(deps, toItemRow(row));
  // Each bundle with its item (a bundle's item always exists: the bundle is deleted with it).
  const bundles: Array<Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'environment'> & { bundle_id: string }> = await deps.db.query(
    `SELECT b.id AS bundle_id, i.id, i.member_id, i.agent_id, i.environment FROM scan_bundles b JOIN physical_inbound_items i ON i.id = b.item_id
      WHERE b.workflow_started_at IS NULL AND b.created_at <= ${age} ORDER BY b.created_at LIMIT 200`, [String(graceSeconds)]);
  for (const b of bundles) await startScanBundleWorkflow(deps, b.bundle_id, b);
  // Open & Scan operations whose scan was refused, or fulfilled with its context saved
  // (inbound.context_ready recorded: the outcome never goes before it), but whose signal was lost.
  const waiting = await deps.db.query(
    `SELECT o.id, r.id AS request_id, r.status, r.rejection_reason, b.id AS bundle_id
       FROM handling_operations o JOIN scan_requests r ON r.id = o.scan_request_id LEFT JOIN scan_bundles b ON b.request_id = r.id
      WHERE o.status = 'accepted' AND o.environment = 'live'
        AND (r.status = 'rejected' OR (r.status = 'fulfilled' AND EXISTS (
              SELECT 1 FROM events e WHERE e.event_key = 'inbound:' || b.id || ':inbound.context_ready')))
        AND COALESCE(r.fulfilled_at, r.requested_at) <= ${age} LIMIT 200`, [String(graceSeconds)]);
  for (const w of waiting) {
    await signalScanOutcome(deps, w.id, { scanRequestId: w.request_id, outcome: w.status, bundleId: w.bundle_id, reason: w.rejection_reason });
  }
  return { operations: ops.length, items: items.length, bundles: bundles.length, scanOutcomes: waiting.length };
}

export function inboundReconcilerScheduleId(deps: Deps): string {
  return `physical-inbound-reconciler-${deps.config.taskQueue}`;
}

/**
 * Creates (or updates) the Temporal Schedule that runs the reconciler every
 * config.physicalInbound.reconcileEverySeconds. The worker calls it at start.
 */
export async function ensurePhysicalInboundReconcilerSchedule(deps: Deps): Promise<string> {
  const settings = deps.config.physicalInbound;
  const scheduleId = inboundReconcilerScheduleId(deps);
  const input: PhysicalInboundReconcileInput = { graceSeconds: settings.reconcileGraceSeconds };
  return ensureIntervalSchedule(deps, {
    scheduleId,
    workflowType: 'physicalInboundReconcileWorkflow',
    workflowId: scheduleId,
    args: [input],
    every: settings.reconcileEverySeconds * 1000,
    catchupWindow: '1 minute',
    workflowExecutionTimeout: 10 * 60 * 1000,
  });
}
