// Which facility fulfils live work, and the operator's controls over it. New work goes to
// the member's assigned facility, else the default facility (at most one, operator-set),
// else (no default: legacy) the oldest active facility. Sandbox work is never assigned.
// Work moves between facilities only while no facility has begun it: a piece before
// printing starts, a batch before a facility claims it (start or fail). The row's
// facility_id and status are the truth: every move decides under the row's lock, and the
// facility's own step re-checks ownership under the same lock
// (services/outbound-mail/piece-transitions.ts, claimFacilityBatch), so a move and a
// concurrent step never both win.
import type { Deps } from '../shared/deps';
import { codedError, ApiError } from '../../domain/shared/errors';
import { MailRow, setFacility } from '../outbound-mail/rows';
import { BatchRow, claimBatchForFacility, setBatchFacility } from '../batches/rows';
import type { FacilityRow, MemberRow } from '../accounts/rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';
import {
  clearDefaultFacility,
  clearOtherDefaultFacilities,
  deactivateFacilityRow,
  markDefaultFacility,
} from './facility-rows';

export const DEFAULT_ORIGIN_ZIP = '78701';

export interface AssignedFacility {
  id: string | null;
  originZip: string;
}

/**
 * The facility for new live work of `memberId`. Locks the chosen facility row FOR KEY SHARE (as
 * the work row's foreign key will), so inside a transaction a concurrent deactivation waits for
 * the work to commit and then moves it.
 */
export async function assignFacility(
  db: Queryable,
  testMode: boolean,
  memberId?: string | null,
): Promise<AssignedFacility> {
  if (testMode) return { id: null, originZip: DEFAULT_ORIGIN_ZIP };
  // The member's facility, else the default, else the oldest active one, in one statement.
  // A pick that waited on a deactivation (which locks every facility row) finds its row
  // no longer active and returns none; the second try, a new snapshot, sees the change.
  for (let attempt = 0; attempt < 2; attempt++) {
    const [row] = await sqlRows<Pick<FacilityRow, 'id' | 'origin_zip'>>(
      db,
      `SELECT f.id, f.origin_zip FROM facilities f
         LEFT JOIN facility_assignments a ON a.facility_id = f.id AND a.member_id = $1
        WHERE f.status = 'active'
        ORDER BY (a.member_id IS NOT NULL) DESC, f.is_default DESC, f.created_at, f.id
        LIMIT 1 FOR KEY SHARE OF f`,
      [memberId ?? null],
    );
    if (row) return { id: row.id, originZip: row.origin_zip };
  }
  return { id: null, originZip: DEFAULT_ORIGIN_ZIP };
}

// Work no facility has begun, and work a facility has begun and still owes a step on.
const QUEUED_MAIL = `NOT m.test_mode AND m.status IN ('pending_approval','funding_pending','submitted') AND m.printing_started_at IS NULL`;
const STARTED_MAIL = `NOT m.test_mode AND ((m.status = 'submitted' AND m.printing_started_at IS NOT NULL) OR m.status IN ('ready','mailed'))`;
const QUEUED_BATCH = `NOT b.test_mode AND b.status IN ('paid','generating','submitted') AND b.facility_claimed_at IS NULL`;
const STARTED_BATCH = `NOT b.test_mode AND (b.status = 'in_progress' OR (b.status IN ('paid','generating','submitted') AND b.facility_claimed_at IS NOT NULL))`;

/** The rows of an UPDATE/DELETE ... RETURNING. */
async function returning<T>(db: Queryable, sql: string, params: unknown[]): Promise<T[]> {
  return sqlRows<T>(db, sql, params);
}

/** The operator named something that does not exist. */
export function noSuch(what: string, id: string): ApiError {
  return codedError(404, 'NOT_FOUND', `no ${what} ${id}`, { suggestedAction: `Check the ${what} id.` });
}

function refused(code: string, message: string, suggestedAction: string, details?: Record<string, unknown>): ApiError {
  return codedError(409, code, message, { suggestedAction, details });
}

async function activeFacility(db: Queryable, id: string): Promise<{ id: string; name: string }> {
  const [f] = /^[0-9a-f-]{36}$/i.test(id)
    ? await sqlRows<Pick<FacilityRow, 'id' | 'name' | 'status'>>(
        db,
        `SELECT id, name, status FROM facilities WHERE id = $1 FOR KEY SHARE`,
        [id],
      )
    : [];
  if (!f) throw noSuch('facility', id);
  if (f.status !== 'active') {
    throw refused(
      'FACILITY_INACTIVE',
      `facility ${id} (${f.name}) is inactive`,
      'Pick an active facility (facility:list).',
    );
  }
  return f;
}

