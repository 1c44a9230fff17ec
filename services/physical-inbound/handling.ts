// Handling operations on physical inbound items (forward the original, open & scan,
// discard), each driven by one workflow `handling-<id>`: agents propose, the owner
// approves or rejects, the facility accepts and completes (or rejects). This module owns
// the operation record and its view, starting its workflow and sending it Updates, and the
// requests that create operations (an agent's proposal, a managed-mailbox Open & Scan).
// The owner's and the facility's decisions are services/physical-inbound/handling-decisions.ts;
// what the workflow's activities run is handling-transitions.ts.
import { noteHandlingProposal } from '../notifications/notices';
import type { EntityManager } from 'typeorm';
import type { UpdateDefinition } from '@temporalio/common';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey, isMemberKey } from '../accounts/auth';
import { errors } from '../../domain/shared/errors';
import { handlingStateInvalid } from '../../domain/shared/workflow-failures';
import { updateWorkflow, WorkflowStart } from '../shared/workflow-gateway';
import { formatCents } from '../../domain/shared/money';
import {
  checkProposal,
  ForwardMailClass,
  HandlingActionType,
  handlingCapabilities,
  isOpenHandlingStatus,
  ProposalInput,
  quoteHandling,
  unavailableReason,
} from '../../domain/workflow-safe/handling';
import { debit } from '../billing/credits';
import { loadManagedItem, managedItemViews, openAndScanQuote, quoteView } from './inbound-items';
import { inboundStartOptions, startAfterCommit, startOnce } from './inbound-workflows';
import { bumpItem, Db, findItem, ItemRow, recordActivity } from './item-records';
import { assignmentView, loadAssignment } from './agent-inbox';
import {
  HandlingSnapshot,
  handlingWorkflowId,
  HandlingWorkflowInput,
} from '../../workflows/physical-inbound/contracts';
import type { HandlingOperationRow } from './rows';
import {
  chargeQuote,
  insertHandlingOperation,
  markHandlingWorkflowStarted,
  NewHandlingOperation,
} from './handling-rows';
import { sqlRows } from '../shared/sql';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const HANDLING_CAPABILITIES_HINT = 'GET /v1/agent-inbox/{id}/handling lists the actions available for this item now.';

