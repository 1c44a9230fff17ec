// The facility side of physical inbound (sk_facility_ keys) and the scan pipeline:
// private mailboxes; intake drafts (identify the mailbox, draft the piece, attach
// sealed-exterior photos, match it to a member's mailbox and agent, commit it into
// custody); scan requests and their fulfilment with page images, OCR (services/inbound-email/ocr.ts,
// Tesseract when installed) and the inbound.* events; and the facility's work on package actions.
import { paginationWithNext } from '../../domain/shared/pagination';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import type { UploadedFile } from '../shared/uploads';
import { errors } from '../../domain/shared/errors';
import { sha256Hex } from '../../domain/accounts/keys';
import { checkImage } from '../../domain/shared/images';
import { ocrPageStatus } from '../../domain/inbound-email/ocr';
import { ocrImage } from '../inbound-email/ocr';
import { MAX_OCR_PAGE_CHARS, ruleOcrStatus, ruleSourceKind, PageRole } from '../../domain/physical-inbound/agent-inbox';
import { checkPackageActionUpdate, PackageActionStatus, packageStatusAfter, PackageActionType } from '../../domain/workflow-safe/handling';
import { assignFacility } from '../operations/facilities';
import { publishEvent } from '../webhooks/events';
import { emitRuleMatches } from '../webhooks/rules';
import { expectingAgent } from './expected-shipments';
import { applyArrival } from './package-arrival';
import { startAfterCommit, startInboundReceivedWorkflow, startScanBundleWorkflow } from './inbound-workflows';
import { bumpItem, Db, findItem, ITEM_COLUMNS, ItemRow, recordActivity, toItemRow, updateReturning } from './item-records';
import { bundleOcrStatus, loadItemBundles } from './scan-bundles';
import { refreshSearchFields } from './search-index';
import { WorkflowNotFoundError } from '@temporalio/client';
import { handlingScanOutcomeSignal, handlingWorkflowId, ScanOutcome } from '../../workflows/physical-inbound/contracts';

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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function mailboxView(r: any): PrivateMailbox {
  return { mailbox_id: r.mailbox_id, member_id: r.member_id, agent_id: r.agent_id, facility_id: r.facility_id, status: r.status, created_at: r.created_at.toISOString() };
}

/**
 * Gives a member its private receiving mailbox (PMB-<n>) at a facility (the default one
 * unless named), or re-points the existing one at another default agent. Operator CLI.
 */