async function lockFacilities(
  tx: Queryable,
): Promise<Array<{ id: string; name: string; status: string; is_default: boolean }>> {
  return sqlRows<{ id: string; name: string; status: string; is_default: boolean }>(
    tx,
    `SELECT id, name, status, is_default FROM facilities ORDER BY id FOR UPDATE`,
  );
}

export interface FacilitySummary {
  id: string;
  name: string;
  status: 'active' | 'inactive';
  is_default: boolean;
  origin_zip: string;
  assigned_members: number;
  queued: { mail: number; batches: number };
  in_progress: { mail: number; batches: number };
  created_at: string;
}

/** Every facility with its queued and begun work; which one is the default; unassigned live work. */
export async function listFacilities(db: Queryable) {
  type Row = Omit<FacilitySummary, 'queued' | 'in_progress' | 'created_at'> & {
    queued_mail: number;
    queued_batches: number;
    started_mail: number;
    started_batches: number;
    created_at: Date;
  };
  const rows = await sqlRows<Row>(
    db,
    `
    SELECT f.id, f.name, f.status, f.is_default, f.origin_zip, f.created_at,
           (SELECT count(*)::int FROM facility_assignments a WHERE a.facility_id = f.id) AS assigned_members,
           (SELECT count(*)::int FROM outbound_mail m WHERE m.facility_id = f.id AND ${QUEUED_MAIL}) AS queued_mail,
           (SELECT count(*)::int FROM batches b WHERE b.facility_id = f.id AND ${QUEUED_BATCH}) AS queued_batches,
           (SELECT count(*)::int FROM outbound_mail m WHERE m.facility_id = f.id AND ${STARTED_MAIL}) AS started_mail,
           (SELECT count(*)::int FROM batches b WHERE b.facility_id = f.id AND ${STARTED_BATCH}) AS started_batches
      FROM facilities f ORDER BY f.created_at, f.id`,
  );
  const [unassigned] = await sqlRows<{ mail: number }>(
    db,
    `SELECT count(*)::int AS mail FROM outbound_mail m WHERE m.facility_id IS NULL AND ${QUEUED_MAIL}`,
  );
  const facilities: FacilitySummary[] = rows.map((r) => ({
    id: r.id,
    name: r.name,
    status: r.status,
    is_default: r.is_default,
    origin_zip: r.origin_zip,
    assigned_members: r.assigned_members,
    queued: { mail: r.queued_mail, batches: r.queued_batches },
    in_progress: { mail: r.started_mail, batches: r.started_batches },
    created_at: r.created_at.toISOString(),
  }));
  const current = facilities.find((f) => f.is_default && f.status === 'active');
  const fallback = facilities.find((f) => f.status === 'active');
  return {
    facilities,
    default_facility_id: current?.id ?? null,
    // Where a member without an assignment's new live work goes now.
    new_work_goes_to: current?.id ?? fallback?.id ?? null,
    unassigned_queued_mail: unassigned.mail as number,
  };
}

/** Makes `facilityId` (active) the one default facility. */
export async function setDefaultFacility(deps: Deps, facilityId: string) {
  return deps.db.transaction(async (tx) => {
    await lockFacilities(tx);
    const f = await activeFacility(tx, facilityId);
    const [previous] = await sqlRows<Pick<FacilityRow, 'id'>>(tx, `SELECT id FROM facilities WHERE is_default`);
    await clearOtherDefaultFacilities(tx, f.id);
    await markDefaultFacility(tx, f.id);
    return { default_facility_id: f.id, name: f.name, previous_default_facility_id: previous?.id ?? null };
  });
}

/** Sends a member's new live work to `facilityId`; null removes the assignment (back to the default). Queued work stays where it is. */
export async function assignMemberFacility(deps: Deps, memberId: string, facilityId: string | null) {
  return deps.db.transaction(async (tx) => {
    const [member] = /^[0-9a-f-]{36}$/i.test(memberId)
      ? await sqlRows<Pick<MemberRow, 'id'>>(tx, `SELECT id FROM members WHERE id = $1`, [memberId])
      : [];
    if (!member) throw noSuch('member', memberId);
    if (facilityId === null) {
      const [removed] = await returning<{ facility_id: string }>(
        tx,
        `DELETE FROM facility_assignments WHERE member_id = $1 RETURNING facility_id`,
        [memberId],
      );
      return { member_id: memberId, facility_id: null, previous_facility_id: removed?.facility_id ?? null };
    }
    const f = await activeFacility(tx, facilityId);
    const [previous] = await sqlRows<{ facility_id: string }>(
      tx,
      `SELECT facility_id FROM facility_assignments WHERE member_id = $1 FOR UPDATE`,
      [memberId],
    );
    await sqlRun(
      tx,
      `INSERT INTO facility_assignments (member_id, facility_id) VALUES ($1, $2)
       ON CONFLICT (member_id) DO UPDATE SET facility_id = EXCLUDED.facility_id, assigned_at = now()`,
      [memberId, f.id],
    );
    return { member_id: memberId, facility_id: f.id, previous_facility_id: previous?.facility_id ?? null };
  });
}

