// The facility's side of outbound mail: its queue of live pieces, the document to
// print, and the fulfillment steps (start printing, printed, dispatched, delivered,
// failed, carrier delivery failed). Steps are Updates to the piece workflow, so the
// facility learns at once when a step is refused (for example a piece the caller has
// just cancelled). A facility sees pieces assigned to it and pieces submitted while no
// facility was active (it takes those on its first step). A scheduled piece (send_after)
// is not shown until its workflow releases it.
import { pagination } from '../../domain/shared/pagination';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, errors, FieldError } from '../../domain/shared/errors';
import { checkImage, CheckedImage } from '../../domain/shared/images';
import { TRACKED_CLASSES } from '../../domain/outbound-mail/pricing';
import type { DispatchMethod, PhotoCategory } from '../../domain/workflow-safe/mail-rules';
import { SIGNED_URL_SECONDS } from '../shared/storage';
import { loadMailRow, loadPhotos, mailAddress, MailRow, PhotoRow, signedDocumentUrl, signedPhotos } from './record';
import { mailStateConflict, MailWorkflowClosed, runMailUpdate } from './workflow';
import { isWorkflowUnavailable, updateIdFor } from '../shared/workflow-gateway';
import { sha256Hex } from '../../domain/accounts/keys';
import type { UpdateDefinition } from '@temporalio/client';
import {
  carrierDeliveryFailedUpdate,
  deliveredUpdate,
  dispatchedUpdate,
  failedUpdate,
  PhotoRef,
  printedUpdate,
  startPrintingUpdate,
} from '../../workflows/outbound-mail/contracts';
import { heldFromFacility, RELEASED_TO_FACILITY_SQL } from './scheduled-send';
import { pieceProofUrl } from './print-proofs';
import { sqlRows } from '../shared/sql';

export interface UploadedPhoto {
  category: PhotoCategory;
  data: Buffer;
}

const isTracked = (mailClass: string) => (TRACKED_CLASSES as readonly string[]).includes(mailClass);

/** Photos must be whole PNG or JPEG images (decoded in full); checked before anything is stored. */
async function checkPhotos(photos: UploadedPhoto[]): Promise<Array<CheckedImage & UploadedPhoto>> {
  const checked: Array<CheckedImage & UploadedPhoto> = [];
  const refused: FieldError[] = [];
  for (const p of photos) {
    try {
      checked.push({ ...p, ...(await checkImage(p.data, p.category)) });
    } catch (err) {
      if (!(err instanceof ApiError) || !err.options.fields) throw err;
      refused.push(...err.options.fields);
    }
  }
  if (refused.length) throw errors.validation(refused);
  return checked;
}

/**
 * Stores a step's photos. With an Update id (a step sent with an Idempotency-Key) the
 * object names derive from it, so a retried step writes the same objects, not new ones.
 */
async function storePhotos(deps: Deps, id: string, photos: UploadedPhoto[], updateId?: string): Promise<PhotoRef[]> {
  const refs: PhotoRef[] = [];
  const suffix = updateId ? sha256Hex(updateId).slice(0, 32) : randomUUID();
  for (const p of await checkPhotos(photos)) {
    const storageKey = `mail/${id}/photos/${p.category}-${suffix}.${p.extension}`;
    await deps.storage.put(storageKey, p.data, p.contentType);
    refs.push({ category: p.category, storageKey, contentType: p.contentType });
  }
  return refs;
}