export async function assignMailbox(deps: Deps, input: { memberId: string; agentId?: string | null; facilityId?: string | null }): Promise<PrivateMailbox> {
  return deps.db.transaction(async (tx) => {
    const [member] = await tx.query(`SELECT id FROM members WHERE id = $1 FOR UPDATE`, [input.memberId]);
    if (!member) throw new Error(`no member ${input.memberId}`);
    if (input.agentId) {
      const [agent] = await tx.query(`SELECT 1 FROM agents WHERE id = $1 AND member_id = $2 AND deleted_at IS NULL`, [input.agentId, input.memberId]);
      if (!agent) throw new Error(`agent ${input.agentId} does not belong to member ${input.memberId}`);
    }
    const facilityId = input.facilityId ?? (await assignFacility(tx, false, input.memberId)).id;
    const [existing] = await tx.query(`SELECT * FROM private_mailboxes WHERE member_id = $1 AND status = 'active'`, [input.memberId]);
    if (existing) {
      const [updated] = await updateReturning(tx,
        `UPDATE private_mailboxes SET agent_id = COALESCE($2, agent_id), facility_id = COALESCE($3, facility_id), updated_at = now()
          WHERE id = $1 RETURNING *`, [existing.id, input.agentId ?? null, input.facilityId ?? null]);
      return mailboxView(updated);
    }
    const [row] = await tx.query(
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
export async function identifyMailbox(deps: Deps, auth: AuthContext, input: { mailbox_id?: string; recipient_name?: string }) {
  const params: unknown[] = [auth.facilityId];
  const conditions: string[] = [];
  if (input.mailbox_id) { params.push(normaliseMailboxId(input.mailbox_id)); conditions.push(`b.mailbox_id = $${params.length}`); }
  if (input.recipient_name) {
    params.push(input.recipient_name.trim().toLowerCase());
    conditions.push(`(lower(m.full_name) = $${params.length} OR EXISTS (SELECT 1 FROM agents a WHERE a.member_id = m.id AND a.deleted_at IS NULL
      AND (lower(a.name) = $${params.length} OR lower(a.display_name) = $${params.length})))`);
  }
  const rows = await deps.db.query(
    `SELECT b.mailbox_id, b.member_id, b.agent_id, m.full_name,
            (SELECT json_agg(json_build_object('id', a.id, 'name', a.name) ORDER BY a.created_at) FROM agents a
              WHERE a.member_id = m.id AND a.deleted_at IS NULL) AS agents
       FROM private_mailboxes b JOIN members m ON m.id = b.member_id
      WHERE b.status = 'active' AND (b.facility_id = $1 OR b.facility_id IS NULL) AND ${conditions.join(' AND ')}
      ORDER BY b.mailbox_id LIMIT 20`, params);
  return {
    matches: rows.map((r: { mailbox_id: string; member_id: string; agent_id: string | null; full_name: string; agents: Array<{ id: string; name: string }> | null }) => ({
      mailbox_id: r.mailbox_id, member_id: r.member_id, member_name: r.full_name, default_agent_id: r.agent_id, agents: r.agents ?? [],
    })),
  };
}

// ---------------------------------------------------------------------------------------
// Intake drafts

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

async function draftView(deps: Deps, draft: Record<string, unknown>) {
  const [view] = await draftViews(deps, [draft]);
  return view;
}

/** The drafts as the facility sees them, with their photos (one query for all drafts). */
async function draftViews(deps: Deps, drafts: Array<Record<string, unknown>>) {
  const rows: Array<Record<string, unknown>> = drafts.length ? await deps.db.query(
    `SELECT id, draft_id, photo_type, storage_key, content_type, size_bytes, sha256, created_at FROM inbound_photos
      WHERE draft_id = ANY($1::uuid[]) ORDER BY created_at, id`, [drafts.map((d) => d.id)]) : [];
  const byDraft = new Map<unknown, Array<Record<string, unknown>>>();
  for (const p of rows) (byDraft.get(p.draft_id) ?? byDraft.set(p.draft_id, []).get(p.draft_id)!).push(p);
  return Promise.all(drafts.map((draft) => draftViewWith(deps, draft, byDraft.get(draft.id) ?? [])));
}

async function draftViewWith(deps: Deps, draft: Record<string, unknown>, photos: Array<Record<string, unknown>>) {
  return {
    object: 'inbound_draft' as const,
    id: draft.id as string,
    facility_id: draft.facility_id as string,
    kind: draft.kind as string,
    carrier: draft.carrier as string | null,
    tracking_number: draft.tracking_number as string | null,
    weight_oz: draft.weight_oz === null ? null : Number(draft.weight_oz),
    sender_name: draft.sender_name as string | null,
    recipient_name: draft.recipient_name as string | null,
    notes: draft.notes as string | null,
    mailbox_id: draft.mailbox_id as string | null,
    member_id: draft.member_id as string | null,
    agent_id: draft.agent_id as string | null,
    status: draft.status as string,
    version: draft.version as number,
    item_id: draft.item_id as string | null,
    photos: await Promise.all(photos.map(async (p) => ({
      id: p.id as string, photo_type: p.photo_type as string, content_type: p.content_type as string, size_bytes: p.size_bytes as number,
      sha256: p.sha256 as string, created_at: (p.created_at as Date).toISOString(), url: await deps.storage.signedUrl(p.storage_key as string),
    }))),
    created_at: (draft.created_at as Date).toISOString(),
    updated_at: (draft.updated_at as Date).toISOString(),
  };
}

async function loadDraft(db: Db, auth: AuthContext, id: string, forUpdate = false) {
  const [draft] = await db.query(`SELECT * FROM inbound_drafts WHERE id = $1 AND facility_id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [id, auth.facilityId]);
  if (!draft) throw errors.notFound('Draft');
  return draft;
}

function assertDraftVersion(draft: { version: number }, expected: number) {
  if (draft.version !== expected) {
    throw errors.conflict('VERSION_STALE', `The draft is at version ${draft.version}; expected_version ${expected} is stale.`, {
      details: { current_version: draft.version, expected_version: expected },
      suggestedAction: 'GET the draft again and retry with its current version.',
    });
  }
}

function assertDraftOpen(draft: { status: string }) {
  if (draft.status === 'committed') throw errors.conflict('DRAFT_COMMITTED', 'The draft is committed; it can no longer change.', {
    suggestedAction: 'Start a new draft for another piece; the committed one is an inbound item now.',
  });
}

export async function createDraft(deps: Deps, auth: AuthContext, body: DraftFields) {
  const [draft] = await deps.db.query(
    `INSERT INTO inbound_drafts (facility_id, kind, carrier, tracking_number, weight_oz, sender_name, recipient_name, notes, mailbox_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [auth.facilityId, body.kind, body.carrier ?? null, body.tracking_number ?? null, body.weight_oz ?? null, body.sender_name ?? null,
      body.recipient_name ?? null, body.notes ?? null, body.mailbox_id ? normaliseMailboxId(body.mailbox_id) : null],
  );
  return { draft: await draftView(deps, draft) };
}

export async function listDrafts(deps: Deps, auth: AuthContext, query: { status?: string; limit: number; offset: number }) {
  const params: unknown[] = [auth.facilityId];
  let where = 'facility_id = $1';
  if (query.status) { params.push(query.status); where += ` AND status = $${params.length}`; }
  params.push(query.limit, query.offset);
  const rows = await deps.db.query(
    `SELECT *, count(*) OVER () AS total FROM inbound_drafts WHERE ${where} ORDER BY created_at DESC, id DESC
      LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
  return {
    drafts: await draftViews(deps, rows),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, query.limit, query.offset),
  };
}

export async function getDraft(deps: Deps, auth: AuthContext, id: string) {
  return { draft: await draftView(deps, await loadDraft(deps.db, auth, id)) };
}

/** PUT: replaces the draft's label fields (absent fields become empty). */
export async function updateDraft(deps: Deps, auth: AuthContext, id: string, body: DraftFields & { expected_version: number }) {
  const draft = await deps.db.transaction(async (tx) => {
    const current = await loadDraft(tx, auth, id, true);
    assertDraftOpen(current);
    assertDraftVersion(current, body.expected_version);
    const [updated] = await updateReturning(tx,
      `UPDATE inbound_drafts SET kind = $2, carrier = $3, tracking_number = $4, weight_oz = $5, sender_name = $6, recipient_name = $7,
         notes = $8, mailbox_id = COALESCE($9, mailbox_id), version = version + 1, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, body.kind, body.carrier ?? null, body.tracking_number ?? null, body.weight_oz ?? null, body.sender_name ?? null,
        body.recipient_name ?? null, body.notes ?? null, body.mailbox_id ? normaliseMailboxId(body.mailbox_id) : null],
    );
    return updated;
  });
  return { draft: await draftView(deps, draft) };
}

/** A photo or page image, decoded in full before anything is stored (400 on `field` otherwise). */
async function readImage(file: UploadedFile, field: string) {
  const data = await readFile(file.filepath);
  const image = await checkImage(data, field);
  return { data, contentType: image.contentType, ext: image.extension };
}

export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

/** POST .../drafts/{id}/exterior: a photo of the sealed exterior (or the label), kept in S3. */
export async function attachExterior(deps: Deps, auth: AuthContext, id: string, file: UploadedFile | undefined, photoType: 'sealed_exterior' | 'label') {
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
    await tx.query(
      `INSERT INTO inbound_photos (id, draft_id, photo_type, storage_key, content_type, size_bytes, sha256) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [photoId, id, photoType, key, image.contentType, image.data.length, sha256Hex(image.data)]);
    const [updated] = await updateReturning(tx,`UPDATE inbound_drafts SET version = version + 1, updated_at = now() WHERE id = $1 RETURNING *`, [id]);
    return updated;
  });
  return { draft: await draftView(deps, draft), photo_id: photoId };
}

/** POST .../drafts/{id}/match: assigns the piece to a member's mailbox and an agent. */
export async function matchDraft(deps: Deps, auth: AuthContext, id: string, body: { mailbox_id: string; agent_id?: string; expected_version: number }) {
  const draft = await deps.db.transaction(async (tx) => {
    const current = await loadDraft(tx, auth, id, true);
    assertDraftOpen(current);
    assertDraftVersion(current, body.expected_version);
    const mailboxId = normaliseMailboxId(body.mailbox_id);
    const [mailbox] = await tx.query(
      `SELECT * FROM private_mailboxes WHERE mailbox_id = $1 AND status = 'active' AND (facility_id = $2 OR facility_id IS NULL)`, [mailboxId, auth.facilityId]);
    if (!mailbox) throw errors.notFound('Mailbox');
    // Unnamed, the piece goes to the agent expecting its tracking number, else the mailbox's default agent.
    const agentId = body.agent_id ?? (await expectingAgent(tx, mailbox.member_id, mailboxId, current.tracking_number)) ?? mailbox.agent_id;
    if (!agentId) {
      throw errors.validation([{ path: 'agent_id', message: `mailbox ${mailboxId} has no default agent; name the agent the piece is for` }]);
    }
    const [agent] = await tx.query(`SELECT 1 FROM agents WHERE id = $1 AND member_id = $2 AND deleted_at IS NULL`, [agentId, mailbox.member_id]);
    if (!agent) throw errors.validation([{ path: 'agent_id', message: 'is not an agent of the mailbox holder' }]);
    const [updated] = await updateReturning(tx,
      `UPDATE inbound_drafts SET mailbox_id = $2, member_id = $3, agent_id = $4, status = 'matched', version = version + 1, updated_at = now()
        WHERE id = $1 RETURNING *`, [id, mailboxId, mailbox.member_id, agentId]);
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
    if (draft.status !== 'matched') throw errors.conflict('DRAFT_NOT_MATCHED', 'Match the draft to a mailbox before committing it.', {
      suggestedAction: 'POST /v1/facility/inbound/drafts/{id}/match, then commit.',
    });
    const [{ n }] = await tx.query(`SELECT count(*)::int AS n FROM inbound_photos WHERE draft_id = $1 AND photo_type = 'sealed_exterior'`, [id]);
    if (n === 0) throw errors.conflict('EXTERIOR_PHOTO_REQUIRED', 'Attach at least one sealed-exterior photo before committing.', {
      suggestedAction: 'POST /v1/facility/inbound/drafts/{id}/exterior with a photo of the sealed piece, then commit.',
    });
    const [member] = await tx.query(`SELECT full_name, email FROM members WHERE id = $1`, [draft.member_id]);
    const now = new Date();
    const [row] = await tx.query(
      `INSERT INTO physical_inbound_items (reference_code, member_id, agent_id, facility_id, mailbox_id, draft_id, kind, environment,
         source_domain, status, carrier, tracking_number, weight_oz, sender_name, recipient_name, recipient_email, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'live', 'internal_team', 'received', $8, $9, $10, $11, $12, $13, $14)
       RETURNING ${ITEM_COLUMNS.replace(/i\./g, '')}`,
      [referenceCode(draft.kind, now), draft.member_id, draft.agent_id, auth.facilityId, draft.mailbox_id, id, draft.kind, draft.carrier,
        draft.tracking_number, draft.weight_oz, draft.sender_name, draft.recipient_name ?? member.full_name, member.email, now],
    );
    const item = toItemRow(row);
    await tx.query(`UPDATE inbound_photos SET item_id = $2 WHERE draft_id = $1`, [id, item.id]);
    const [assignment] = await tx.query(
      `INSERT INTO agent_inbox_assignments (item_id, agent_id, member_id, source_domain, environment)
       VALUES ($1, $2, $3, 'internal_team', 'live') RETURNING *`, [item.id, draft.agent_id, draft.member_id]);
    const [committed] = await updateReturning(tx,
      `UPDATE inbound_drafts SET status = 'committed', item_id = $2, version = version + 1, updated_at = now() WHERE id = $1 RETURNING *`, [id, item.id]);
    await recordActivity(tx, item, 'received', { facility_id: auth.facilityId, mailbox_id: item.mailbox_id, draft_id: id });
    await recordActivity(tx, item, 'assigned', { agent_id: item.agent_id, assignment_id: assignment.id });
    const arrival = await applyArrival(tx, item);
    await refreshSearchFields(tx, item.id);
    return { item: (await findItem(tx, item.id))!, assignment, draft: committed, arrival };
  });
  await startAfterCommit(deps, `item ${result.item.id}`, () => startInboundReceivedWorkflow(deps, result.item));
  return {
    draft: await draftView(deps, result.draft),
    item: {
      id: result.item.id, reference_code: result.item.reference_code, kind: result.item.kind, status: result.item.status,
      mailbox_id: result.item.mailbox_id, member_id: result.item.member_id, agent_id: result.item.agent_id,
      received_at: result.item.received_at.toISOString(), version: result.item.version,
    },
    assignment: { id: result.assignment.id as string, agent_id: result.assignment.agent_id as string, revision: result.assignment.revision as number },
    arrival: result.arrival,
  };
}

// ---------------------------------------------------------------------------------------
// Scan requests

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function scanRequestView(r: any) {
  return {
    id: r.id as string,
    item_id: r.item_id as string,
    agent_id: r.agent_id as string | null,
    scan_type: r.scan_type as string,
    origin: r.origin as string,
    package_action_id: r.package_action_id as string | null,
    handling_id: r.handling_id as string | null,
    options: r.options as Record<string, unknown>,
    status: r.status as string,
    rejection_reason: r.rejection_reason as string | null,
    requested_at: (r.requested_at as Date).toISOString(),
    fulfilled_at: r.fulfilled_at ? (r.fulfilled_at as Date).toISOString() : null,
    ...(r.reference_code ? { item: { reference_code: r.reference_code, kind: r.kind, mailbox_id: r.mailbox_id } } : {}),
  };
}

export async function listScanRequests(deps: Deps, auth: AuthContext, query: { status?: string; limit: number; offset: number }) {
  const rows = await deps.db.query(
    `SELECT r.*, i.reference_code, i.kind, i.mailbox_id, count(*) OVER () AS total
       FROM scan_requests r JOIN physical_inbound_items i ON i.id = r.item_id
      WHERE r.facility_id = $1 AND r.status = $2 ORDER BY r.requested_at, r.id LIMIT $3 OFFSET $4`,
    [auth.facilityId, query.status ?? 'requested', query.limit, query.offset]);
  return {
    scan_requests: rows.map(scanRequestView),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, query.limit, query.offset),
  };
}

async function loadScanRequest(db: Db, auth: AuthContext, id: string, forUpdate = false) {
  const [r] = await db.query(`SELECT * FROM scan_requests WHERE id = $1 AND facility_id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [id, auth.facilityId]);
  if (!r) throw errors.notFound('Scan request');
  return r;
}

function assertRequested(r: { status: string }) {
  if (r.status !== 'requested') throw errors.conflict('SCAN_REQUEST_NOT_OPEN', `The scan request is already ${r.status}.`, {
    suggestedAction: 'Nothing to do: GET /v1/facility/scan-requests lists the open requests.',
  });
}

/** Tells an Open & Scan operation its scan's outcome; a lost signal is sent again by the reconciler. */
export async function signalScanOutcome(deps: Deps, operationId: string, outcome: ScanOutcome): Promise<void> {
  await startAfterCommit(deps, `scan outcome of ${operationId}`, () =>
    deps.temporal.workflow.getHandle(handlingWorkflowId(operationId)).signal(handlingScanOutcomeSignal, outcome));
}

export const SCAN_PAGE_FIELDS = Array.from({ length: 20 }, (_, n) => `page_${n + 1}`);

/**
 * POST /v1/facility/scan-requests/{id}/fulfil: page images (page_1..page_20) become a
 * scan bundle; OCR runs in the bundle's workflow, which publishes inbound.scan_available,
 * then inbound.context_ready, and then completes the Open & Scan operation that asked.
 */
export async function fulfilScanRequest(deps: Deps, auth: AuthContext, id: string, files: Record<string, UploadedFile>, body: { source_kinds?: string }) {
  const request = await loadScanRequest(deps.db, auth, id);
  assertRequested(request);
  const present = SCAN_PAGE_FIELDS.filter((f) => files[f]);
  if (!present.length) throw errors.validation([{ path: 'page_1', message: 'at least one page image (page_1 .. page_20) is required' }]);
  const defaultRole: PageRole = request.scan_type === 'label' || request.scan_type === 'envelope' ? 'envelope' : 'letter';
  const roles = body.source_kinds ? body.source_kinds.split(',').map((s) => s.trim()) : [];
  if (roles.length && (roles.length !== present.length || roles.some((r) => r !== 'envelope' && r !== 'letter'))) {
    throw errors.validation([{ path: 'source_kinds', message: `must list envelope or letter for each of the ${present.length} pages, comma-separated` }]);
  }
  const bundleId = randomUUID();
  const pages: Array<{ id: string; n: number; role: PageRole; key: string; contentType: string; size: number; sha: string }> = [];
  for (const [index, field] of present.entries()) {
    const image = await readImage(files[field], field);
    const pageId = randomUUID();
    const key = `inbound/${request.item_id}/scans/${bundleId}/page-${index + 1}.${image.ext}`;
    await deps.storage.put(key, image.data, image.contentType);
    pages.push({ id: pageId, n: index + 1, role: (roles[index] as PageRole) ?? defaultRole, key, contentType: image.contentType, size: image.data.length, sha: sha256Hex(image.data) });
  }
  const item = await deps.db.transaction(async (tx) => {
    const locked = await loadScanRequest(tx, auth, id, true);
    assertRequested(locked);
    const target = (await findItem(tx, locked.item_id, { forUpdate: true }))!;
    await tx.query(`INSERT INTO scan_bundles (id, request_id, item_id) VALUES ($1, $2, $3)`, [bundleId, id, target.id]);
    for (const p of pages) {
      await tx.query(
        `INSERT INTO scan_pages (id, bundle_id, item_id, page_number, page_role, origin, storage_key, content_type, size_bytes, source_sha256)
         VALUES ($1, $2, $3, $4, $5, 'physical', $6, $7, $8, $9)`,
        [p.id, bundleId, target.id, p.n, p.role, p.key, p.contentType, p.size, p.sha]);
    }
    await tx.query(`UPDATE scan_requests SET status = 'fulfilled', fulfilled_at = now() WHERE id = $1`, [id]);
    if (locked.package_action_id) {
      await tx.query(
        `UPDATE package_actions SET status = 'completed', result = $2, version = version + 1, completed_at = now(), updated_at = now() WHERE id = $1`,
        [locked.package_action_id, JSON.stringify({ scan_request_id: id, bundle_id: bundleId, page_count: pages.length })]);
    }
    await bumpItem(tx, target.id);
    await recordActivity(tx, target, 'scan_fulfilled', { scan_request_id: id, bundle_id: bundleId, page_count: pages.length });
    await refreshSearchFields(tx, target.id);
    return target;
  });
  // An Open & Scan operation learns of the scan from the bundle's workflow once its OCR is
  // saved (reportScanBundleOutcome), so inbound.action_completed follows inbound.context_ready.
  await startAfterCommit(deps, `bundle ${bundleId}`, () => startScanBundleWorkflow(deps, bundleId, item));
  return {
    scan_request: scanRequestView(await loadScanRequest(deps.db, auth, id)),
    bundle: { id: bundleId, item_id: item.id, pages: pages.map((p) => ({ page_id: p.id, page_number: p.n, source_kind: p.role, source_sha256: p.sha })) },
  };
}

export async function rejectScanRequest(deps: Deps, auth: AuthContext, id: string, body: { reason: string }) {
  const request = await deps.db.transaction(async (tx) => {
    const locked = await loadScanRequest(tx, auth, id, true);
    assertRequested(locked);
    const [updated] = await updateReturning(tx,`UPDATE scan_requests SET status = 'rejected', rejection_reason = $2 WHERE id = $1 RETURNING *`, [id, body.reason]);
    if (locked.package_action_id) {
      await tx.query(
        `UPDATE package_actions SET status = 'failed', result = $2, version = version + 1, updated_at = now() WHERE id = $1`,
        [locked.package_action_id, JSON.stringify({ scan_request_id: id, reason: body.reason })]);
    }
    const item = (await findItem(tx, locked.item_id))!;
    await recordActivity(tx, item, 'scan_rejected', { scan_request_id: id, reason: body.reason });
    return updated;
  });
  if (request.handling_id) await signalScanOutcome(deps, request.handling_id, { scanRequestId: id, outcome: 'rejected', bundleId: null, reason: body.reason });
  return { scan_request: scanRequestView(request) };
}

// ---------------------------------------------------------------------------------------
// Package actions, facility side (scan actions are fulfilled through scan requests)

export async function listFacilityPackageActions(deps: Deps, auth: AuthContext, query: { status?: PackageActionStatus; limit: number; offset: number }) {
  const statuses = query.status ? [query.status] : ['requested', 'clarification_needed', 'in_progress'];
  const rows = await deps.db.query(
    `SELECT p.*, i.reference_code, i.mailbox_id, i.kind, i.status AS package_status, f.to_name, f.to_line1, f.to_line2, f.to_city, f.to_state,
            f.to_zip, f.to_country, f.service_level, f.carrier_preference, f.insurance, f.signature_required, count(*) OVER () AS total
       FROM package_actions p JOIN physical_inbound_items i ON i.id = p.item_id LEFT JOIN package_forwards f ON f.action_id = p.id
      WHERE i.facility_id = $1 AND p.status = ANY($2::text[]) ORDER BY
        CASE p.priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END, p.created_at, p.id
      LIMIT $3 OFFSET $4`, [auth.facilityId, statuses, query.limit, query.offset]);
  return {
    actions: rows.map((r: Record<string, unknown>) => ({
      id: r.id, package_id: r.item_id, action: r.action, priority: r.priority, parameters: r.parameters, status: r.status, version: r.version,
      agent_notes: r.agent_notes, clarification_question: r.clarification_question, clarification_response: r.clarification_response,
      package: { reference_code: r.reference_code, mailbox_id: r.mailbox_id, kind: r.kind, status: r.package_status },
      forwarding_address: r.to_name ? {
        to_name: r.to_name, to_line1: r.to_line1, to_line2: r.to_line2, to_city: r.to_city, to_state: r.to_state, to_zip: r.to_zip,
        to_country: r.to_country, service_level: r.service_level, carrier_preference: r.carrier_preference, insurance: r.insurance,
        signature_required: r.signature_required,
      } : null,
      created_at: (r.created_at as Date).toISOString(),
    })),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, query.limit, query.offset),
  };
}

export interface FacilityActionUpdate {
  status: 'in_progress' | 'clarification_needed' | 'completed' | 'failed';
  expected_version: number;
  clarification_question?: string;
  tracking_number?: string;
  carrier?: string;
  note?: string;
}

/** POST /v1/facility/package-actions/{id}/status: the facility's progress on a package action. */
export async function updateFacilityPackageAction(deps: Deps, auth: AuthContext, id: string, body: FacilityActionUpdate) {
  return deps.db.transaction(async (tx) => {
    const [action] = await tx.query(
      `SELECT p.* FROM package_actions p JOIN physical_inbound_items i ON i.id = p.item_id WHERE p.id = $1 AND i.facility_id = $2 FOR UPDATE OF p`,
      [id, auth.facilityId]);
    if (!action) throw errors.notFound('Action');
    const refusal = checkPackageActionUpdate(action.action as PackageActionType, action.status as PackageActionStatus, body);
    if (refusal?.kind === 'invalid') throw errors.validation(refusal.fields);
    if (refusal?.kind === 'state') {
      throw errors.conflict('ACTION_NOT_ACTIVE', refusal.message, { suggestedAction: 'GET /v1/facility/package-actions lists the actions still open.' });
    }
    if (action.version !== body.expected_version) {
      throw errors.conflict('VERSION_STALE', `The action is at version ${action.version}; expected_version ${body.expected_version} is stale.`, {
        details: { current_version: action.version },
        suggestedAction: 'GET /v1/facility/package-actions again and retry with the action\'s current version.',
      });
    }
    const item = (await findItem(tx, action.item_id, { forUpdate: true }))!;
    const result = { ...(action.result ?? {}), ...(body.tracking_number ? { tracking_number: body.tracking_number } : {}),
      ...(body.carrier ? { carrier: body.carrier } : {}), ...(body.note ? { note: body.note } : {}) };
    const [updated] = await updateReturning(tx,
      `UPDATE package_actions SET status = $2, version = version + 1, updated_at = now(), result = $3,
         clarification_question = COALESCE($4, clarification_question), completed_at = CASE WHEN $2 = 'completed' THEN now() ELSE completed_at END
        WHERE id = $1 RETURNING *`,
      [id, body.status, JSON.stringify(result), body.clarification_question ?? null]);
    const next = packageStatusAfter(action.action as PackageActionType, body.status, action.package_status_before);
    await bumpItem(tx, item.id, next);
    await recordActivity(tx, item, 'package_action_updated', { action_id: id, action: action.action, status: body.status, ...(body.tracking_number ? { tracking_number: body.tracking_number } : {}) });
    return { action: { id: updated.id as string, package_id: item.id, action: updated.action as string, status: updated.status as string, version: updated.version as number, result }, package_status: next ?? item.status };
  });
}

// ---------------------------------------------------------------------------------------
// Scan pipeline (run by activities of the inbound workflows)

function itemEventPayload(item: ItemRow, ocrStatus: string | null) {
  return { item_id: item.id, agent_id: item.agent_id, source_domain: item.source_domain, ocr_status: ocrStatus };
}

/**
 * inbound.received: the item is recorded. Its ocr_status is that of a scan recorded with
 * the item (sandbox seeds arrive scanned), else null: a received piece is not scanned.
 */
export async function publishInboundReceived(deps: Deps, itemId: string): Promise<void> {
  const item = await findItem(deps.db, itemId);
  if (!item || item.source_domain === 'member_sample') return;
  const bundles = (await loadItemBundles(deps.db, item.id)).filter((b) => b.created_at.getTime() <= item.created_at.getTime());
  await publishEvent(deps, {
    eventKey: `inbound:${item.id}:inbound.received`, memberId: item.member_id, agentId: item.agent_id, eventType: 'inbound.received',
    testMode: item.environment === 'test', objectType: 'inbound_item', objectId: item.id,
    payload: itemEventPayload(item, bundles.length ? bundleOcrStatus(bundles[0]) : null),
  });
}

async function bundleWithItem(deps: Deps, bundleId: string) {
  const [row] = await deps.db.query(`SELECT item_id FROM scan_bundles WHERE id = $1`, [bundleId]);
  if (!row) return null;
  const item = await findItem(deps.db, row.item_id);
  const bundle = (await loadItemBundles(deps.db, row.item_id)).find((b) => b.id === bundleId);
  return item && bundle ? { item, bundle } : null;
}

/**
 * inbound.scan_available: the page images are stored; OCR may be pending. The item's
 * inbound.received goes first (publishing it again is a no-op), so receivers see them in order.
 */
export async function publishScanAvailable(deps: Deps, bundleId: string): Promise<string[]> {
  const found = await bundleWithItem(deps, bundleId);
  if (!found) return [];
  const { item, bundle } = found;
  await publishInboundReceived(deps, item.id);
  await publishEvent(deps, {
    eventKey: `inbound:${bundle.id}:inbound.scan_available`, memberId: item.member_id, agentId: item.agent_id, eventType: 'inbound.scan_available',
    testMode: item.environment === 'test', objectType: 'inbound_item', objectId: item.id, payload: itemEventPayload(item, bundleOcrStatus(bundle)),
  });
  return bundle.pages.map((p) => p.id);
}

export const MAX_OCR_ATTEMPTS = 3;

/**
 * OCRs one page (services/inbound-email/ocr.ts) and saves the result: its text (at most 32,000
 * characters), confidence, uncertain spans and status (ready, or needs_review when the
 * confidence is low). Pages already finished (template OCR of fixtures, or a previous
 * attempt) are left as they are. Returns whether another attempt may help.
 */
export async function ocrScanPage(deps: Deps, pageId: string, runner: typeof ocrImage = ocrImage): Promise<{ status: string; retry: boolean }> {
  const [page] = await updateReturning(deps.db,
    `UPDATE scan_pages SET ocr_status = 'processing', ocr_attempts = ocr_attempts + 1
      WHERE id = $1 AND ocr_status IN ('queued','processing') AND ocr_attempts < $2 RETURNING *`, [pageId, MAX_OCR_ATTEMPTS]);
  if (!page) {
    const [current] = await deps.db.query(`SELECT ocr_status FROM scan_pages WHERE id = $1`, [pageId]);
    return { status: current?.ocr_status ?? 'failed', retry: false };
  }
  const image = await deps.storage.get(page.storage_key);
  const result = await runner(deps.config, image, page.content_type === 'image/jpeg' ? 'jpg' : 'png');
  if (result.ok) {
    const text = result.page.text.slice(0, MAX_OCR_PAGE_CHARS);
    const status = ocrPageStatus(result.page);
    await deps.db.query(
      `UPDATE scan_pages SET ocr_status = $2, ocr_text = $3, ocr_is_blank = $4, ocr_confidence = $5, ocr_uncertain_spans = $6, ocr_provider = 'tesseract',
         ocr_model = $7, ocr_completed_at = now(), ocr_error_code = NULL WHERE id = $1`,
      [pageId, status, text, text.trim() === '', result.page.words ? result.page.confidence : null, JSON.stringify(result.page.uncertainSpans), result.model]);
    return { status, retry: false };
  }
  const retry = result.retryable && page.ocr_attempts < MAX_OCR_ATTEMPTS;
  await deps.db.query(
    `UPDATE scan_pages SET ocr_status = $2, ocr_error_code = $3, ocr_provider = 'tesseract', ocr_completed_at = CASE WHEN $2 = 'failed' THEN now() END
      WHERE id = $1`, [pageId, retry ? 'queued' : 'failed', result.errorCode]);
  return { status: retry ? 'queued' : 'failed', retry };
}

/**
 * Once every page has its OCR: refreshes the search index, evaluates the member's
 * webhook rules on the saved text, and publishes inbound.context_ready.
 */
export async function finishScanBundle(deps: Deps, bundleId: string): Promise<string | null> {
  const found = await bundleWithItem(deps, bundleId);
  if (!found) return null;
  const { item, bundle } = found;
  await refreshSearchFields(deps.db, item.id);
  const status = bundleOcrStatus(bundle);
  await emitRuleMatches(deps, {
    memberId: item.member_id, agentId: item.agent_id, itemId: item.id, environment: item.environment, sourceDomain: item.source_domain,
    pages: bundle.pages.map((p) => ({
      pageId: p.id, sourceKind: ruleSourceKind({ role: p.page_role, origin: p.origin }), ocrStatus: ruleOcrStatus(p.ocr_status, p.ocr_text), text: p.ocr_text,
    })),
  });
  await recordActivity(deps.db, item, 'ocr_saved', { bundle_id: bundle.id, ocr_status: status });
  await publishEvent(deps, {
    eventKey: `inbound:${bundle.id}:inbound.context_ready`, memberId: item.member_id, agentId: item.agent_id, eventType: 'inbound.context_ready',
    testMode: item.environment === 'test', objectType: 'inbound_item', objectId: item.id, payload: itemEventPayload(item, status),
  });
  return status;
}

/**
 * Once a bundle's context is saved (inbound.context_ready published): tells the live Open
 * & Scan operation that asked for the scan, so it completes only now. Returns whether an
 * operation was told; a closed or finished operation needs nothing.
 */
export async function reportScanBundleOutcome(deps: Deps, bundleId: string): Promise<boolean> {
  const [row] = await deps.db.query(
    `SELECT r.id AS request_id, r.handling_id FROM scan_bundles b JOIN scan_requests r ON r.id = b.request_id
       JOIN handling_operations o ON o.id = r.handling_id
      WHERE b.id = $1 AND o.environment = 'live' AND o.status = 'accepted'`, [bundleId]);
  if (!row) return false;
  try {
    await deps.temporal.workflow.getHandle(handlingWorkflowId(row.handling_id)).signal(handlingScanOutcomeSignal, {
      scanRequestId: row.request_id, outcome: 'fulfilled', bundleId, reason: null,
    });
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
  return true;
}
