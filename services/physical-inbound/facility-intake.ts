// Facility intake of physical inbound (sk_facility_ keys): private receiving mailboxes
// (assigned by the operator CLI, identified by the facility), and intake drafts: draft the
// piece from its label, attach sealed-exterior photos, match it to a member's mailbox and
// agent, and commit it into custody, where it becomes an inbound item.
import { paginationWithNext } from '../../domain/shared/pagination';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { UploadedFile, uploadBytes } from '../shared/uploads';
import { errors } from '../../domain/shared/errors';
import { sha256Hex } from '../../domain/accounts/keys';
import { checkImage } from '../../domain/shared/images';
import { assignFacility } from '../operations/facilities';
import { expectingAgent } from './expected-shipments';
import { applyArrival } from './package-arrival';
import { startAfterCommit, startInboundReceivedWorkflow } from './inbound-workflows';
import { Db, findItem, insertReceivedItem, recordActivity, toItemRow, updateReturning } from './item-records';
import { refreshSearchFields } from './search-index';
import type { InboundDraftRow, InboundPhotoRow, PrivateMailboxRow } from './rows';
import type { MemberRow } from '../accounts/rows';
import { assignReceivedItem } from './inbox-rows';
import { sqlRows, sqlRun } from '../shared/sql';

// ---------------------------------------------------------------------------------------
// Private mailboxes

export interface PrivateMailbox {
  mailbox_id: string;
  member_id: string;
  agent_id: string | null;
  facility_id: string | null;
  status: string;
  created_at: string;
}

function mailboxView(r: PrivateMailboxRow): PrivateMailbox {
  return {
    mailbox_id: r.mailbox_id,
    member_id: r.member_id,
    agent_id: r.agent_id,
    facility_id: r.facility_id,
    status: r.status,
    created_at: r.created_at.toISOString(),
  };
}

/**
 * Gives a member its private receiving mailbox (PMB-<n>) at a facility (the default one
 * unless named), or re-points the existing one at another default agent. Operator CLI.
 */
export async function assignMailbox(
  deps: Deps,
  input: { memberId: string; agentId?: string | null; facilityId?: string | null },
): Promise<PrivateMailbox> {
  return deps.db.transaction(async (tx) => {
    const [member] = await sqlRows<Pick<MemberRow, 'id'>>(tx, `SELECT id FROM members WHERE id = $1 FOR UPDATE`, [
      input.memberId,
    ]);
    if (!member) throw new Error(`no member ${input.memberId}`);
    if (input.agentId) {
      const [agent] = await sqlRows<{ '?column?': number }>(
        tx,
        `SELECT 1 FROM agents WHERE id = $1 AND member_id = $2 AND deleted_at IS NULL`,
        [input.agentId, input.memberId],
      );
      if (!agent) throw new Error(`agent ${input.agentId} does not belong to member ${input.memberId}`);
    }
    const facilityId = input.facilityId ?? (await assignFacility(tx, false, input.memberId)).id;
    const [existing] = await sqlRows<PrivateMailboxRow>(
      tx,
      `SELECT * FROM private_mailboxes WHERE member_id = $1 AND status = 'active'`,
      [input.memberId],
    );
    if (existing) {
      const [updated] = await updateReturning<PrivateMailboxRow>(
        tx,
        `UPDATE private_mailboxes SET agent_id = COALESCE($2, agent_id), facility_id = COALESCE($3, facility_id), updated_at = now()
          WHERE id = $1 RETURNING *`,
        [existing.id, input.agentId ?? null, input.facilityId ?? null],
      );
      return mailboxView(updated);
    }
    const [row] = await sqlRows<PrivateMailboxRow>(
      tx,
      `INSERT INTO private_mailboxes (mailbox_id, member_id, agent_id, facility_id)
       VALUES ('PMB-' || nextval('private_mailbox_number_seq'), $1, $2, $3) RETURNING *`,
      [input.memberId, input.agentId ?? null, facilityId],
    );
    return mailboxView(row);
  });
}

