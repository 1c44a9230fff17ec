// Expected shipments: an agent (or its member, naming it with ?agent_id=) announces a
// piece it expects at the account's private mailbox: carrier, tracking number, sender,
// description, expected date, and optionally an action to request when it arrives. When
// the facility commits a piece whose normalised tracking number matches an open shipment
// of that mailbox and agent, the shipment is linked to the package and marked received
// (services/physical-inbound/package-arrival.ts). Physical inbound custody: account-enabled, live keys only.
import type { EntityManager } from 'typeorm';
import type { AuthContext } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { createdBy, ownsAgentRecord, scopedAgent } from '../accounts/agent-specific';
import { isAgentKey } from '../accounts/auth';
import { checkActionRequest } from './package-actions';
import type { PrivateMailboxRow } from './rows';
import { assertPackagesEnabled } from './package-custody';
import { Db, updateReturning } from './item-records';
import { errors } from '../../domain/shared/errors';
import { pagination } from '../../domain/shared/pagination';
import {
  ArrivalAction,
  ARRIVAL_LIMITS,
  ExpectedShipmentStatus,
  normaliseTrackingNumber,
  PieceKind,
} from '../../domain/physical-inbound/package-arrival';
import { sqlRows, sqlRun } from '../shared/sql';

const COLUMNS = `id, member_id, agent_id, mailbox_id, status, carrier, tracking_number, sender_name, description, kind,
  to_char(expected_date, 'YYYY-MM-DD') AS expected_date, notes, on_arrival, created_by, version, package_id, arrival_action_id,
  received_at, cancelled_at, created_at, updated_at`;