interface Moved {
  to: string;
  mail: number;
  batches: number;
}

/**
 * Deactivates a facility in one transaction: its keys stop working, its member assignments
 * end, and its queued work moves to each member's new facility (assignment, else default).
 * Refuses, changing nothing, when queued work would have nowhere to go, or (unless
 * leaveInProgress) while it still owes steps on work it has begun.
 */
export async function deactivateFacility(
  deps: Deps,
  facilityId: string,
  opts: { newDefaultId?: string | null; leaveInProgress?: boolean } = {},
) {
  return deps.db.transaction(async (tx) => {
    const all = await lockFacilities(tx);
    const f = all.find((x) => x.id === facilityId);
    if (!f) throw noSuch('facility', facilityId);
    if (f.status === 'inactive') return { facility_id: f.id, status: 'inactive', already_inactive: true };
    if (opts.newDefaultId === f.id)
      throw refused(
        'FACILITY_DEFAULT_INVALID',
        'the new default cannot be the facility being deactivated',
        'Name another active facility.',
      );
    if (opts.newDefaultId) await activeFacility(tx, opts.newDefaultId);

    const [started] = await sqlRows<{ mail: number; batches: number }>(
      tx,
      `
      SELECT (SELECT count(*)::int FROM outbound_mail m WHERE m.facility_id = $1 AND ${STARTED_MAIL}) AS mail,
             (SELECT count(*)::int FROM batches b WHERE b.facility_id = $1 AND ${STARTED_BATCH}) AS batches`,
      [f.id],
    );
    if ((started.mail || started.batches) && !opts.leaveInProgress) {
      throw refused(
        'FACILITY_HAS_WORK_IN_PROGRESS',
        `facility ${f.id} (${f.name}) has begun ${started.mail} piece(s) and ${started.batches} batch(es) it has not finished; once inactive its keys stop working and nobody can report their next steps`,
        'Let the facility finish them, or deactivate anyway with --leave-in-progress.',
        { in_progress: started },
      );
    }

    await deactivateFacilityRow(tx, f.id);
    if (opts.newDefaultId) {
      await clearDefaultFacility(tx);
      await markDefaultFacility(tx, opts.newDefaultId);
    }
    const unassigned = await returning(
      tx,
      `DELETE FROM facility_assignments WHERE facility_id = $1 RETURNING member_id`,
      [f.id],
    );

    // Locking re-checks each row: work a facility began meanwhile is no longer queued and stays.
    const mail = await sqlRows<{ id: string; member_id: string }>(
      tx,
      `SELECT m.id, m.member_id FROM outbound_mail m WHERE m.facility_id = $1 AND ${QUEUED_MAIL} ORDER BY m.id FOR UPDATE`,
      [f.id],
    );
    const batches = await sqlRows<{ id: string; member_id: string }>(
      tx,
      `SELECT b.id, b.member_id FROM batches b WHERE b.facility_id = $1 AND ${QUEUED_BATCH} ORDER BY b.id FOR UPDATE`,
      [f.id],
    );

    const targets = new Map<string, string | null>();
    for (const memberId of new Set([...mail, ...batches].map((w) => w.member_id))) {
      targets.set(memberId, (await assignFacility(tx, false, memberId)).id);
    }
    if ([...targets.values()].some((t) => t === null)) {
      throw refused(
        'FACILITY_LAST_WITH_QUEUED_WORK',
        `facility ${f.id} (${f.name}) is the last active facility and has ${mail.length} queued piece(s) and ${batches.length} queued batch(es) with nowhere to go`,
        'Create another facility first (facility:create), or wait until its queue is empty.',
        { queued: { mail: mail.length, batches: batches.length } },
      );
    }

    const moved = new Map<string, Moved>();
    const slot = (to: string) => moved.get(to) ?? moved.set(to, { to, mail: 0, batches: 0 }).get(to)!;
    for (const m of mail) {
      const to = targets.get(m.member_id)!;
      await setFacility(tx, m.id, to);
      slot(to).mail++;
    }
    for (const b of batches) {
      const to = targets.get(b.member_id)!;
      await setBatchFacility(tx, b.id, to);
      slot(to).batches++;
    }
    const [current] = await sqlRows<Pick<FacilityRow, 'id'>>(
      tx,
      `SELECT id FROM facilities WHERE is_default AND status = 'active'`,
    );
    const [fallback] = current
      ? []
      : await sqlRows<Pick<FacilityRow, 'id'>>(
          tx,
          `SELECT id FROM facilities WHERE status = 'active' ORDER BY created_at, id LIMIT 1`,
        );
    return {
      facility_id: f.id,
      status: 'inactive',
      already_inactive: false,
      moved: [...moved.values()],
      assignments_removed: unassigned.length,
      left_in_progress: started,
      default_facility_id: current?.id ?? null,
      ...(f.is_default && !current
        ? {
            warning: `there is no default facility now; new work goes to ${fallback ? `the oldest active facility ${fallback.id}` : 'no facility'} until you run facility:set-default`,
          }
        : {}),
    };
  });
}