/** "pmb 1001", "#1001", "1001" and "PMB-1001" all name PMB-1001. */
export function normaliseMailboxId(value: string): string {
  const digits = /^\s*(?:pmb)?[\s#-]*(\d+)\s*$/i.exec(value);
  return digits ? `PMB-${digits[1]}` : value.trim().toUpperCase();
}

/** POST /v1/facility/mailboxes/identify: which member (and agent) a piece is for. */
export async function identifyMailbox(
  deps: Deps,
  auth: AuthContext,
  input: { mailbox_id?: string; recipient_name?: string },
) {
  const params: unknown[] = [auth.facilityId];
  const conditions: string[] = [];
  if (input.mailbox_id) {
    params.push(normaliseMailboxId(input.mailbox_id));
    conditions.push(`b.mailbox_id = $${params.length}`);
  }
  if (input.recipient_name) {
    params.push(input.recipient_name.trim().toLowerCase());
    conditions.push(`(lower(m.full_name) = $${params.length} OR EXISTS (SELECT 1 FROM agents a WHERE a.member_id = m.id AND a.deleted_at IS NULL
      AND (lower(a.name) = $${params.length} OR lower(a.display_name) = $${params.length})))`);
  }
  const rows = await sqlRows<
    Pick<PrivateMailboxRow, 'mailbox_id' | 'member_id' | 'agent_id'> &
      Pick<MemberRow, 'full_name'> & { agents: Array<{ id: string; name: string }> | null }
  >(
    deps.db,
    `SELECT b.mailbox_id, b.member_id, b.agent_id, m.full_name,
            (SELECT json_agg(json_build_object('id', a.id, 'name', a.name) ORDER BY a.created_at) FROM agents a
              WHERE a.member_id = m.id AND a.deleted_at IS NULL) AS agents
       FROM private_mailboxes b JOIN members m ON m.id = b.member_id
      WHERE b.status = 'active' AND (b.facility_id = $1 OR b.facility_id IS NULL) AND ${conditions.join(' AND ')}
      ORDER BY b.mailbox_id LIMIT 20`,
    params,
  );
  return {
    matches: rows.map((r) => ({
      mailbox_id: r.mailbox_id,
      member_id: r.member_id,
      member_name: r.full_name,
      default_agent_id: r.agent_id,
      agents: r.agents ?? [],
    })),
  };
}

// ---------------------------------------------------------------------------------------
// Intake drafts

/** An intake photo as a draft's view lists it. */
type DraftPhoto = Omit<InboundPhotoRow, 'item_id'>;

export interface DraftFields {
  kind: 'letter' | 'parcel';
  carrier?: string | null;
  tracking_number?: string | null;
  weight_oz?: number | null;
  sender_name?: string | null;
  recipient_name?: string | null;
  notes?: string | null;
  mailbox_id?: string | null;
}

async function draftView(deps: Deps, draft: InboundDraftRow) {
  const [view] = await draftViews(deps, [draft]);
  return view;
}

/** The drafts as the facility sees them, with their photos (one query for all drafts). */
async function draftViews(deps: Deps, drafts: InboundDraftRow[]) {
  const rows = drafts.length
    ? await sqlRows<DraftPhoto>(
        deps.db,
        `SELECT id, draft_id, photo_type, storage_key, content_type, size_bytes, sha256, created_at FROM inbound_photos
      WHERE draft_id = ANY($1::uuid[]) ORDER BY created_at, id`,
        [drafts.map((d) => d.id)],
      )
    : [];
  const byDraft = new Map<string | null, DraftPhoto[]>();
  for (const p of rows) (byDraft.get(p.draft_id) ?? byDraft.set(p.draft_id, []).get(p.draft_id)!).push(p);
  return Promise.all(drafts.map((draft) => draftViewWith(deps, draft, byDraft.get(draft.id) ?? [])));
}

async function draftViewWith(deps: Deps, draft: InboundDraftRow, photos: DraftPhoto[]) {
  return {
    object: 'inbound_draft' as const,
    id: draft.id,
    facility_id: draft.facility_id,
    kind: draft.kind,
    carrier: draft.carrier,
    tracking_number: draft.tracking_number,
    weight_oz: draft.weight_oz === null ? null : Number(draft.weight_oz),
    sender_name: draft.sender_name,
    recipient_name: draft.recipient_name,
    notes: draft.notes,
    mailbox_id: draft.mailbox_id,
    member_id: draft.member_id,
    agent_id: draft.agent_id,
    status: draft.status,
    version: draft.version,
    item_id: draft.item_id,
    photos: await Promise.all(
      photos.map(async (p) => ({
        id: p.id,
        photo_type: p.photo_type,
        content_type: p.content_type,
        size_bytes: p.size_bytes,
        sha256: p.sha256,
        created_at: p.created_at.toISOString(),
        url: await deps.storage.signedUrl(p.storage_key),
      })),
    ),
    created_at: draft.created_at.toISOString(),
    updated_at: draft.updated_at.toISOString(),
  };
}

async function loadDraft(db: Db, auth: AuthContext, id: string, forUpdate = false): Promise<InboundDraftRow> {
  const [draft] = await sqlRows<InboundDraftRow>(
    db,
    `SELECT * FROM inbound_drafts WHERE id = $1 AND facility_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [id, auth.facilityId],
  );
  if (!draft) throw errors.notFound('Draft');
  return draft;
}

function assertDraftVersion(draft: { version: number }, expected: number) {
  if (draft.version !== expected) {
    throw errors.conflict(
      'VERSION_STALE',
      `The draft is at version ${draft.version}; expected_version ${expected} is stale.`,
      {
        details: { current_version: draft.version, expected_version: expected },
        suggestedAction: 'GET the draft again and retry with its current version.',
      },
    );
  }
}

function assertDraftOpen(draft: { status: string }) {
  if (draft.status === 'committed')
    throw errors.conflict('DRAFT_COMMITTED', 'The draft is committed; it can no longer change.', {
      suggestedAction: 'Start a new draft for another piece; the committed one is an inbound item now.',
    });
}

export async function createDraft(deps: Deps, auth: AuthContext, body: DraftFields) {
  const [draft] = await sqlRows<InboundDraftRow>(
    deps.db,
    `INSERT INTO inbound_drafts (facility_id, kind, carrier, tracking_number, weight_oz, sender_name, recipient_name, notes, mailbox_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [
      auth.facilityId,
      body.kind,
      body.carrier ?? null,
      body.tracking_number ?? null,
      body.weight_oz ?? null,
      body.sender_name ?? null,
      body.recipient_name ?? null,
      body.notes ?? null,
      body.mailbox_id ? normaliseMailboxId(body.mailbox_id) : null,
    ],
  );
  return { draft: await draftView(deps, draft) };
}

export async function listDrafts(
  deps: Deps,
  auth: AuthContext,
  query: { status?: string; limit: number; offset: number },
) {
  const params: unknown[] = [auth.facilityId];
  let where = 'facility_id = $1';
  if (query.status) {
    params.push(query.status);
    where += ` AND status = $${params.length}`;
  }
  params.push(query.limit, query.offset);
  const rows = await sqlRows<InboundDraftRow & { total: string }>(
    deps.db,
    `SELECT *, count(*) OVER () AS total FROM inbound_drafts WHERE ${where} ORDER BY created_at DESC, id DESC
      LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return {
    drafts: await draftViews(deps, rows),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, query.limit, query.offset),
  };
}

export async function getDraft(deps: Deps, auth: AuthContext, id: string) {
  return { draft: await draftView(deps, await loadDraft(deps.db, auth, id)) };
}

/** PUT: replaces the draft's label fields (absent fields become empty). */
export async function updateDraft(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: DraftFields & { expected_version: number },
) {
  const draft = await deps.db.transaction(async (tx) => {
    const current = await loadDraft(tx, auth, id, true);
    assertDraftOpen(current);
    assertDraftVersion(current, body.expected_version);
    const [updated] = await updateReturning<InboundDraftRow>(
      tx,
      `UPDATE inbound_drafts SET kind = $2, carrier = $3, tracking_number = $4, weight_oz = $5, sender_name = $6, recipient_name = $7,
         notes = $8, mailbox_id = COALESCE($9, mailbox_id), version = version + 1, updated_at = now() WHERE id = $1 RETURNING *`,
      [
        id,
        body.kind,
        body.carrier ?? null,
        body.tracking_number ?? null,
        body.weight_oz ?? null,
        body.sender_name ?? null,
        body.recipient_name ?? null,
        body.notes ?? null,
        body.mailbox_id ? normaliseMailboxId(body.mailbox_id) : null,
      ],
    );
    return updated;
  });
  return { draft: await draftView(deps, draft) };
}

/** A photo or page image, decoded in full before anything is stored (400 on `field` otherwise). */
export async function readImage(file: UploadedFile, field: string) {
  const data = await uploadBytes(file);
  const image = await checkImage(data, field);
  return { data, contentType: image.contentType, ext: image.extension };
}

export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

/** POST .../drafts/{id}/exterior: a photo of the sealed exterior (or the label), kept in S3. */
export async function attachExterior(
  deps: Deps,
  auth: AuthContext,
  id: string,
  file: UploadedFile | undefined,
  photoType: 'sealed_exterior' | 'label',
) {
  if (!file) throw errors.validation([{ path: 'photo', message: 'a photo file is required' }]);
  const current = await loadDraft(deps.db, auth, id);
  assertDraftOpen(current);
  const image = await readImage(file, 'photo');
  const photoId = randomUUID();
  const key = `inbound/drafts/${id}/${photoId}.${image.ext}`;
  await deps.storage.put(key, image.data, image.contentType);
  const draft = await deps.db.transaction(async (tx) => {
    const locked = await loadDraft(tx, auth, id, true);
    assertDraftOpen(locked);
    await sqlRun(
      tx,
      `INSERT INTO inbound_photos (id, draft_id, photo_type, storage_key, content_type, size_bytes, sha256) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [photoId, id, photoType, key, image.contentType, image.data.length, sha256Hex(image.data)],
    );
    const [updated] = await updateReturning<InboundDraftRow>(
      tx,
      `UPDATE inbound_drafts SET version = version + 1, updated_at = now() WHERE id = $1 RETURNING *`,
      [id],
    );
    return updated;
  });
  return { draft: await draftView(deps, draft), photo_id: photoId };
}