interface ShipmentRow {
  id: string;
  member_id: string;
  agent_id: string;
  mailbox_id: string;
  status: ExpectedShipmentStatus;
  carrier: string | null;
  tracking_number: string;
  sender_name: string | null;
  description: string | null;
  kind: PieceKind | null;
  expected_date: string | null;
  notes: string | null;
  on_arrival: ArrivalAction | null;
  created_by: 'agent' | 'member';
  version: number;
  package_id: string | null;
  arrival_action_id: string | null;
  received_at: Date | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function shipmentView(r: ShipmentRow) {
  return {
    object: 'expected_shipment' as const,
    id: r.id,
    agent_id: r.agent_id,
    mailbox_id: r.mailbox_id,
    status: r.status,
    carrier: r.carrier,
    tracking_number: r.tracking_number,
    sender_name: r.sender_name,
    description: r.description,
    kind: r.kind,
    expected_date: r.expected_date,
    notes: r.notes,
    on_arrival: r.on_arrival,
    package_id: r.package_id,
    arrival_action_id: r.arrival_action_id,
    version: r.version,
    created_by: r.created_by,
    received_at: iso(r.received_at),
    cancelled_at: iso(r.cancelled_at),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export interface ShipmentFields {
  carrier?: string | null;
  tracking_number?: string;
  sender_name?: string | null;
  description?: string | null;
  kind?: PieceKind | null;
  expected_date?: string | null;
  notes?: string | null;
  on_arrival?: ArrivalAction | null;
}

/** The tracking number's normalised form, refusing one with no letter or digit. */
function normalisedTracking(value: string): string {
  const normalised = normaliseTrackingNumber(value);
  if (!normalised) throw errors.validation([{ path: 'tracking_number', message: 'must contain letters or digits' }]);
  return normalised;
}

/** The on-arrival request as stored: a forward keeps its checked, normalised address. */
function checkedOnArrival(auth: AuthContext, onArrival: ArrivalAction): ArrivalAction {
  const address = checkActionRequest(auth, onArrival, 'on_arrival.');
  return address ? { ...onArrival, parameters: { ...onArrival.parameters, ...address } } : onArrival;
}

/** 409 naming the open shipment that has the tracking number, when the caller may see it. */
function duplicate(existing: { id: string; agent_id: string } | undefined, auth: AuthContext) {
  const visible = existing && (!isAgentKey(auth) || existing.agent_id === auth.agentId);
  return errors.conflict(
    'EXPECTED_SHIPMENT_DUPLICATE',
    'An open expected shipment of this account already has this tracking number.',
    {
      details: visible ? { existing_expected_shipment_id: existing.id } : {},
      suggestedAction: 'Update or cancel the existing expected shipment.',
    },
  );
}

const isUniqueViolation = (err: unknown) =>
  (err as { code?: string }).code === '23505' ||
  (err as { driverError?: { code?: string } }).driverError?.code === '23505';

async function openShipmentWithTracking(db: Db, auth: AuthContext, normalised: string) {
  const [row] = await sqlRows<Pick<ShipmentRow, 'id' | 'agent_id'>>(
    db,
    `SELECT id, agent_id FROM expected_shipments WHERE member_id = $1 AND tracking_number_normalized = $2 AND status = 'expected'`,
    [auth.memberId, normalised],
  );
  return row as Pick<ShipmentRow, 'id' | 'agent_id'> | undefined;
}

export interface ShipmentListQuery {
  agent_id?: string;
  status?: ExpectedShipmentStatus;
  carrier?: string;
  tracking_number?: string;
  limit: number;
  offset: number;
}

export async function listExpectedShipments(deps: Deps, auth: AuthContext, query: ShipmentListQuery) {
  await assertPackagesEnabled(deps, auth);
  const agentId = await scopedAgent(deps, auth, query.agent_id, { required: true });
  const params: unknown[] = [auth.memberId, agentId];
  const where = ['member_id = $1', 'agent_id = $2'];
  if (query.status) {
    params.push(query.status);
    where.push(`status = $${params.length}`);
  }
  if (query.carrier) {
    params.push(query.carrier.trim().toLowerCase());
    where.push(`lower(carrier) = $${params.length}`);
  }
  if (query.tracking_number) {
    params.push(normaliseTrackingNumber(query.tracking_number));
    where.push(`tracking_number_normalized = $${params.length}`);
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM expected_shipments WHERE ${where.join(' AND ')}`,
    params,
  );
  const rows = await sqlRows<ShipmentRow>(
    deps.db,
    `SELECT ${COLUMNS} FROM expected_shipments WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC
      LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, query.limit, query.offset],
  );
  return { expected_shipments: rows.map(shipmentView), pagination: pagination(total, query.limit, query.offset) };
}

/** POST /v1/expected-shipments (once per optional Idempotency-Key: api/routes/physical-inbound/idempotent-requests.ts). */
export async function createExpectedShipment(
  deps: Deps,
  auth: AuthContext,
  agentIdQuery: string | undefined,
  body: ShipmentFields & { tracking_number: string },
) {
  await assertPackagesEnabled(deps, auth);
  const agentId = (await scopedAgent(deps, auth, agentIdQuery, { required: true }))!;
  const normalised = normalisedTracking(body.tracking_number);
  const onArrival = body.on_arrival ? checkedOnArrival(auth, body.on_arrival) : null;
  const row = await deps.db.transaction(async (tx) => {
    // One creation at a time per agent, so the limit holds under concurrent calls.
    await sqlRun(tx, `SELECT 1 FROM agents WHERE id = $1 FOR UPDATE`, [agentId]);
    const [mailbox] = await sqlRows<Pick<PrivateMailboxRow, 'mailbox_id'>>(
      tx,
      `SELECT mailbox_id FROM private_mailboxes WHERE member_id = $1 AND status = 'active'`,
      [auth.memberId],
    );
    if (!mailbox) throw errors.notFound('Private mailbox');
    const [{ n }] = await sqlRows<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM expected_shipments WHERE agent_id = $1 AND status = 'expected'`,
      [agentId],
    );
    if (n >= ARRIVAL_LIMITS.openShipmentsPerAgent) {
      throw errors.unprocessable(
        'EXPECTED_SHIPMENT_LIMIT',
        `An agent may have at most ${ARRIVAL_LIMITS.openShipmentsPerAgent} open expected shipments.`,
        {
          suggestedAction: 'Cancel expected shipments that will not arrive.',
        },
      );
    }
    const [inserted] = await sqlRows<ShipmentRow>(
      tx,
      `INSERT INTO expected_shipments (member_id, agent_id, mailbox_id, carrier, tracking_number, tracking_number_normalized, sender_name,
         description, kind, expected_date, notes, on_arrival, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (member_id, tracking_number_normalized) WHERE status = 'expected' DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        auth.memberId,
        agentId,
        mailbox.mailbox_id,
        body.carrier ?? null,
        body.tracking_number.trim(),
        normalised,
        body.sender_name ?? null,
        body.description ?? null,
        body.kind ?? null,
        body.expected_date ?? null,
        body.notes ?? null,
        onArrival ? JSON.stringify(onArrival) : null,
        createdBy(auth),
      ],
    );
    if (!inserted) throw duplicate(await openShipmentWithTracking(tx, auth, normalised), auth);
    return inserted;
  });
  return { expected_shipment: shipmentView(row) };
}

/** The caller's shipment (404 for another member's or, with agent keys or ?agent_id=, another agent's). */
async function loadShipment(
  db: Db,
  auth: AuthContext,
  id: string,
  agentFilter: string | null,
  forUpdate = false,
): Promise<ShipmentRow> {
  const [row] = await sqlRows<ShipmentRow>(
    db,
    `SELECT ${COLUMNS} FROM expected_shipments WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [id],
  );
  if (!row || !ownsAgentRecord(auth, agentFilter, row)) throw errors.notFound('Expected shipment');
  return row;
}

export async function getExpectedShipment(deps: Deps, auth: AuthContext, id: string, agentIdQuery?: string) {
  await assertPackagesEnabled(deps, auth);
  const agentFilter = await scopedAgent(deps, auth, agentIdQuery, { required: false });
  return { expected_shipment: shipmentView(await loadShipment(deps.db, auth, id, agentFilter)) };
}

function assertOpen(row: ShipmentRow) {
  if (row.status !== 'expected') {
    throw errors.conflict(
      'EXPECTED_SHIPMENT_NOT_OPEN',
      `The expected shipment is ${row.status}; only an open (expected) one can change.`,
      {
        details: { status: row.status, package_id: row.package_id },
        suggestedAction:
          row.status === 'received'
            ? 'The package has arrived: act on it through /v1/packages/{package_id}.'
            : 'Create a new expected shipment instead.',
      },
    );
  }
}

/** PATCH: the fields sent replace the stored ones (null clears an optional field); only while expected. */
export async function updateExpectedShipment(
  deps: Deps,
  auth: AuthContext,
  id: string,
  agentIdQuery: string | undefined,
  body: ShipmentFields,
) {
  await assertPackagesEnabled(deps, auth);
  const agentFilter = await scopedAgent(deps, auth, agentIdQuery, { required: false });
  const normalised = body.tracking_number !== undefined ? normalisedTracking(body.tracking_number) : undefined;
  const onArrival = body.on_arrival ? checkedOnArrival(auth, body.on_arrival) : body.on_arrival;
  try {
    const row = await deps.db.transaction(async (tx: EntityManager) => {
      const current = await loadShipment(tx, auth, id, agentFilter, true);
      assertOpen(current);
      const pick = <K extends keyof ShipmentFields>(key: K, stored: unknown) =>
        body[key] !== undefined ? body[key] : stored;
      const [updated]: ShipmentRow[] = await updateReturning(
        tx,
        `UPDATE expected_shipments SET carrier = $2, tracking_number = $3, tracking_number_normalized = $4, sender_name = $5, description = $6,
           kind = $7, expected_date = $8, notes = $9, on_arrival = $10, version = version + 1, updated_at = now()
          WHERE id = $1 RETURNING ${COLUMNS}`,
        [
          id,
          pick('carrier', current.carrier),
          body.tracking_number?.trim() ?? current.tracking_number,
          normalised ?? normaliseTrackingNumber(current.tracking_number),
          pick('sender_name', current.sender_name),
          pick('description', current.description),
          pick('kind', current.kind),
          pick('expected_date', current.expected_date),
          pick('notes', current.notes),
          onArrival === undefined
            ? current.on_arrival
              ? JSON.stringify(current.on_arrival)
              : null
            : onArrival
              ? JSON.stringify(onArrival)
              : null,
        ],
      );
      return updated;
    });
    return { expected_shipment: shipmentView(row) };
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate(await openShipmentWithTracking(deps.db, auth, normalised!), auth);
    throw err;
  }
}

/** DELETE: cancels an open shipment; cancelling again answers the cancelled one. */
export async function cancelExpectedShipment(deps: Deps, auth: AuthContext, id: string, agentIdQuery?: string) {
  await assertPackagesEnabled(deps, auth);
  const agentFilter = await scopedAgent(deps, auth, agentIdQuery, { required: false });
  return deps.db.transaction(async (tx) => {
    const current = await loadShipment(tx, auth, id, agentFilter, true);
    if (current.status === 'cancelled') return { expected_shipment: shipmentView(current), already_cancelled: true };
    assertOpen(current);
    const [row]: ShipmentRow[] = await updateReturning(
      tx,
      `UPDATE expected_shipments SET status = 'cancelled', cancelled_at = now(), version = version + 1, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
    return { expected_shipment: shipmentView(row), already_cancelled: false };
  });
}