/** Moves a live piece no facility has begun printing to another active facility. */
export async function reassignMail(deps: Deps, mailId: string, facilityId: string) {
  return deps.db.transaction(async (tx) => {
    const [m] = /^[0-9a-f-]{36}$/i.test(mailId)
      ? await sqlRows<Pick<MailRow, 'id' | 'status' | 'test_mode' | 'facility_id' | 'printing_started_at'>>(
          tx,
          `SELECT id, status, test_mode, facility_id, printing_started_at FROM outbound_mail WHERE id = $1 FOR UPDATE`,
          [mailId],
        )
      : [];
    if (!m) throw noSuch('outbound mail', mailId);
    if (m.test_mode)
      throw refused(
        'MAIL_NOT_REASSIGNABLE',
        `outbound mail ${m.id} is a sandbox piece; no facility fulfils it`,
        'Only live pieces have a facility.',
      );
    if (!['pending_approval', 'funding_pending', 'submitted'].includes(m.status) || m.printing_started_at) {
      const why = m.status === 'submitted' ? 'printing has started' : `it is ${m.status}`;
      throw refused(
        'MAIL_NOT_REASSIGNABLE',
        `outbound mail ${m.id} cannot move: ${why}; it stays with facility ${m.facility_id}`,
        'Only pieces whose printing has not started can move.',
        { status: m.status, facility_id: m.facility_id },
      );
    }
    const f = await activeFacility(tx, facilityId);
    if (m.facility_id === f.id)
      return { mail_id: m.id, from_facility_id: m.facility_id, to_facility_id: f.id, unchanged: true };
    await setFacility(tx, m.id, f.id);
    return { mail_id: m.id, from_facility_id: m.facility_id, to_facility_id: f.id, unchanged: false };
  });
}

/** Moves a live batch no facility has claimed (started or failed) to another active facility. */
export async function reassignBatch(deps: Deps, batchId: string, facilityId: string) {
  return deps.db.transaction(async (tx) => {
    const [b] = await sqlRows<Pick<BatchRow, 'id' | 'status' | 'test_mode' | 'facility_id' | 'facility_claimed_at'>>(
      tx,
      `SELECT id, status, test_mode, facility_id, facility_claimed_at FROM batches WHERE id = $1 FOR UPDATE`,
      [batchId],
    );
    if (!b) throw noSuch('batch', batchId);
    if (b.test_mode)
      throw refused(
        'BATCH_NOT_REASSIGNABLE',
        `batch ${b.id} is a sandbox batch; no facility fulfils it`,
        'Only live batches have a facility.',
      );
    if (b.status === 'draft') {
      throw refused(
        'BATCH_NOT_REASSIGNABLE',
        `batch ${b.id} is a draft; it gets a facility when it is confirmed`,
        'Assign the member (facility:assign) to choose where its batches go, or reassign after confirmation.',
        { status: b.status },
      );
    }
    if (!['paid', 'generating', 'submitted'].includes(b.status) || b.facility_claimed_at) {
      const why =
        b.facility_claimed_at || b.status === 'in_progress' ? 'its facility has begun it' : `it is ${b.status}`;
      throw refused(
        'BATCH_NOT_REASSIGNABLE',
        `batch ${b.id} cannot move: ${why}; it stays with facility ${b.facility_id}`,
        'Only batches no facility has started can move.',
        { status: b.status, facility_id: b.facility_id },
      );
    }
    const f = await activeFacility(tx, facilityId);
    if (b.facility_id === f.id)
      return { batch_id: b.id, from_facility_id: b.facility_id, to_facility_id: f.id, unchanged: true };
    await setBatchFacility(tx, b.id, f.id);
    return { batch_id: b.id, from_facility_id: b.facility_id, to_facility_id: f.id, unchanged: false };
  });
}

/**
 * A facility's first step on a batch (start or fail) claims it, atomically with the
 * ownership check, so an operator can no longer move it. False: not this facility's batch.
 */
export async function claimFacilityBatch(db: Queryable, facilityId: string, batchId: string): Promise<boolean> {
  return claimBatchForFacility(db, facilityId, batchId);
}