/** A live piece this facility may work on; 404 otherwise (sandbox pieces, and pieces awaiting approval, funding or their send_after, are never fulfilled). */
async function facilityMailRow(deps: Deps, auth: AuthContext, id: string): Promise<MailRow> {
  const row = await loadMailRow(deps.db, id);
  if (
    !row ||
    row.test_mode ||
    row.status === 'pending_approval' ||
    row.status === 'funding_pending' ||
    (row.facility_id !== null && row.facility_id !== auth.facilityId) ||
    heldFromFacility(row)
  ) {
    throw errors.notFound('Outbound mail');
  }
  return row;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

async function toFacilityItem(deps: Deps, row: MailRow, photos: PhotoRow[]) {
  return {
    id: row.id,
    status: row.status,
    mail_class: row.mail_class,
    tracked: isTracked(row.mail_class),
    recipient: mailAddress(row, 'recipient'),
    return_address: mailAddress(row, 'return'),
    page_count: row.page_count,
    color: row.color,
    duplex: row.duplex,
    agent_notes: row.agent_notes,
    document: {
      type: row.document_type,
      content_type: row.document_content_type,
      size_bytes: row.document_size_bytes,
      sha256: row.document_sha256,
    },
    facility_id: row.facility_id,
    printing_started_at: iso(row.printing_started_at),
    submitted_at: iso(row.submitted_at),
    ready_at: iso(row.ready_at),
    mailed_at: iso(row.mailed_at),
    delivered_at: iso(row.delivered_at),
    carrier: row.carrier,
    tracking_number: row.tracking_number,
    dispatch_method: row.dispatch_method,
    error_message: row.error_message,
    fulfillment_photos: await signedPhotos(deps, photos),
    created_at: row.created_at.toISOString(),
  };
}

async function itemOf(deps: Deps, row: MailRow) {
  const photos = await loadPhotos(deps.db, [row.id]);
  return toFacilityItem(deps, row, photos.get(row.id) ?? []);
}

/** The queue, oldest submission first. Without ?status= it is the open work: submitted, ready and mailed. */
export async function listFacilityMail(
  deps: Deps,
  auth: AuthContext,
  q: { status?: string; limit: number; offset: number },
) {
  const statuses = q.status ? [q.status] : ['submitted', 'ready', 'mailed'];
  const where = `test_mode = false AND status = ANY($1::text[]) AND (facility_id = $2 OR facility_id IS NULL) AND ${RELEASED_TO_FACILITY_SQL}`;
  const params = [statuses, auth.facilityId];
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM outbound_mail WHERE ${where}`,
    params,
  );
  const rows = await sqlRows<MailRow>(
    deps.db,
    `SELECT * FROM outbound_mail WHERE ${where} ORDER BY submitted_at NULLS LAST, created_at, id LIMIT ${q.limit} OFFSET ${q.offset}`,
    params,
  );
  const photos = await loadPhotos(
    deps.db,
    rows.map((r) => r.id),
  );
  const items = await Promise.all(rows.map((r) => toFacilityItem(deps, r, photos.get(r.id) ?? [])));
  return { items, pagination: pagination(total, q.limit, q.offset) };
}

export async function getFacilityMail(deps: Deps, auth: AuthContext, id: string) {
  return itemOf(deps, await facilityMailRow(deps, auth, id));
}

export async function facilityDocument(deps: Deps, auth: AuthContext, id: string) {
  const row = await facilityMailRow(deps, auth, id);
  return {
    url: await signedDocumentUrl(deps, row),
    expires_at: new Date(Date.now() + SIGNED_URL_SECONDS * 1000).toISOString(),
    content_type: row.document_content_type,
    filename: row.document_filename,
    page_count: row.page_count,
    color: row.color,
    duplex: row.duplex,
    // Extension: the same proof file the sender saw.
    proof_url: await pieceProofUrl(deps, row),
  };
}

/** A facility step's Idempotency-Key: the workflow Update's id derives from it, so a retried step is applied once. */
export interface FacilityStepOptions {
  idempotencyKey?: string;
}

/** The Update id of one facility step of this caller. */
const stepUpdateId = (auth: AuthContext, update: string, opts: FacilityStepOptions) =>
  updateIdFor(auth, `facility.mail.${update}`, opts.idempotencyKey);

/**
 * Runs one step. Photos uploaded for a refused step are removed again; those of a step
 * that is not confirmed (503) stay, since the workflow may still apply it.
 */
async function step<A>(
  deps: Deps,
  auth: AuthContext,
  row: MailRow,
  update: UpdateDefinition<void, [A]>,
  arg: A,
  opts: FacilityStepOptions,
  uploaded: PhotoRef[] = [],
) {
  try {
    await runMailUpdate(deps, row, update, [arg], { updateId: stepUpdateId(auth, update.name, opts) });
  } catch (err) {
    if (!isWorkflowUnavailable(err))
      await Promise.all(uploaded.map((p) => deps.storage.remove(p.storageKey).catch(() => undefined)));
    if (!(err instanceof MailWorkflowClosed)) throw err;
    const now = (await loadMailRow(deps.db, row.id))!;
    throw mailStateConflict(`The piece is ${now.status}; this step is not possible now.`, { status: now.status });
  }
  return itemOf(deps, (await loadMailRow(deps.db, row.id))!);
}

/** The facility starts printing: from now on the caller can no longer cancel the piece. */
export async function facilityStartPrinting(deps: Deps, auth: AuthContext, id: string, opts: FacilityStepOptions = {}) {
  const row = await facilityMailRow(deps, auth, id);
  return step(deps, auth, row, startPrintingUpdate, { facilityId: auth.facilityId }, opts);
}

export async function facilityPrinted(
  deps: Deps,
  auth: AuthContext,
  id: string,
  photos: { pages: Buffer; envelope: Buffer },
  opts: FacilityStepOptions = {},
) {
  const row = await facilityMailRow(deps, auth, id);
  const refs = await storePhotos(
    deps,
    id,
    [
      { category: 'pages', data: photos.pages },
      { category: 'envelope', data: photos.envelope },
    ],
    stepUpdateId(auth, printedUpdate.name, opts),
  );
  return step(deps, auth, row, printedUpdate, { facilityId: auth.facilityId, photos: refs }, opts, refs);
}

export interface DispatchReport {
  carrier: string;
  tracking_number?: string;
  dispatch_method: DispatchMethod;
  receipt: Buffer;
}

/** Tracking numbers are required for every tracked class (all but first_class). */
export async function facilityDispatched(
  deps: Deps,
  auth: AuthContext,
  id: string,
  d: DispatchReport,
  opts: FacilityStepOptions = {},
) {
  const row = await facilityMailRow(deps, auth, id);
  if (isTracked(row.mail_class) && !d.tracking_number) {
    throw errors.validation([{ path: 'tracking_number', message: `required for ${row.mail_class}` }]);
  }
  const refs = await storePhotos(
    deps,
    id,
    [{ category: 'receipt', data: d.receipt }],
    stepUpdateId(auth, dispatchedUpdate.name, opts),
  );
  return step(
    deps,
    auth,
    row,
    dispatchedUpdate,
    {
      facilityId: auth.facilityId,
      carrier: d.carrier,
      trackingNumber: d.tracking_number ?? null,
      dispatchMethod: d.dispatch_method,
      photos: refs,
    },
    opts,
    refs,
  );
}

export async function facilityDelivered(
  deps: Deps,
  auth: AuthContext,
  id: string,
  proof: Buffer | null,
  opts: FacilityStepOptions = {},
) {
  const row = await facilityMailRow(deps, auth, id);
  const refs = proof
    ? await storePhotos(
        deps,
        id,
        [{ category: 'delivery', data: proof }],
        stepUpdateId(auth, deliveredUpdate.name, opts),
      )
    : [];
  return step(deps, auth, row, deliveredUpdate, { facilityId: auth.facilityId, photos: refs }, opts, refs);
}

/** The facility could not print or dispatch the piece; its debit is refunded. */
export async function facilityFailed(
  deps: Deps,
  auth: AuthContext,
  id: string,
  message: string,
  opts: FacilityStepOptions = {},
) {
  const row = await facilityMailRow(deps, auth, id);
  return step(deps, auth, row, failedUpdate, { facilityId: auth.facilityId, message }, opts);
}

/** The carrier reports that a mailed piece could not be delivered. */
export async function facilityCarrierDeliveryFailed(
  deps: Deps,
  auth: AuthContext,
  id: string,
  message: string | null,
  opts: FacilityStepOptions = {},
) {
  const row = await facilityMailRow(deps, auth, id);
  return step(deps, auth, row, carrierDeliveryFailedUpdate, { facilityId: auth.facilityId, message }, opts);
}