/** POST .../drafts/{id}/match: assigns the piece to a member's mailbox and an agent. */
export async function matchDraft(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: { mailbox_id: string; agent_id?: string; expected_version: number },
) {
  const draft = await deps.db.transaction(async (tx) => {
    const current = await loadDraft(tx, auth, id, true);
    assertDraftOpen(current);
    assertDraftVersion(current, body.expected_version);
    const mailboxId = normaliseMailboxId(body.mailbox_id);
    const [mailbox] = await sqlRows<PrivateMailboxRow>(
      tx,
      `SELECT * FROM private_mailboxes WHERE mailbox_id = $1 AND status = 'active' AND (facility_id = $2 OR facility_id IS NULL)`,
      [mailboxId, auth.facilityId],
    );
    if (!mailbox) throw errors.notFound('Mailbox');
    // Unnamed, the piece goes to the agent expecting its tracking number, else the mailbox's default agent.
    const agentId =
      body.agent_id ??
      (await expectingAgent(tx, mailbox.member_id, mailboxId, current.tracking_number)) ??
      mailbox.agent_id;
    if (!agentId) {
      throw errors.validation([
        { path: 'agent_id', message: `mailbox ${mailboxId} has no default agent; name the agent the piece is for` },
      ]);
    }
    const [agent] = await sqlRows<{ '?column?': number }>(
      tx,
      `SELECT 1 FROM agents WHERE id = $1 AND member_id = $2 AND deleted_at IS NULL`,
      [agentId, mailbox.member_id],
    );
    if (!agent) throw errors.validation([{ path: 'agent_id', message: 'is not an agent of the mailbox holder' }]);
    const [updated] = await updateReturning<InboundDraftRow>(
      tx,
      `UPDATE inbound_drafts SET mailbox_id = $2, member_id = $3, agent_id = $4, status = 'matched', version = version + 1, updated_at = now()
        WHERE id = $1 RETURNING *`,
      [id, mailboxId, mailbox.member_id, agentId],
    );
    return updated;
  });
  return { draft: await draftView(deps, draft) };
}