// ---------------------------------------------------------------------------------------
// Arrival (facility intake)

/** The agent that expects this tracking number at this mailbox, if an open shipment says so. */
export async function expectingAgent(
  db: Db,
  memberId: string,
  mailboxId: string,
  trackingNumber: string | null,
): Promise<string | null> {
  const normalised = trackingNumber ? normaliseTrackingNumber(trackingNumber) : '';
  if (!normalised) return null;
  const [row] = await sqlRows<Pick<ShipmentRow, 'agent_id'>>(
    db,
    `SELECT s.agent_id FROM expected_shipments s JOIN agents a ON a.id = s.agent_id AND a.deleted_at IS NULL
      WHERE s.member_id = $1 AND s.mailbox_id = $2 AND s.tracking_number_normalized = $3 AND s.status = 'expected'`,
    [memberId, mailboxId, normalised],
  );
  return row?.agent_id ?? null;
}

/** Marks the open shipment this arriving package satisfies as received and links it; null when none does. */
export async function receiveExpectedShipment(
  tx: Db,
  item: {
    id: string;
    member_id: string;
    agent_id: string | null;
    mailbox_id: string | null;
    tracking_number: string | null;
  },
) {
  const normalised = item.tracking_number ? normaliseTrackingNumber(item.tracking_number) : '';
  if (!normalised || !item.mailbox_id || !item.agent_id) return null;
  const [row]: ShipmentRow[] = await updateReturning(
    tx,
    `UPDATE expected_shipments SET status = 'received', package_id = $1, received_at = now(), version = version + 1, updated_at = now()
      WHERE member_id = $2 AND mailbox_id = $3 AND agent_id = $4 AND tracking_number_normalized = $5 AND status = 'expected'
      RETURNING ${COLUMNS}`,
    [item.id, item.member_id, item.mailbox_id, item.agent_id, normalised],
  );
  return row ?? null;
}

export async function setArrivalAction(tx: Db, shipmentId: string, actionId: string): Promise<void> {
  await sqlRun(tx, `UPDATE expected_shipments SET arrival_action_id = $2 WHERE id = $1`, [shipmentId, actionId]);
}

/** The shipment a package satisfied, as the package's detail summarises it. */
export async function shipmentOfPackage(db: Db, packageId: string) {
  const [r] = await sqlRows<ShipmentRow>(db, `SELECT ${COLUMNS} FROM expected_shipments WHERE package_id = $1`, [
    packageId,
  ]);
  return r
    ? {
        id: r.id,
        agent_id: r.agent_id,
        tracking_number: r.tracking_number,
        carrier: r.carrier,
        sender_name: r.sender_name,
        description: r.description,
        expected_date: r.expected_date,
        arrival_action_id: r.arrival_action_id,
      }
    : null;
}