export function operationView(op: HandlingOperationRow) {
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

export async function findOperation(
  db: Db,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<HandlingOperationRow | null> {
  const [row] = await sqlRows<HandlingOperationRow>(
    db,
    `SELECT * FROM handling_operations WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return row ?? null;
}

// ---------------------------------------------------------------------------------------
// Workflow plumbing

/**
 * The operation's workflow input from its row; a new operation waits
 * config.physicalInbound.handlingApprovalTimeoutSeconds for the owner (the reconciler
 * restarts from the row with the time left to approve).
 */
export function handlingWorkflowInput(op: HandlingOperationRow, approvalTimeoutMs: number): HandlingWorkflowInput {
  return {
    operationId: op.id,
    itemId: op.item_id,
    memberId: op.member_id,
    agentId: op.agent_id,
    testMode: op.environment === 'test',
    actionType: op.action_type,
    status: op.status,
    version: op.version,
    approvalTimeoutMs,
  };
}

const approvalTimeoutMs = (deps: Deps) => deps.config.physicalInbound.handlingApprovalTimeoutSeconds * 1000;

const handlingAttributes = (op: HandlingOperationRow) => ({
  objectId: op.id,
  status: op.status,
  memberId: op.member_id,
  agentId: op.agent_id,
  testMode: op.environment === 'test',
});

export async function startHandlingWorkflow(deps: Deps, op: HandlingOperationRow): Promise<void> {
  // A closed workflow of this id means the operation already reached its outcome.
  await startOnce(
    deps,
    'handlingWorkflow',
    handlingWorkflowId(op.id),
    [handlingWorkflowInput(op, approvalTimeoutMs(deps))],
    handlingAttributes(op),
    markHandlingWorkflowStarted,
  );
}

/** How `handling-<id>` starts from the row, when its start was lost; only an open operation has a running workflow. */
function handlingWorkflowStart(deps: Deps, op: HandlingOperationRow): WorkflowStart | null {
  if (!isOpenHandlingStatus(op.status)) return null;
  return {
    workflowType: 'handlingWorkflow',
    options: inboundStartOptions(
      deps,
      handlingWorkflowId(op.id),
      [handlingWorkflowInput(op, approvalTimeoutMs(deps))],
      handlingAttributes(op),
    ),
    markStarted: () => markHandlingWorkflowStarted(deps.db, op.id),
  };
}

/** Sends an Update to the operation's workflow through the gateway; answers the operation as it is now. */
export async function sendUpdate<A>(
  deps: Deps,
  op: HandlingOperationRow,
  update: UpdateDefinition<HandlingSnapshot, [A]>,
  args: A,
  updateId?: string,
): Promise<HandlingOperationRow> {
  const answer = await updateWorkflow(deps, {
    workflowId: handlingWorkflowId(op.id),
    update,
    args: [args],
    updateId,
    startFromRow: () => handlingWorkflowStart(deps, op),
  });
  if (answer.closed) throw handlingStateInvalid('The operation has already reached its outcome.');
  return (await findOperation(deps.db, op.id))!;
}

export function assertVersion(current: number, expected: number, what: string): void {
  if (current !== expected) {
    throw errors.conflict('VERSION_STALE', `${what} is at version ${current}; expected_version ${expected} is stale.`, {
      details: { current_version: current, expected_version: expected },
      suggestedAction: 'Re-read it and retry with its current version.',
    });
  }
}

async function insertOperation(tx: Db, item: ItemRow, o: NewHandlingOperation): Promise<HandlingOperationRow> {
  const [open] = await sqlRows<Pick<HandlingOperationRow, 'id' | 'status'>>(
    tx,
    `SELECT id, status FROM handling_operations WHERE item_id = $1 AND status IN ('awaiting_member_approval','awaiting_facility','accepted')`,
    [item.id],
  );
  if (open) {
    throw errors.conflict(
      'HANDLING_OPERATION_OPEN',
      `Operation ${open.id} on this item is still ${open.status}; wait for its outcome.`,
      {
        details: { operation_id: open.id, status: open.status },
        suggestedAction: "Wait for that operation's outcome (GET /v1/agent-inbox/{id}/handling), then propose again.",
      },
    );
  }
  const op = await insertHandlingOperation(tx, item, o);
  await bumpItem(tx, item.id);
  await recordActivity(tx, item, o.origin === 'agent' ? 'handling_proposed' : 'handling_requested', {
    operation_id: op.id,
    action_type: o.actionType,
    status: o.status,
    origin: o.origin,
  });
  if (op.status === 'awaiting_member_approval' && op.environment === 'live')
    await noteHandlingProposal(tx as EntityManager, op);
  return op;
}

// ---------------------------------------------------------------------------------------
// Agent inbox: GET/POST /v1/agent-inbox/{id}/handling

export async function getAgentInboxHandling(deps: Deps, auth: AuthContext, itemId: string) {
  const { item, assignment } = await loadAssignment(deps, auth, itemId);
  const ops = await sqlRows<HandlingOperationRow>(
    deps.db,
    `SELECT * FROM handling_operations WHERE item_id = $1 ORDER BY created_at DESC, id`,
    [item.id],
  );
  const open = ops.some((o) => isOpenHandlingStatus(o.status));
  return {
    schema_version: 1,
    item_id: item.id,
    assignment: assignmentView(assignment),
    version: item.version,
    item_status: item.status,
    agent_may_confirm: false,
    requires_member_approval: true,
    capabilities: handlingCapabilities({ kind: item.kind, status: item.status, weightOz: item.weight_oz }, open).map(
      (c) => ({
        ...c,
        quote:
          c.quote && c.action_type !== 'vault'
            ? quoteView(item.environment, c.action_type as HandlingActionType, c.quote)
            : null,
      }),
    ),
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
        fields: [{ path: 'action_type', message: check.message }],
        suggestedAction: HANDLING_CAPABILITIES_HINT,
      });
    }
    throw errors.conflict('HANDLING_NOT_AVAILABLE', check.message, { suggestedAction: HANDLING_CAPABILITIES_HINT });
  }
  const p = check.proposal;
  const quote = quoteHandling({
    kind: item.kind,
    actionType: p.action_type,
    mailClass: p.mail_class,
    weightOz: item.weight_oz,
  });
  const op = await deps.db.transaction(async (tx) => {
    const locked = (await findItem(tx, item.id, { forUpdate: true }))!;
    assertVersion(locked.version, body.expected_version, 'The item');
    return insertOperation(tx, locked, {
      origin: 'agent',
      status: 'awaiting_member_approval',
      actionType: p.action_type,
      agentId: auth.agentId,
      mailClass: p.mail_class,
      untrackedAcknowledged: p.untracked_acknowledged,
      destination: p.destination,
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
    throw errors.validation([
      {
        path: 'expected_quote',
        message: 'member keys must include the displayed expected_quote ({amount_cents, currency})',
      },
    ]);
  }
  if (body.expected_quote && body.expected_quote.amount_cents !== quote.amount_cents) {
    throw errors.conflict('QUOTE_CHANGED', `The Open & Scan price is now ${quote.display}; confirm the new quote.`, {
      details: { quote },
      suggestedAction: 'Show the new quote (details.quote) to the owner and send it as expected_quote.',
    });
  }
  const reason = unavailableReason(item);
  if (reason)
    throw errors.conflict('HANDLING_NOT_AVAILABLE', `open_and_scan is not available: ${reason}.`, {
      suggestedAction: HANDLING_CAPABILITIES_HINT,
    });
  const op = await deps.db.transaction(async (tx) => {
    const locked = (await findItem(tx, item.id, { forUpdate: true }))!;
    assertVersion(locked.version, body.expected_version, 'The item');
    // Member-origin confirmations start at awaiting_facility and are charged now.
    const created = await insertOperation(tx, locked, {
      origin: member ? 'member' : 'agent',
      status: member ? 'awaiting_facility' : 'awaiting_member_approval',
      actionType: 'open_and_scan',
      agentId: isAgentKey(auth) ? auth.agentId : locked.agent_id,
      mailClass: null,
      untrackedAcknowledged: false,
      destination: null,
      quoteCents: quote.amount_cents,
    });
    if (member && created.quote_cents > 0) {
      await debit(deps, tx as EntityManager, {
        memberId: locked.member_id,
        amountCents: created.quote_cents,
        entryKey: `debit:handling:${created.id}`,
        referenceType: 'handling',
        referenceId: created.id,
        description: 'Open & Scan',
      });
      return chargeQuote(tx, created.id);
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