function referenceCode(kind: 'letter' | 'parcel', at: Date): string {
  return `${kind === 'letter' ? 'LTR' : 'PCL'}-${at.toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(3).toString('hex').toUpperCase()}`;
}

/**
 * POST .../drafts/{id}/commit: the piece enters custody (status received), is assigned
 * to the matched agent's inbox, satisfies the agent's expected shipment and gets what its
 * mailbox rules ask for (services/physical-inbound/package-arrival.ts), and inbound.received follows.
 */
export async function commitDraft(deps: Deps, auth: AuthContext, id: string, body: { expected_version: number }) {
  const result = await deps.db.transaction(async (tx) => {
    const draft = await loadDraft(tx, auth, id, true);
    assertDraftOpen(draft);
    assertDraftVersion(draft, body.expected_version);
    if (draft.status !== 'matched')
      throw errors.conflict('DRAFT_NOT_MATCHED', 'Match the draft to a mailbox before committing it.', {
        suggestedAction: 'POST /v1/facility/inbound/drafts/{id}/match, then commit.',
      });
    const [{ n }] = await sqlRows<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM inbound_photos WHERE draft_id = $1 AND photo_type = 'sealed_exterior'`,
      [id],
    );
    if (n === 0)
      throw errors.conflict('EXTERIOR_PHOTO_REQUIRED', 'Attach at least one sealed-exterior photo before committing.', {
        suggestedAction:
          'POST /v1/facility/inbound/drafts/{id}/exterior with a photo of the sealed piece, then commit.',
      });
    const [member] = await sqlRows<Pick<MemberRow, 'full_name' | 'email'>>(
      tx,
      `SELECT full_name, email FROM members WHERE id = $1`,
      [draft.member_id],
    );
    const now = new Date();
    const row = await insertReceivedItem(tx, {
      reference_code: referenceCode(draft.kind, now),
      member_id: draft.member_id,
      agent_id: draft.agent_id,
      facility_id: auth.facilityId,
      mailbox_id: draft.mailbox_id,
      draft_id: id,
      kind: draft.kind,
      carrier: draft.carrier,
      tracking_number: draft.tracking_number,
      weight_oz: draft.weight_oz,
      sender_name: draft.sender_name,
      recipient_name: draft.recipient_name ?? member.full_name,
      recipient_email: member.email,
      received_at: now,
    });
    const item = toItemRow(row);
    await sqlRun(tx, `UPDATE inbound_photos SET item_id = $2 WHERE draft_id = $1`, [id, item.id]);
    const assignment = await assignReceivedItem(tx, item.id, draft.agent_id, draft.member_id);
    const [committed] = await updateReturning<InboundDraftRow>(
      tx,
      `UPDATE inbound_drafts SET status = 'committed', item_id = $2, version = version + 1, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, item.id],
    );
    await recordActivity(tx, item, 'received', {
      facility_id: auth.facilityId,
      mailbox_id: item.mailbox_id,
      draft_id: id,
    });
    await recordActivity(tx, item, 'assigned', { agent_id: item.agent_id, assignment_id: assignment.id });
    const arrival = await applyArrival(tx, item);
    await refreshSearchFields(tx, item.id);
    return { item: (await findItem(tx, item.id))!, assignment, draft: committed, arrival };
  });
  await startAfterCommit(deps, `item ${result.item.id}`, () => startInboundReceivedWorkflow(deps, result.item));
  return {
    draft: await draftView(deps, result.draft),
    item: {
      id: result.item.id,
      reference_code: result.item.reference_code,
      kind: result.item.kind,
      status: result.item.status,
      mailbox_id: result.item.mailbox_id,
      member_id: result.item.member_id,
      agent_id: result.item.agent_id,
      received_at: result.item.received_at.toISOString(),
      version: result.item.version,
    },
    assignment: {
      id: result.assignment.id,
      agent_id: result.assignment.agent_id,
      revision: result.assignment.revision,
    },
    arrival: result.arrival,
  };
}
